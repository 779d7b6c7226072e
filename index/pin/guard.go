package pin

import (
	"time"

	"github.com/toolscout/toolscout/index"
)

// Storage keeps a Book: Update reads it, lets fn change it and, when fn
// reports a change, writes it back, all as one step that no other
// process's Update interleaves with (index/store's Pins).
type Storage interface {
	Update(fn func(b *Book) (changed bool)) error
}

// Stamper is a Storage whose book can change from outside (toolscout
// approve in another process): Stamp changes when it did.
type Stamper interface {
	Stamp() string
}

// Guard checks each listing of an upstream server against the book in
// its Storage: the Pinner that server/gateway asks.
type Guard struct {
	st  Storage
	now func() time.Time
}

// NewGuard returns a guard over st.
func NewGuard(st Storage) *Guard { return &Guard{st: st, now: time.Now} }

// Pin checks what domain's server listed (Book.Check) and saves what
// changed in the book. On an error nothing is to be served: the book
// could not be read or written, and a tool it cannot check is not
// trusted.
func (g *Guard) Pin(domain string, listed []index.ToolSpec) (Result, error) {
	var res Result
	err := g.st.Update(func(b *Book) bool {
		res = b.Check(domain, listed, g.now())
		return res.Changed
	})
	if err != nil {
		return Result{}, err
	}
	return res, nil
}

// Stamp returns the storage's stamp, or "" when the book cannot change
// from outside.
func (g *Guard) Stamp() string {
	if s, ok := g.st.(Stamper); ok {
		return s.Stamp()
	}
	return ""
}
