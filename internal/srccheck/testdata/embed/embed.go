// Package embed is MethodSets' test case: a type that declares two
// methods and embeds a type of its own package and one of another's.
package embed

import "sync"

// Outer declares Own and Close, and embeds inner (Promoted, hidden) and
// sync.Mutex (Lock, TryLock, Unlock).
type Outer struct {
	*inner
	sync.Mutex
}

// Own is declared on Outer.
func (o *Outer) Own() {}

// Close is declared on Outer's value.
func (o Outer) Close() {}

func (o *Outer) private() {}

type inner struct{}

// Promoted is promoted onto Outer.
func (i *inner) Promoted() {}

func (i *inner) hidden() {}

// Reader is an interface: its own methods are its method set.
type Reader interface {
	Read() string
	sync.Locker
}

type unexported struct{ Outer }
