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
