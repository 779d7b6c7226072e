package redact

import (
	"bytes"
	"cmp"
	"encoding/base64"
	"encoding/json"
	"net/url"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"unicode/utf8"
)

// Marker replaces every secret value found.
const Marker = "[redacted]"

// MinLen is the length in bytes of the shortest value a Redactor looks
// for: a shorter one (a 4-digit PIN, "true") would cut ordinary words
// out of everything written, and is ignored.
const MinLen = 6

// A Redactor replaces the secret values it was given with Marker. It is
// safe for concurrent use, and values may be added while it is used; the
// nil *Redactor knows no value and changes nothing. Looking for k values
// in a text costs k substring searches (strings.Contains: about 0.25 ms
// a MiB each on an AMD EPYC core, BenchmarkString; the forms of a value
// that hold another, "Bearer X" beside X, are not looked for apart); a
// text without any is returned as it is, without copying.
type Redactor struct {
	mu     sync.Mutex // one Add at a time
	values atomic.Pointer[values]
}

// values is one immutable set of secrets, each form longest first, so
// that a value is replaced whole before a shorter one inside it (the
// credentials of "Bearer TOKEN") is looked for.
type values struct {
	plain []string // as written
	json  []string // as they read inside a JSON string (escaped, HTML-escaped)
	// scan and scanJSON are the values of plain and json that hold no
	// other: a text holds one of plain (json) only if it holds one of
	// these, which are fewer to look for ("Bearer X" holds X).
	scan, scanJSON []string
}

// New returns a Redactor that knows values (Add).
func New(values ...string) *Redactor {
	r := &Redactor{}
	r.Add(values...)
	return r
}

