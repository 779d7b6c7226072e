package logtest

import (
	"strings"
	"sync"
	"testing"
)

// TestBufferConcurrentWrites: writes from many goroutines all land, whole
// (run with -race: an unlocked buffer fails there, and loses lines).
func TestBufferConcurrentWrites(t *testing.T) {
	var b Buffer
	var wg sync.WaitGroup
	for range 20 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 50 {
				b.Write([]byte("line\n"))
				_ = b.String()
			}
		}()
	}
	wg.Wait()
	if n := strings.Count(b.String(), "line\n"); n != 1000 {
		t.Fatalf("%d lines written, want 1000", n)
	}
}
