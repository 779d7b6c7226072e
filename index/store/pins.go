package store

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/toolscout/toolscout/index/pin"
	"github.com/toolscout/toolscout/index/store/format"
	"github.com/toolscout/toolscout/internal/fileio"
)

// The definitions approved for each upstream tool of a config set (see
// index/pin), kept in the set's folder beside upstreams.bin. serve,
// index and doctor add the tools they see first and the changes they
// hold back; toolscout approve turns changes into approvals, possibly
// while a serve runs: each Update reads, changes and writes the file
// under an exclusive lock (pins.lock, flock), and a serve watches Stamp
// to take approvals in.
//
// Layout of pins.bin:
//
//	"TSPINS01"   magic
//	uint32       CRC-32C of the body (little endian)
//	uint64       length of the body (little endian)
//	body         JSON: {"tools": [{"domain", "tool", "hash", "definition", "approved", "by", "pending"?}...],
//	             "review"?: {"since", "cause", "listed"?}} (pin.Book; under review, an entry
//	             with hash "" has no approved definition, only a pending one)
//
// Each write keeps the previous generation: the file about to be
// replaced is first written whole to pins.bin.prev, then the new one to
// pins.bin, each to a temporary name renamed into place
// (fileio.WriteAtomic), so that at every instant one good copy exists.
// A pins.bin that fails its magic, length, checksum, JSON or
// pin.Book.Validate (a definition that does not match its hash), or
// that is gone while pins.bin.prev is there, is damaged: it is copied to
// pins.bin.damaged and the book is rebuilt from pins.bin.prev when that
// one is whole, else from nothing, and put under review
// (pin.Book.StartReview: a tool it does not know is held, not trusted on
// first sight), said in a warning and in Healed. Damage never approves a
// definition. With neither file there, the book starts empty and every
// tool is pinned on first sight.
const (
	pinsMagic = format.PinsMagic
	pinsFile  = "pins.bin"
	pinsPrev  = pinsFile + ".prev"
	pinsAside = pinsFile + ".damaged"
	pinsLock  = "pins.lock"
	pinsHead  = format.PinsHead
	// pinsLockWait bounds the wait for another process's update (each
	// holds the lock for one read and one write of a small file).
	pinsLockWait = 10 * time.Second
)

// ErrPinsCorrupt is wrapped by the errors for a pins.bin that is not
// whole and unchanged.
var ErrPinsCorrupt = format.ErrPinsCorrupt

// writePins writes b in the pins.bin format (format.WritePins).
func writePins(w io.Writer, b *pin.Book) error { return format.WritePins(w, b) }

// readPins reads a pins.bin (format.ReadPins).
func readPins(r io.Reader) (*pin.Book, error) { return format.ReadPins(r) }

// Pins is the pins file of one config set's folder (pin.Storage), or a
// book in memory for a store without a data dir.
type Pins struct {
	dir string
	log *slog.Logger

	mu     sync.Mutex // one Update of this process at a time
	mem    *pin.Book  // dir == ""
	healed []string
}

var (
	_ pin.Storage = (*Pins)(nil)
	_ pin.Stamper = (*Pins)(nil)
)

// OpenPins returns the pins of the set folder dir, without opening its
// indexes (Store.Pins; a store opened with Options.NoIndexes is how
// toolscout approve reads them beside a running serve). Nothing is read or written before the first Update or
// Read. dir "" keeps them in memory. log gets the warning of a damaged
// file (nil discards it).
func OpenPins(dir string, log *slog.Logger) *Pins {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Pins{dir: dir, log: log}
}

// Pins returns the pins of the store's data dir (in memory without one).
// Each call returns a new handle on the same file; keep one.
func (s *Store) Pins() *Pins {
	return OpenPins(s.dir, s.log)
}

// Path returns the pins file's path ("" in memory).
func (p *Pins) Path() string {
	if p.dir == "" {
		return ""
	}
	return filepath.Join(p.dir, pinsFile)
}

// Update reads the book, lets fn change it and writes it back when fn
// reports a change (whole or not at all), under the set's lock: an
// Update of another process (toolscout approve beside a serve) comes
// before or after, never between. A damaged file is copied aside with a
// warning, and fn gets the book rebuilt from the previous generation, or
// an empty one, under review (see the file's layout above); that book is
// written whatever fn reports.
func (p *Pins) Update(fn func(b *pin.Book) bool) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.dir == "" {
		if p.mem == nil {
			p.mem = &pin.Book{}
		}
		fn(p.mem)
		return nil
	}
	unlock, err := fileio.Lock(filepath.Join(p.dir, pinsLock), pinsLockWait)
	if err != nil {
		return fmt.Errorf("pinned tool definitions: %w", err)
	}
	defer unlock()
	cur, b, err := p.load()
	rebuilt := false
	if errors.Is(err, ErrPinsCorrupt) {
		b, err = p.rebuild(cur, err)
		cur, rebuilt = nil, true
	}
	if err != nil {
		return fmt.Errorf("pinned tool definitions: %w", err)
	}
	if !fn(b) && !rebuilt {
		return nil
	}
	if cur != nil {
		if err := fileio.WriteAtomic(filepath.Join(p.dir, pinsPrev), func(w *bufio.Writer) error { _, err := w.Write(cur); return err }); err != nil {
			return fmt.Errorf("pinned tool definitions: keep the previous generation: %w", err)
		}
	}
	if err := fileio.WriteAtomic(p.Path(), func(w *bufio.Writer) error { return writePins(w, b) }); err != nil {
		return fmt.Errorf("pinned tool definitions: save %s: %w", p.Path(), err)
	}
	return nil
}

