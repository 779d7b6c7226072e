package gateway

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolscout/toolscout/index"
	"github.com/toolscout/toolscout/internal/redact"
)

// What an upstream server sends back is redacted (Options.Redactor)
// before it reaches an answer, a log line, a status or the data dir: an
// upstream that echoes the credentials toolscout sent it (by a bug, or to
// fish for them) must not hand them to every caller allowed that server
// (issue 52). Redacted: the errors of connecting, listing and calling
// (Status, Unavailable, Execute, the prompts and resources calls), tool
// results (every content block, structuredContent), the tools listed
// (names, titles, descriptions, schemas, annotations), the server's
// title and instructions, its prompts, resources and their contents,
// progress messages. A tool call's own credentials (the caller's
// Authorization, forwarded or not, and its mapped headers) are redacted
// from that call's answer too (callSecrets).
//
// The cost, with secrets configured: a result is encoded once more and
// searched (redact.Redactor); one without a secret is answered as it
// came. A large result relayed raw from a stdio server (server/relay) is
// searched as bytes, and one that holds a secret is not relayed raw but
// decoded and redacted like the others (lineConn.keepRaw).

// callSecrets returns secrets (the gateway's) with the values a call
// carries on top of the configured ones: the headers sent for its caller
// (callHeaders) and the Authorization of the caller's own request.
func callSecrets(secrets *redact.Redactor, req *mcp.CallToolRequest, sent callHeaderSet) *redact.Redactor {
	var extra []string
	for _, v := range sent.headers {
		extra = append(extra, v)
	}
	if req != nil && req.Extra != nil && req.Extra.Header != nil {
		extra = append(extra, req.Extra.Header.Values("Authorization")...)
	}
	return secrets.With(extra...)
}

// scrubbed returns v with every value secrets knows redacted, by its
// JSON encoding: v itself when that holds none. ok is false when it held
// some and the redacted encoding does not decode (a secret that was the
// digits of a number): drop v then.
func scrubbed[T any](secrets *redact.Redactor, v T) (out T, ok bool) {
	if !secrets.Active() {
		return v, true
	}
	b, err := json.Marshal(v)
	if err != nil {
		return v, true // nothing an answer could carry either
	}
	red, changed := secrets.JSON(b)
	if !changed {
		return v, true
	}
	if err := json.Unmarshal(red, &out); err != nil {
		return out, false
	}
	return out, true
}

// scrubResult returns res redacted (scrubbed); a result that cannot be
// is answered as a tool error saying so.
func scrubResult(secrets *redact.Redactor, t *index.Tool, res *mcp.CallToolResult) *mcp.CallToolResult {
	if res == nil {
		return nil
	}
	out, ok := scrubbed(secrets, res)
	if !ok {
		return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: fmt.Sprintf(
			"%s answered with one of toolscout's configured secrets in its result, which could not be redacted; the result is withheld", t.QualifiedName)}}}
	}
	return out
}

// scrubSpecs returns specs redacted, leaving out (in dropped, with the
// reason) a tool whose name held a secret or whose redacted schemas do
// not decode.
func scrubSpecs(secrets *redact.Redactor, specs []index.ToolSpec) (kept []index.ToolSpec, dropped []string) {
	if !secrets.Active() {
		return specs, nil
	}
	kept = specs[:0:0]
	for _, s := range specs {
		red, ok := scrubbed(secrets, s)
		if !ok || secrets.Contains(s.Name) {
			dropped = append(dropped, fmt.Sprintf("%s: its definition holds one of toolscout's configured secrets", secrets.String(s.Name)))
			continue
		}
		kept = append(kept, red)
	}
	return kept, dropped
}

// scrubList returns the items an upstream listed (prompts, resources,
// templates) redacted, leaving out those that cannot be.
func scrubList[T any](secrets *redact.Redactor, items []T) []T {
	if !secrets.Active() {
		return items
	}
	out := make([]T, 0, len(items))
	for _, it := range items {
		if red, ok := scrubbed(secrets, it); ok {
			out = append(out, red)
		}
	}
	return out
}

// scrubAnswer returns an upstream's answer (a prompt, a resource's
// contents, completions) redacted, or an error when it cannot be.
func scrubAnswer[T any](secrets *redact.Redactor, res *T, err error) (*T, error) {
	if res == nil || err != nil {
		return res, err
	}
	red, ok := scrubbed(secrets, res)
	if !ok {
		return nil, errors.New("the server answered with one of toolscout's configured secrets, which could not be redacted; the answer is withheld")
	}
	return red, nil
}
