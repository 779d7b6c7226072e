package gateway

import (
	"fmt"
	"io"
	"strings"
	"sync"
	"time"
	"unicode/utf8"
)

// A stdio upstream's stderr is not printed (it is not ours to print on),
// but its last stderrTailSize bytes are kept: when the server exits before
// it answers (a missing package, a bad argument, a toolscout refusing to
// run under toolscout), the error says what it wrote instead of the
// protocol's bare "EOF".
const stderrTailSize = 2 << 10

// stderrTail keeps the last bytes written to it. Safe for concurrent use.
type stderrTail struct {
	mu   sync.Mutex
	buf  []byte
	n    int64         // bytes written in all
	done chan struct{} // closed when the server's stderr is at its end
}

// readFrom reads r (the server's stderr) to its end, then closes it.
func (t *stderrTail) readFrom(r io.ReadCloser) {
	io.Copy(t, r)
	r.Close()
	close(t.done)
}

func (t *stderrTail) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.n += int64(len(p))
	if len(p) >= stderrTailSize {
		t.buf = append(t.buf[:0], p[len(p)-stderrTailSize:]...)
		return len(p), nil
	}
	if over := len(t.buf) + len(p) - stderrTailSize; over > 0 {
		t.buf = append(t.buf[:0], t.buf[over:]...)
	}
	t.buf = append(t.buf, p...)
	return len(p), nil
}

// String returns the tail, trimmed, starting at a whole line (or rune)
// when bytes before it were dropped.
func (t *stderrTail) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	s := string(t.buf)
	if t.n > int64(len(t.buf)) {
		if i := strings.IndexByte(s, '\n'); i >= 0 && i < len(s)-1 {
			s = s[i+1:]
		}
		for len(s) > 0 && !utf8.ValidString(s[:min(len(s), 4)]) {
			s = s[1:]
		}
	}
	return strings.TrimSpace(s)
}

// exitedError adds to err, a failure to connect to a stdio server, what
// the server wrote on stderr, waiting up to wait for the server to exit
// and its stderr to be read; a toolscout that refused to run under this
// one is named as such.
func (t *commandTransport) exitedError(err error, wait time.Duration) error {
	if t.stderr == nil {
		return err
	}
	select {
	case <-t.stderr.done:
	case <-time.After(wait):
	}
	tail := t.stderr.String()
	if tail == "" {
		return err
	}
	if strings.Contains(tail, DepthEnv+"=") {
		return fmt.Errorf("%w: the server is a toolscout, which does not start stdio servers under toolscout; it said: %s", err, tail)
	}
	return fmt.Errorf("%w; the server wrote on stderr: %s", err, tail)
}
