package server

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// MaxStdioLine bounds one JSON-RPC message on stdio; a longer line is
// answered with an error and skipped, never buffered whole.
const MaxStdioLine = 4 << 20

// JSON-RPC 2.0 error codes for messages that never reach the SDK.
const (
	codeParseError     = -32700
	codeInvalidRequest = -32600
)

// NewStdioTransport returns an MCP transport over newline-delimited
// JSON-RPC on in and out that survives bad input. The go-sdk's own stdio
// transport ends the session on the first line it cannot decode; here a
// filter reads the lines first and answers each bad one as JSON-RPC 2.0
// says, with id null where the id cannot be known: -32700 for a line that
// is not JSON (or not UTF-8, or over MaxStdioLine), -32600 for JSON that
// is not a request, notification or response object (null, a batch, a
// wrong "jsonrpc" version). Good lines pass to the SDK unchanged. The SDK
// writes each message with one Write of a whole line; the filter's replies
// share a lock with those writes, so lines never interleave.
func NewStdioTransport(in io.Reader, out io.Writer, log *slog.Logger) mcp.Transport {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	w := &lockedWriter{w: out}
	pr, pw := io.Pipe()
	go filterLines(in, pw, w, log)
	return &mcp.IOTransport{Reader: pr, Writer: w, MaxLineLength: -1}
}

type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

func (l *lockedWriter) Close() error { return nil }

// filterLines copies the good lines of in to sdk and answers the bad ones
// on out, until in ends.
func filterLines(in io.Reader, sdk *io.PipeWriter, out io.Writer, log *slog.Logger) {
	br := bufio.NewReaderSize(in, 64<<10)
	for {
		line, tooLong, err := readLine(br)
		if len(line) > 0 || tooLong {
			if reply := check(line, tooLong); reply != nil {
				log.Warn("stdio: bad JSON-RPC line answered with an error", "bytes", len(line), "code", reply.Error.Code, "reason", reply.Error.Message)
				data, _ := json.Marshal(reply)
				out.Write(append(data, '\n'))
			} else if _, werr := sdk.Write(append(line, '\n')); werr != nil {
				return // the SDK side closed
			}
		}
		if err != nil {
			sdk.CloseWithError(err) // io.EOF ends the session cleanly
			return
		}
	}
}

// readLine returns the next line without its newline, or tooLong (and no
// bytes) when it is over MaxStdioLine, having skipped it.
func readLine(br *bufio.Reader) ([]byte, bool, error) {
	var buf []byte
	tooLong := false
	for {
		chunk, err := br.ReadSlice('\n')
		if !tooLong {
			if len(buf)+len(chunk) > MaxStdioLine+1 {
				tooLong, buf = true, nil
			} else {
				buf = append(buf, chunk...)
			}
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		return bytes.TrimSpace(buf), tooLong, err
	}
}

type rpcError struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
}

type rpcErrorReply struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Error   rpcError        `json:"error"`
}

// check returns the error reply for a bad line, or nil for a message the
// SDK should see.
func check(line []byte, tooLong bool) *rpcErrorReply {
	reply := func(id json.RawMessage, code int, format string, args ...any) *rpcErrorReply {
		if id == nil {
			id = json.RawMessage("null")
		}
		return &rpcErrorReply{JSONRPC: "2.0", ID: id, Error: rpcError{Code: code, Message: fmt.Sprintf(format, args...)}}
	}
	if tooLong {
		return reply(nil, codeParseError, "Parse error: message over %d bytes", MaxStdioLine)
	}
	if !utf8.Valid(line) {
		return reply(nil, codeParseError, "Parse error: message is not valid UTF-8")
	}
	if !json.Valid(line) {
		return reply(nil, codeParseError, "Parse error: message is not valid JSON")
	}
	if line[0] == '[' {
		return reply(nil, codeInvalidRequest, "Invalid Request: batches are not supported; send one message per line")
	}
	var msg struct {
		JSONRPC *string         `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Method  *string         `json:"method"`
		Result  json.RawMessage `json:"result"`
		Error   json.RawMessage `json:"error"`
	}
	if line[0] != '{' || json.Unmarshal(line, &msg) != nil {
		return reply(nil, codeInvalidRequest, "Invalid Request: not a JSON-RPC 2.0 message object")
	}
	id := msg.ID
	if len(id) > 0 && id[0] != '"' && id[0] != '-' && (id[0] < '0' || id[0] > '9') {
		id = nil // not a string or number: the reply cannot carry it
	}
	if msg.JSONRPC == nil || *msg.JSONRPC != "2.0" {
		return reply(id, codeInvalidRequest, `Invalid Request: "jsonrpc" must be "2.0"`)
	}
	if msg.Method == nil && msg.Result == nil && msg.Error == nil {
		return reply(id, codeInvalidRequest, `Invalid Request: a message has a "method" (request or notification) or a "result" or "error" (response)`)
	}
	if msg.Method != nil && *msg.Method == "" {
		return reply(id, codeInvalidRequest, `Invalid Request: "method" is empty`)
	}
	return nil
}
