package gateway

import (
	"encoding/json"
	"log/slog"
	"time"

	txt "github.com/toolscout/toolscout/internal/text"
)

// Many stdio servers print a banner or log lines on stdout. The SDK's
// transport ends the session on the first line that is not a JSON-RPC
// message, and the server was restarted again and again, its tools never
// listed. frameGuard skips such lines instead (isJSONRPC) and logs them
// through a noiseLog.

// noiseCheckMax is the longest line isJSONRPC parses: a longer line is a
// message, not a banner, and checking its first byte is enough (parsing a
// 20 MB result once more costs about 80 ms).
const noiseCheckMax = 1 << 20

// isJSONRPC reports whether line, one line of a server's stdout without
// surrounding whitespace, can be a JSON-RPC message: an object with
// "jsonrpc": "2.0", or an array (a batch, which the SDK judges).
func isJSONRPC(line []byte) bool {
	if len(line) == 0 || line[0] != '{' && line[0] != '[' {
		return false
	}
	if len(line) > noiseCheckMax {
		return true
	}
	if line[0] == '[' {
		return json.Valid(line)
	}
	var m struct {
		Version string `json:"jsonrpc"`
	}
	return json.Unmarshal(line, &m) == nil && m.Version == "2.0"
}

// noisePerSecond bounds how many skipped lines of one session are logged
// each second; the others are counted, and the count is logged with the
// next line logged.
const noisePerSecond = 10

// noiseLog logs the lines a server prints on stdout that are not
// JSON-RPC, at most noisePerSecond a second. It is used by one reader
// goroutine: it needs no lock.
type noiseLog struct {
	log      *slog.Logger
	window   time.Time // start of the current second
	logged   int       // lines logged in it
	unlogged int       // lines skipped without a log since the last log
}

// skipped records that line was skipped.
func (n *noiseLog) skipped(line []byte) {
	if n == nil || n.log == nil {
		return
	}
	now := time.Now()
	if now.Sub(n.window) >= time.Second {
		n.window, n.logged = now, 0
	}
	if n.logged >= noisePerSecond {
		n.unlogged++
		return
	}
	n.logged++
	attrs := []any{"line", txt.Quote(string(line[:min(len(line), 1<<10)]), 200), "bytes", len(line)}
	if n.unlogged > 0 {
		attrs = append(attrs, "unlogged_before", n.unlogged)
		n.unlogged = 0
	}
	n.log.Warn("upstream printed a line on stdout that is not JSON-RPC; skipped", attrs...)
}
