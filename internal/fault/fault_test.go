package fault

import (
	"errors"
	"io"
	"testing"
	"time"
)

// TestBoundedGivesUp: a step that never answers is given up on after its
// timeout as damage, and cleaned up after if it ever returns.
func TestBoundedGivesUp(t *testing.T) {
	release, cleaned := make(chan struct{}), make(chan struct{})
	start := time.Now()
	err := Bounded("open something", 50*time.Millisecond, func() { close(cleaned) }, func() error {
		<-release
		return nil
	})
	if !errors.Is(err, ErrDamaged) || time.Since(start) > 5*time.Second {
		t.Fatalf("Bounded on a step that hangs = %v after %s, want ErrDamaged after 50ms", err, time.Since(start))
	}
	close(release)
	select {
	case <-cleaned:
	case <-time.After(5 * time.Second):
		t.Fatal("the step returned late and was not cleaned up after")
	}
	if err := Bounded("quick", time.Minute, nil, func() error { return io.EOF }); err != io.EOF {
		t.Errorf("Bounded on a quick step = %v, want its own error", err)
	}
}
