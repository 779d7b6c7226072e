// Package logtest holds what tests need to read a log that goroutines
// write: a gateway's, a server's, a command's.
package logtest

import (
	"bytes"
	"sync"
)

// Buffer is a bytes.Buffer that goroutines may write at once (the
// destination of a test's slog logger); String reads what is written so
// far.
type Buffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *Buffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *Buffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
