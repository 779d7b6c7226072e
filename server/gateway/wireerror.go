package gateway

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"github.com/toolscout/toolscout/internal/redact"
)

// An upstream that answers a tools/call with a JSON-RPC error (not a
// result with isError) refuses the request itself: -32021 for a client
// that did not declare a capability the tool needs (SEP-2575), -32602 for
// a retry whose requestState fails the server's integrity check
// (SEP-2322), ... A gateway that is to be transparent passes that error
// back as it is, code and data included, for the client to act on: a
// tool result in its place would read as the tool having run.

// refusal is an upstream's JSON-RPC error answer to a call.
type refusal struct {
	domain string
	wire   *jsonrpc.Error
}

// Error reads as the errors of a call did before refusals were kept
// apart: the server, then what it said.
func (e *refusal) Error() string { return fmt.Sprintf("server %q: %v", e.domain, e.wire) }

func (e *refusal) Unwrap() error { return e.wire }

// refused returns err as a refusal of domain's when the upstream answered
// with a JSON-RPC error, nil otherwise.
func refused(domain string, err error) error {
	var w *jsonrpc.Error
	if !errors.As(err, &w) {
		return nil
	}
	return &refusal{domain: domain, wire: w}
}

// redacted returns the refusal with the secrets of secrets replaced in
// its message and data.
func (e *refusal) redacted(secrets *redact.Redactor) *refusal {
	if !secrets.Active() {
		return e
	}
	w := *e.wire
	w.Message = secrets.String(w.Message)
	if clean, changed := secrets.JSON(w.Data); changed {
		w.Data = nil // a secret that was a number's digits leaves no valid JSON
		if json.Valid(clean) {
			w.Data = clean
		}
	}
	return &refusal{domain: e.domain, wire: &w}
}

// WireError returns the JSON-RPC error an upstream answered a call with,
// as it sent it (but for the secrets toolscout knows), when err is one
// (an error of Execute's); nil when the call failed otherwise (timeout,
// connection lost, ...), which is toolscout's to word.
func WireError(err error) *jsonrpc.Error {
	var r *refusal
	if !errors.As(err, &r) {
		return nil
	}
	return r.wire
}
