// Package fault turns what a library does on a damaged file (a panic, a
// fault on a mapped page, a step that never answers) into an error.
//
// Place in the flow: below the indexes. index/keyword opens Bleve through
// [Bounded], index/vector decodes chromem-go's files through [Guard];
// both answer [ErrDamaged] (re-exported as index.ErrDamaged), which the
// store heals by rebuilding the damaged part.
package fault

import (
	"errors"
	"fmt"
	"runtime/debug"
	"sync"
	"time"
)

// ErrDamaged means an index on disk could not be read. Stores heal it by
// rebuilding the damaged part from the catalog; searches that meet it
// answer with this error instead of crashing.
var ErrDamaged = errors.New("index damaged")

// Guard runs f and turns a panic inside the index libraries (zapx panics
// on a garbage segment) into an error wrapping ErrDamaged.
func Guard(what string, f func() error) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("%w: %s: %v", ErrDamaged, what, r)
		}
	}()
	return f()
}

// Bounded runs f in a goroutine of its own, where a panic or a fault on a
// mapped file (debug.SetPanicOnFault) is an error wrapping ErrDamaged,
// and waits for it at most timeout: then it answers an error wrapping
// ErrDamaged and leaves f running, late (run when f returns after all)
// cleaning up after it. A goroutine left running is the price of never
// waiting forever on a file that makes a library loop.
func Bounded(what string, timeout time.Duration, late func(), f func() error) error {
	done := make(chan error, 1)
	var mu sync.Mutex
	gaveUp := false
	go func() {
		debug.SetPanicOnFault(true) // this goroutine's alone, and it ends here
		err := Guard(what, f)
		mu.Lock()
		defer mu.Unlock()
		if gaveUp && late != nil {
			late()
		}
		done <- err
	}()
	t := time.NewTimer(timeout)
	defer t.Stop()
	select {
	case err := <-done:
		return err
	case <-t.C:
		mu.Lock()
		defer mu.Unlock()
		select {
		case err := <-done: // finished while the timer fired
			return err
		default:
		}
		gaveUp = true
		return fmt.Errorf("%w: %s: no answer within %s", ErrDamaged, what, timeout)
	}
}
