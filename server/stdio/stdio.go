package stdio

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"log/slog"
	"strconv"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolscout/toolscout/server/relay"
)

// NewTransport returns an MCP transport over newline-delimited
// JSON-RPC on in and out that no input line can end. The go-sdk's own
// stdio transport ends the session on the first line it cannot decode
// (an id that is an object, 1e400, JSON nested past 1,000 levels, an
// "error" that is not an error object); here a guard reads each line
// first (parseLine), answers a bad request as JSON-RPC 2.0 says, drops a
// bad response, and hands the SDK a clean re-encoding of each good one.
// On the way out it puts every id back exactly as the client sent it,
// answers a call whose id is still in flight, and gives the SDK's code-0
// lifecycle errors a real code (callTable). Blank lines are not messages
// and get no answer. The SDK writes each message with one Write of a whole
// line; the guard's replies share a lock with those writes, so lines never
// interleave.
//
// With a splicer (sp, nil for none), a large relayed result the SDK
// encoded as a placeholder is written as the upstream's bytes
// (relay.Splicer); the session must then run with sp in its context
// (relay.WithSplicer).
func NewTransport(in io.Reader, out io.Writer, log *slog.Logger, sp *relay.Splicer) mcp.Transport {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	w := &stdioWriter{w: out, calls: newCallTable(), splice: sp, log: log}
	pr, pw := io.Pipe()
	go guardLines(in, pw, w, log)
	return &mcp.IOTransport{Reader: pr, Writer: w, MaxLineLength: -1}
}

// stdioWriter writes the SDK's messages and the guard's replies to out,
// one whole line at a time.
type stdioWriter struct {
	mu     sync.Mutex
	w      io.Writer
	calls  *callTable
	splice *relay.Splicer // nil: nothing is spliced
	log    *slog.Logger
}

// Write writes one message of the SDK. A response whose result is a
// placeholder is written with the relayed result in its place.
func (s *stdioWriter) Write(p []byte) (int, error) {
	n := len(p)
	var body *relay.Body
	if s.splice != nil && len(p) > 0 && p[len(p)-1] == '\n' {
		var ok bool
		if body, ok = s.splice.Take(p[:len(p)-1]); ok && body == nil {
			s.log.Warn("stdio: a relayed tool result was released before its answer was written (the call was cancelled or the connection is closing); answered with an error")
			p = append(relay.Released(p[:len(p)-1]), '\n')
		}
	}
	line := s.calls.rewrite(p)
	s.mu.Lock()
	defer s.mu.Unlock()
	var err error
	if body != nil {
		err = s.splice.Write(s.w, line[:len(line)-1], body, "\n")
	} else {
		_, err = s.w.Write(line)
	}
	if err != nil {
		return 0, err
	}
	return n, nil
}

// reply writes one answer of the guard.
func (s *stdioWriter) reply(line []byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.w.Write(line)
}

func (s *stdioWriter) Close() error { return nil }

// guardLines hands the good lines of in to the SDK and answers the bad
// ones on out, until in ends.
func guardLines(in io.Reader, sdk *io.PipeWriter, out *stdioWriter, log *slog.Logger) {
	br := bufio.NewReaderSize(in, 64<<10)
	for {
		line, tooLong, err := readLine(br)
		if len(line) > 0 || tooLong {
			if fwd := guardLine(line, tooLong, out, log); fwd != nil {
				if _, werr := sdk.Write(fwd); werr != nil {
					return // the SDK side closed
				}
			}
		}
		if err != nil {
			sdk.CloseWithError(err) // io.EOF ends the session cleanly
			return
		}
	}
}

// guardLine returns the line to hand the SDK for one input line, or nil
// when it answered or dropped it.
func guardLine(line []byte, tooLong bool, out *stdioWriter, log *slog.Logger) []byte {
	m, lerr := parseLine(line, tooLong)
	if lerr == nil && m.id != nil && !m.isResponse() {
		wire, ok := out.calls.begin(m.id, m.method)
		if !ok {
			lerr = &lineError{code: codeInvalidRequest, id: m.id,
				reason: "Invalid Request: this id is already used by a request in flight; ids must be unique"}
		} else {
			return m.encode(wire)
		}
	}
	if lerr != nil {
		if lerr.silent {
			log.Warn("stdio: bad JSON-RPC response dropped", "bytes", len(line), "reason", lerr.reason)
			return nil
		}
		size := strconv.Itoa(len(line))
		if tooLong {
			size = "over " + strconv.Itoa(MaxStdioLine)
		}
		log.Warn("stdio: bad JSON-RPC line answered with an error", "bytes", size, "code", lerr.code, "reason", lerr.reason)
		out.reply(lerr.reply())
		return nil
	}
	if m.method == "notifications/cancelled" && !out.calls.cancelled(m) {
		log.Debug("stdio: cancellation of no request in flight dropped")
		return nil
	}
	return m.encode(m.id)
}

// readLine returns the next line without its newline, or, when it is over
// MaxStdioLine, tooLong and the line's first maxHead bytes only, having
// skipped the rest: the head names the request to answer.
func readLine(br *bufio.Reader) ([]byte, bool, error) {
	var buf []byte
	tooLong := false
	for {
		chunk, err := br.ReadSlice('\n')
		if !tooLong {
			if len(buf)+len(chunk) > MaxStdioLine+1 {
				tooLong = true
				buf = append(buf, chunk[:min(len(chunk), max(0, maxHead-len(buf)))]...)
				buf = bytes.Clone(buf[:min(len(buf), maxHead)]) // the rest of the 4 MiB goes
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