// load reads pins.bin: its bytes and book (nil bytes and an empty book
// when neither it nor pins.bin.prev is there). A pins.bin that is gone
// while pins.bin.prev is there is damaged (a hand or a disk that removed
// it; an older toolscout moved a damaged one aside): an error wrapping
// ErrPinsCorrupt. p.mu is held.
func (p *Pins) load() ([]byte, *pin.Book, error) {
	data, err := os.ReadFile(p.Path())
	if errors.Is(err, os.ErrNotExist) {
		if _, perr := os.Stat(filepath.Join(p.dir, pinsPrev)); perr == nil {
			return nil, nil, fmt.Errorf("%w: it is gone, and %s is there", ErrPinsCorrupt, pinsPrev)
		}
		return nil, &pin.Book{}, nil
	}
	if err != nil {
		return nil, nil, err
	}
	b, err := readPins(bytes.NewReader(data))
	if err != nil {
		return data, nil, err
	}
	return data, b, nil
}

// rebuild returns the book to use in place of a damaged pins.bin (its
// bytes bad, nil when it is gone; cause says what is wrong), under
// review: pins.bin.prev's when it is whole, else an empty one. bad is
// copied to pins.bin.damaged first; pins.bin itself is left for the
// caller to replace, so that a crash in between finds the damage again.
// p.mu and the lock are held.
func (p *Pins) rebuild(bad []byte, cause error) (*pin.Book, error) {
	aside := filepath.Join(p.dir, pinsAside)
	if bad != nil {
		if err := fileio.WriteAtomic(aside, func(w *bufio.Writer) error { _, err := w.Write(bad); return err }); err != nil {
			return nil, fmt.Errorf("%v; keeping a copy of it failed: %w", cause, err)
		}
	}
	kept := "kept as " + aside
	if bad == nil {
		kept = "nothing to keep"
	}
	prevPath := filepath.Join(p.dir, pinsPrev)
	data, err := os.ReadFile(prevPath)
	var b *pin.Book
	if err == nil {
		b, err = readPins(bytes.NewReader(data))
	}
	var msg, why string
	if err == nil {
		why = "pins.bin was damaged; rebuilt from its previous generation"
		msg = fmt.Sprintf("pinned tool definitions %s could not be read (%v; %s): using the previous generation %s. An approval or a first sight of its last update may be lost: a tool it does not know is held, not run, until an operator approves it (toolscout approve), and changed definitions stay held", p.Path(), cause, kept, prevPath)
	} else {
		b = &pin.Book{}
		why = "pins.bin was damaged, and no good copy was left"
		prevErr := "none"
		if !errors.Is(err, os.ErrNotExist) {
			prevErr = err.Error()
		}
		msg = fmt.Sprintf("pinned tool definitions %s could not be read (%v; %s), and there is no good previous generation (%s): every upstream tool is held, not run, until an operator reviews and approves it (toolscout approve)", p.Path(), cause, kept, prevErr)
	}
	b.StartReview(why, time.Now())
	p.log.Warn(msg)
	p.healed = append(p.healed, msg)
	return b, nil
}

// Read returns the book without writing anything (an empty one when there
// is no file yet); a damaged file is an error wrapping ErrPinsCorrupt,
// left where it is (the next Update rebuilds the book).
func (p *Pins) Read() (*pin.Book, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.dir == "" {
		if p.mem == nil {
			return &pin.Book{}, nil
		}
		b := *p.mem
		b.Tools = append([]pin.Entry(nil), p.mem.Tools...)
		return &b, nil
	}
	return p.read()
}

// read reads the file; p.mu is held.
func (p *Pins) read() (*pin.Book, error) {
	_, b, err := p.load()
	return b, err
}

// Healed says what Update found damaged and rebuilt, one line each.
func (p *Pins) Healed() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.healed...)
}

// Stamp changes whenever the file does (its size and modification time,
// in nanoseconds: each write is a new file renamed over it). "" when
// there is none.
func (p *Pins) Stamp() string {
	if p.dir == "" {
		return ""
	}
	fi, err := os.Stat(p.Path())
	if err != nil {
		return ""
	}
	return fmt.Sprintf("%d %d", fi.Size(), fi.ModTime().UnixNano())
}