// Add adds secret values: each is looked for trimmed of spaces, and so
// are the forms it is commonly echoed in: for an HTTP credential
// "SCHEME CREDENTIALS" (an Authorization header's value), CREDENTIALS
// alone, and for Basic, the decoded "user:password" and the password;
// each of these URL-query-escaped. Forms shorter than MinLen bytes are
// left out.
func (r *Redactor) Add(secrets ...string) {
	if r == nil {
		return
	}
	var add []string
	for _, s := range secrets {
		add = append(add, forms(s)...)
	}
	if len(add) == 0 {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.values.Store(r.values.Load().with(add))
}

// With returns a Redactor that knows r's values and secrets (Add), for
// values that are secret for one request only (a caller's own
// credential); r itself is unchanged. It returns r when secrets add no
// form that r would not find already.
func (r *Redactor) With(secrets ...string) *Redactor {
	vs := r.load()
	var add []string
	for _, s := range secrets {
		for _, f := range forms(s) {
			// A form holding a known value is found through it
			// (a caller's "Bearer TOKEN" through its token): a call
			// of a known caller makes no new set.
			if vs == nil || !slices.ContainsFunc(vs.scan, func(v string) bool { return strings.Contains(f, v) }) {
				add = append(add, f)
			}
		}
	}
	if len(add) == 0 {
		return r
	}
	out := &Redactor{}
	out.values.Store(vs.with(add))
	return out
}

// Active reports whether r knows any value: without one, nothing needs
// scanning.
func (r *Redactor) Active() bool { return r.load() != nil }

func (r *Redactor) load() *values {
	if r == nil {
		return nil
	}
	return r.values.Load()
}

// forms returns the forms of secret that are looked for (Add).
func forms(secret string) []string {
	var out []string
	add := func(s string) {
		s = strings.TrimSpace(s)
		if len(s) >= MinLen && !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	secret = strings.TrimSpace(secret)
	add(secret)
	if scheme, cred, ok := strings.Cut(secret, " "); ok && isToken(scheme) {
		cred = strings.TrimSpace(cred)
		add(cred)
		if strings.EqualFold(scheme, "Basic") {
			if dec, err := base64.StdEncoding.DecodeString(cred); err == nil && utf8.Valid(dec) {
				add(string(dec))
				if _, pass, ok := strings.Cut(string(dec), ":"); ok {
					add(pass)
				}
			}
		}
	}
	for _, s := range slices.Clone(out) {
		add(url.QueryEscape(s))
	}
	return out
}

// isToken reports whether s is an HTTP token (RFC 9110 §5.6.2): an
// authentication scheme.
func isToken(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if !IsTokenChar(s[i]) {
			return false
		}
	}
	return true
}

// IsTokenChar reports whether c may appear in an HTTP token (RFC 9110
// §5.6.2: tchar).
func IsTokenChar(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0
}

// with returns the set of vs's values and add (vs may be nil).
func (vs *values) with(add []string) *values {
	var plain []string
	if vs != nil {
		plain = slices.Clone(vs.plain)
	}
	for _, s := range add {
		if !slices.Contains(plain, s) {
			plain = append(plain, s)
		}
	}
	longestFirst := func(a, b string) int {
		return cmp.Or(cmp.Compare(len(b), len(a)), strings.Compare(a, b))
	}
	slices.SortFunc(plain, longestFirst)
	var js []string
	for _, s := range plain {
		for _, e := range jsonForms(s) {
			if !slices.Contains(js, e) {
				js = append(js, e)
			}
		}
	}
	slices.SortFunc(js, longestFirst)
	scan := minimal(plain)
	var scanJSON []string // the escaped forms that differ: the others are in scan
	for _, e := range minimal(js) {
		if !slices.Contains(scan, e) {
			scanJSON = append(scanJSON, e)
		}
	}
	return &values{plain: plain, json: js, scan: scan, scanJSON: scanJSON}
}

// minimal returns the strings of ss that hold no other of ss.
func minimal(ss []string) []string {
	var out []string
	for i, s := range ss {
		if !slices.ContainsFunc(ss, func(o string) bool { return o != s && strings.Contains(s, o) }) {
			out = append(out, ss[i])
		}
	}
	return out
}

// jsonForms returns s as it reads inside a JSON string, as encoders
// write it: escaped, and escaped with <, > and & as \u003c... (Go's
// default).
func jsonForms(s string) []string {
	var out []string
	for _, html := range []bool{false, true} {
		var buf bytes.Buffer
		enc := json.NewEncoder(&buf)
		enc.SetEscapeHTML(html)
		if enc.Encode(s) != nil {
			continue
		}
		e := strings.TrimSuffix(buf.String(), "\n")
		e = e[1 : len(e)-1]
		if !slices.Contains(out, e) {
			out = append(out, e)
		}
	}
	return out
}

// Contains reports whether s holds a value r knows.
func (r *Redactor) Contains(s string) bool {
	vs := r.load()
	if vs == nil {
		return false
	}
	for _, v := range vs.scan {
		if strings.Contains(s, v) {
			return true
		}
	}
	return false
}

// String returns s with every value r knows replaced by Marker (s itself
// when it holds none).
func (r *Redactor) String(s string) string {
	vs := r.load()
	if vs == nil || !r.Contains(s) {
		return s
	}
	for _, v := range vs.plain {
		if strings.Contains(s, v) {
			s = strings.ReplaceAll(s, v, Marker)
		}
	}
	return s
}

// ContainsJSON reports whether the JSON text b holds a value r knows,
// as written or escaped as a JSON string.
func (r *Redactor) ContainsJSON(b []byte) bool {
	vs := r.load()
	if vs == nil {
		return false
	}
	for _, v := range vs.scan {
		if bytes.Contains(b, []byte(v)) {
			return true
		}
	}
	for _, v := range vs.scanJSON {
		if bytes.Contains(b, []byte(v)) {
			return true
		}
	}
	return false
}

// JSON returns the JSON text b with every value r knows, escaped as in a
// JSON string, replaced by Marker, and whether it replaced any (b itself
// when not). A value found inside a string leaves it a valid string;
// one that is a number's digits does not, so check the result when
// values may be numbers (json.Valid).
func (r *Redactor) JSON(b []byte) ([]byte, bool) {
	vs := r.load()
	if vs == nil || !r.ContainsJSON(b) {
		return b, false
	}
	changed := false
	for _, v := range vs.json {
		if bytes.Contains(b, []byte(v)) {
			b = bytes.ReplaceAll(b, []byte(v), []byte(Marker))
			changed = true
		}
	}
	return b, changed
}

// Any returns v, a decoded JSON value (map[string]any, []any, string,
// numbers, bools, nil), with every string (and object key) redacted; v
// itself when nothing changed, else a copy of the parts that did.
func (r *Redactor) Any(v any) any {
	if !r.Active() {
		return v
	}
	out, _ := r.anyValue(v)
	return out
}

func (r *Redactor) anyValue(v any) (any, bool) {
	switch v := v.(type) {
	case string:
		s := r.String(v)
		return s, s != v
	case []any:
		var out []any
		for i, e := range v {
			re, changed := r.anyValue(e)
			if changed && out == nil {
				out = slices.Clone(v)
			}
			if out != nil {
				out[i] = re
			}
		}
		if out == nil {
			return v, false
		}
		return out, true
	case map[string]any:
		changed := false
		red := map[string]any{}
		for k, e := range v {
			re, c := r.anyValue(e)
			rk := r.String(k)
			if c || rk != k {
				changed = true
			}
			red[rk] = re
		}
		if !changed {
			return v, false
		}
		return red, true
	case json.RawMessage:
		b, changed := r.JSON(v)
		return json.RawMessage(b), changed
	}
	return v, false
}

// Error returns err with its message redacted: err itself when the
// message holds no value r knows, else an error reading the redacted
// message that wraps err (errors.Is and errors.As still see err's
// chain; the errors in it keep their own messages, so print the
// returned error, not one taken out of it).
func (r *Redactor) Error(err error) error {
	if err == nil || !r.Active() {
		return err
	}
	msg := err.Error()
	red := r.String(msg)
	if red == msg {
		return err
	}
	return &redactedError{msg: red, err: err}
}

// redactedError reads as msg and wraps err.
type redactedError struct {
	msg string
	err error
}

func (e *redactedError) Error() string { return e.msg }
func (e *redactedError) Unwrap() error { return e.err }
