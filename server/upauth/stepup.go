package upauth

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"
)

// MaxStepUps is how many sign-ins toolscout auth login makes for the
// same recorded challenge (the same scopes asked again) before it
// stops: a server that keeps answering 403 insufficient_scope to a token
// that carries what it asked for will not be satisfied by another
// sign-in (an account not allowed the scope, a misconfigured server),
// and each sign-in sends the user to the browser. With the first
// sign-in, at most 1+MaxStepUps authorization requests for one scope
// set. `toolscout auth logout SERVER` clears the count.
const MaxStepUps = 2

// Challenge is what an upstream's refusal of its token (a 401 after the
// refresh, a 403 insufficient_scope) asked for, recorded by the gateway
// for the next `toolscout auth login`: no secret, only the status, the
// OAuth error code, the scopes (RFC 6750 §3) and the protected resource
// metadata URL (RFC 9728 §5.1).
type Challenge struct {
	Status           int       `json:"status"`
	Error            string    `json:"error,omitempty"`
	Scopes           []string  `json:"scopes,omitempty"`
	ResourceMetadata string    `json:"resource_metadata,omitempty"`
	At               time.Time `json:"at,omitzero"`
	// SignIns counts the sign-ins already made for these scopes (the
	// entry's StepUp): toolscout auth login stops at MaxStepUps.
	SignIns int `json:"sign_ins,omitempty"`
}

// StepUp is what a sign-in made for a recorded challenge keeps of it:
// the challenged scopes and how many sign-ins were made for them.
type StepUp struct {
	Scopes  []string `json:"scopes,omitempty"`
	SignIns int      `json:"sign_ins"`
}

// Exhausted reports whether c's scopes were signed in for MaxStepUps
// times already.
func (c *Challenge) Exhausted() bool { return c != nil && c.SignIns >= MaxStepUps }

// Challenged records the upstream's refusal of token (status 401 or
// 403, the OAuth error code, the challenged scopes and resource
// metadata URL; none of them a secret: the gateway keeps only what
// holds nothing it sent) in the credentials file, for the next
// toolscout auth login, and returns the error that makes the upstream
// need a sign-in, saying which scopes and the command. A challenge of
// the same scopes as the one recorded keeps its count of sign-ins.
func (s *Source) Challenged(ctx context.Context, token string, status int, errCode string, scopes []string, resourceMetadata string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	scopes = slices.Compact(slices.Sorted(slices.Values(scopes)))
	var rec *Challenge
	err := s.store.modify(s.server, lockWait, func(e *Entry) (*Entry, error) {
		if e == nil || e.AccessToken != token {
			return nil, nil // signed in again meanwhile: that sign-in is tried first
		}
		c := &Challenge{Status: status, Error: errCode, Scopes: scopes, ResourceMetadata: resourceMetadata, At: time.Now().UTC()}
		if p := e.StepUp; p != nil && slices.Equal(p.Scopes, scopes) {
			c.SignIns = p.SignIns
		}
		n := *e
		n.Challenge, rec = c, c
		return &n, nil
	})
	if rec == nil {
		if err != nil {
			return s.signIn(fmt.Sprintf("it refused the token (HTTP %d) and the challenge could not be recorded: %v", status, err))
		}
		return s.signIn(fmt.Sprintf("it refused the token (HTTP %d)", status))
	}
	if rec.Exhausted() {
		return limitError{fmt.Errorf("%w: %s", ErrSignIn, rec.why())}
	}
	return s.signIn(rec.why())
}

// limitError is the error of an upstream whose challenge was signed in
// for MaxStepUps times: no "sign in again" advice (Login refuses it).
type limitError struct{ error }

func (e limitError) Unwrap() error { return e.error }

// StepUpLimit marks the error for the gateway's wording.
func (limitError) StepUpLimit() bool { return true }

// String says what c asks for, without a secret: for auth status and
// doctor.
func (c *Challenge) String() string { return c.why() }

// why says what c asks for, for the upstream's unavailable message.
func (c *Challenge) why() string {
	var b strings.Builder
	if c.Error == "insufficient_scope" {
		b.WriteString("its token lacks a scope the server asks for")
	} else {
		fmt.Fprintf(&b, "it refused the token (HTTP %d", c.Status)
		if c.Error != "" {
			b.WriteString(", " + c.Error)
		}
		b.WriteString(")")
	}
	if len(c.Scopes) > 0 {
		b.WriteString(" (scopes " + strings.Join(c.Scopes, " ") + ")")
	}
	if c.Exhausted() {
		fmt.Fprintf(&b, ", still after %d sign-ins for these scopes: toolscout auth login will not ask for them again (the account may not be allowed them; ask the server's administrator, then toolscout auth logout and login to start over)", c.SignIns)
	}
	return b.String()
}

// union returns the scopes of every list, each once, in first-seen order.
func union(lists ...[]string) []string {
	var out []string
	for _, l := range lists {
		for _, s := range l {
			if s != "" && !slices.Contains(out, s) {
				out = append(out, s)
			}
		}
	}
	return out
}
