package server

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// countingBody counts what a handler reads of a request body.
type countingBody struct {
	r    io.Reader
	read int
}

func (c *countingBody) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.read += n
	return n, err
}

func (c *countingBody) Close() error { return nil }

// TestBatchRefusedFromItsFirstBytes: a JSON-RPC batch posted over HTTP,
// with or without a version or session header, is answered 400 with an
// invalid-request error and the batch itself is not read past its first
// bytes (issue 34, defect 5: the go-sdk decoded a 1.5 MB batch whole
// before refusing it, and without a version header answered 200 with
// error code 0). Single requests still pass.
func TestBatchRefusedFromItsFirstBytes(t *testing.T) {
	t.Parallel()
	srv := New(Options{Live: testLive(t, testCatalog, nil)})
	h := srv.HTTPHandler(HTTPOptions{})
	one := `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":` + newProtocolMeta + `}}`
	batch := "  \n[" + strings.TrimSuffix(strings.Repeat(one+",", 1500<<10/len(one)), ",") + "]"
	for _, headers := range []map[string]string{
		{},
		{"Mcp-Protocol-Version": StatelessProtocol},
		{"Mcp-Protocol-Version": "2025-11-25", "Mcp-Session-Id": "no-such-session"},
	} {
		body := &countingBody{r: strings.NewReader(batch)}
		req := httptest.NewRequest(http.MethodPost, "/mcp", nil)
		req.Body = body
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		for k, v := range headers {
			req.Header.Set(k, v)
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		var ans struct {
			Error struct{ Code int } `json:"error"`
		}
		json.Unmarshal(rec.Body.Bytes(), &ans)
		if rec.Code != http.StatusBadRequest || ans.Error.Code != -32600 {
			t.Errorf("headers %v: a %d-byte batch got %d %s, want 400 with code -32600", headers, len(batch), rec.Code, rec.Body.String())
		}
		if body.read > 4096 {
			t.Errorf("headers %v: %d bytes of the %d-byte batch were read before refusing it", headers, body.read, len(batch))
		}
	}
	// One request alone, with leading white space, is served.
	req := httptest.NewRequest(http.MethodPost, "/mcp", strings.NewReader("\n "+one))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Protocol-Version", StatelessProtocol)
	req.Header.Set("Mcp-Method", "tools/list")
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	if rec.Code != http.StatusOK || !strings.Contains(rec.Body.String(), "discover_tools") {
		t.Errorf("a single request got %d %.300s", rec.Code, rec.Body.String())
	}
}

// TestRequestsTheGoSDKMisread: over HTTP, an id that is a number but not
// a 64-bit integer, a routing header given twice, and a request other
// than initialize without a session or a version are answered 400 with
// an invalid-request error saying what is wrong (issue 34, defect 6:
// the go-sdk answered id 1.5 as 1 and a 30-digit id as -2^63, read the
// first copy of a header a proxy may route on the last of, and answered
// a request without a session 200 with error code 0). A string id, an
// integer id and an initialize still pass.
func TestRequestsTheGoSDKMisread(t *testing.T) {
	t.Parallel()
	srv := New(Options{Live: testLive(t, testCatalog, nil)})
	h := srv.HTTPHandler(HTTPOptions{})
	stateless := map[string]string{"Mcp-Protocol-Version": StatelessProtocol, "Mcp-Method": "tools/list"}
	list := func(id string) string {
		return `{"jsonrpc":"2.0","id":` + id + `,"method":"tools/list","params":{"_meta":` + newProtocolMeta + `}}`
	}
	post := func(body string, headers map[string]string, dup string) *httptest.ResponseRecorder {
		req := httptest.NewRequest(http.MethodPost, "/mcp", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		for k, v := range headers {
			req.Header.Set(k, v)
		}
		if dup != "" {
			req.Header.Add(dup, req.Header.Get(dup)+"x")
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		return rec
	}
	for _, tc := range []struct {
		name    string
		body    string
		headers map[string]string
		dup     string
		want    string // in a 400 answer with -32600; "" for a 200
	}{
		{"fractional id", list("1.5"), stateless, "", "id 1.5"},
		{"exponent id", list("1e3"), stateless, "", "id 1e3"},
		{"30-digit id", list("123456789012345678901234567890"), stateless, "", "id 123456789012345678901234567890"},
		{"id in the last place", `{"jsonrpc":"2.0","method":"tools/list","params":{"_meta":` + newProtocolMeta + `},"id":2.5}`, stateless, "", "id 2.5"},
		{"Mcp-Method twice", list("1"), stateless, "Mcp-Method", "Mcp-Method is given 2 times"},
		{"Mcp-Protocol-Version twice", list("1"), stateless, "Mcp-Protocol-Version", "Mcp-Protocol-Version is given 2 times"},
		{"no session, no version", `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`, nil, "", "tools/list without a session"},
		{"integer id", list("9223372036854775807"), stateless, "", ""},
		{"string id", list(`"a-1.5"`), stateless, "", ""},
		{"initialize", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`, nil, "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := post(tc.body, tc.headers, tc.dup)
			if tc.want == "" {
				if rec.Code != http.StatusOK {
					t.Errorf("got %d %.300s, want 200", rec.Code, rec.Body.String())
				}
				return
			}
			var ans struct {
				Error struct {
					Code    int
					Message string
				} `json:"error"`
			}
			json.Unmarshal(rec.Body.Bytes(), &ans)
			if rec.Code != http.StatusBadRequest || ans.Error.Code != -32600 || !strings.Contains(ans.Error.Message, tc.want) {
				t.Errorf("got %d %s, want 400, -32600 and %q", rec.Code, rec.Body.String(), tc.want)
			}
		})
	}
}
