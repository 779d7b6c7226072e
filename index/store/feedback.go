package store

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sync"

	"github.com/toolscout/toolscout/index"
	"github.com/toolscout/toolscout/index/store/format"
	"github.com/toolscout/toolscout/internal/fileio"
)

// What agents ran after a search, kept so that later requests like
// theirs rank those tools higher (search/feedback.go). Each event is one
// line of feedback.log in the set's folder, appended as it happens:
//
//	CRC  SP  JSON  LF
//
// CRC is the CRC-32C of the JSON, 8 hex digits; the JSON is the event
// (FeedbackEvent, the same object a read-only replica writes as a JSON
// line: EncodeFeedbackLine). A kill mid-append leaves a cut last line,
// a flipped byte a line whose checksum fails: either is dropped when the
// log is read, the log rewritten without it (fileio.WriteAtomic) and the
// loss said in Healed. The log is bounded: once it holds twice
// FeedbackOptions.Cap lines it is rewritten with the newest Cap.
//
// Several processes sharing a data dir append whole lines (O_APPEND);
// an event another process appends while this one rewrites the log may
// be lost, which costs one event of many. A log tells what other
// processes did to its file (Changed: a forget, a fold, their appends)
// from what it wrote itself by the file's state (identity, size,
// modification time) as it last left it, so that a serve drops what
// `toolscout feedback --forget` forgot (issue 52, item 4).
const (
	feedbackFile = "feedback.log"
)

// Bounds of an event (package format's): what a replica's file, or a
// hostile agent, can make the log hold.
const (
	// MaxFeedbackRequest is the most bytes of a request kept (cut at a
	// rune boundary).
	MaxFeedbackRequest = format.MaxFeedbackRequest
	// MaxFeedbackCaller is the most bytes of a caller id.
	MaxFeedbackCaller = format.MaxFeedbackCaller
	// MaxFeedbackLine is the longest line a feedback file may hold.
	MaxFeedbackLine = format.MaxFeedbackLine
	// DefaultFeedbackCap is FeedbackOptions.Cap's default.
	DefaultFeedbackCap = 10000
)

// FeedbackEvent is one recorded run: the request of a search, the tool
// the same caller then ran successfully, who and when (format's).
type FeedbackEvent = format.FeedbackEvent

// AnonymousCaller is the one caller of every run made without an
// authenticated identity: anonymous sessions, stateless requests, stdio,
// and requests made with one shared token.
const AnonymousCaller = format.AnonymousCaller

// ErrBadFeedback is wrapped by the errors of an event that is not one.
var ErrBadFeedback = format.ErrBadFeedback

// EncodeFeedbackLine returns ev as one JSON line (with its newline), as
// read-only replicas write events and DecodeFeedbackLines reads them.
func EncodeFeedbackLine(ev FeedbackEvent) ([]byte, error) { return format.EncodeFeedbackLine(ev) }

// DecodeFeedbackLines reads the events a read-only replica wrote
// (format.DecodeFeedbackLines), named name in errors.
func DecodeFeedbackLines(r io.Reader, name string) (events []FeedbackEvent, skipped int, err error) {
	return format.DecodeFeedbackLines(r, name)
}

// writeFeedback writes events in feedback.log's format.
func writeFeedback(w io.Writer, events []FeedbackEvent) error { return format.WriteFeedback(w, events) }

// readFeedback reads a feedback.log (format.ReadFeedback).
func readFeedback(r io.Reader) (events []FeedbackEvent, lines, damaged int, err error) {
	return format.ReadFeedback(r)
}

// FeedbackOptions configures a FeedbackLog.
type FeedbackOptions struct {
	// Cap is the most events kept (DefaultFeedbackCap when zero): older
	// ones go first.
	Cap int
	// ReadOnly reads the log without ever writing it.
	ReadOnly bool
}

// FeedbackLog is the feedback.log of a set folder. It is safe for
// concurrent use.
type FeedbackLog struct {
	path     string // "" in memory: nothing is kept
	cap      int
	readOnly bool

	mu      sync.Mutex
	counted bool // lines holds the file's count
	lines   int  // lines in the file as far as this process knows
	healed  []string
	// left is the file as this process last read or wrote it (nil: no
	// file); stale says that another process changed it since Events.
	left  os.FileInfo
	stale bool
}

// OpenFeedback returns the feedback log of the set folder dir ("" keeps
// nothing). Nothing is read or created until it is used.
func OpenFeedback(dir string, o FeedbackOptions) *FeedbackLog {
	if o.Cap <= 0 {
		o.Cap = DefaultFeedbackCap
	}
	l := &FeedbackLog{cap: o.Cap, readOnly: o.ReadOnly}
	if dir != "" {
		l.path = filepath.Join(dir, feedbackFile)
	}
	return l
}

// Feedback returns the feedback log of the store's folder, read-only
// when the store is.
func (s *Store) Feedback() *FeedbackLog {
	return OpenFeedback(s.dir, FeedbackOptions{ReadOnly: s.readOnly})
}

// Path returns the log's file ("" in memory).
func (l *FeedbackLog) Path() string { return l.path }

// Healed says what Events dropped (damaged lines), one line each.
func (l *FeedbackLog) Healed() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.healed)
}

// Events returns the kept events, oldest first, at most the cap (the
// newest). Damaged lines are dropped and said in Healed; a writable log
// is rewritten without them.
func (l *FeedbackLog) Events() ([]FeedbackEvent, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.stale = false
	return l.eventsLocked()
}

// Changed reports whether another process changed the log since this
// one last read it with Events: forgot it (`toolscout feedback
// --forget`), folded events in, or appended its own. What this process
// records itself does not count. False before the log was read, and in
// memory.
func (l *FeedbackLog) Changed() bool {
	if l.path == "" {
		return false
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.counted {
		return false
	}
	fi, err := os.Stat(l.path)
	if err != nil {
		fi = nil
	}
	return l.stale || !sameState(fi, l.left)
}

// sameState reports whether a and b are one state of one file (nil: no
// file; an empty file is no file, as the first append creates it).
func sameState(a, b os.FileInfo) bool {
	if a == nil || b == nil {
		return (a == nil || a.Size() == 0) && (b == nil || b.Size() == 0)
	}
	return os.SameFile(a, b) && a.Size() == b.Size() && a.ModTime().Equal(b.ModTime())
}

func (l *FeedbackLog) eventsLocked() ([]FeedbackEvent, error) {
	if l.path == "" {
		return nil, nil
	}
	f, err := os.Open(l.path)
	if errors.Is(err, os.ErrNotExist) {
		l.lines, l.counted, l.left = 0, true, nil
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	// Its state before reading: an append while it is read shows as a
	// change, and is read again.
	l.left, _ = f.Stat()
	events, lines, damaged, err := readFeedback(f)
	f.Close()
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", l.path, err)
	}
	l.lines, l.counted = lines, true
	if len(events) > l.cap {
		events = events[len(events)-l.cap:]
	}
	if damaged > 0 {
		what := "left as it is (read-only)"
		if !l.readOnly {
			what = "rewritten without them"
			if err := l.rewriteLocked(events); err != nil {
				what = fmt.Sprintf("could not be rewritten: %v", err)
			}
		}
		l.healed = append(l.healed, fmt.Sprintf("feedback log %s: %d damaged %s (a kill during a write, or a changed byte) dropped; %s", l.path, damaged, plural(damaged, "line"), what))
	}
	return events, nil
}

func plural(n int, noun string) string {
	if n == 1 {
		return noun
	}
	return noun + "s"
}

func (l *FeedbackLog) rewriteLocked(events []FeedbackEvent) error {
	err := fileio.WriteAtomic(l.path, func(w *bufio.Writer) error { return writeFeedback(w, events) })
	if err == nil {
		l.lines = len(events)
		l.left, _ = os.Stat(l.path)
	}
	return err
}

// Record appends ev to the log (ev cleaned: FeedbackEvent.Clean), and
// keeps the log within its cap. A read-only log refuses with
// index.ErrReadOnly; in memory it keeps nothing.
func (l *FeedbackLog) Record(ev FeedbackEvent) error {
	line, err := format.LogLine(ev)
	if err != nil {
		return err
	}
	if l.readOnly {
		return fmt.Errorf("record feedback: %w", index.ErrReadOnly)
	}
	if l.path == "" {
		return nil
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.counted {
		// Not read yet: count what is there, so that the cap holds.
		if _, err := l.eventsLocked(); err != nil {
			return err
		}
	}
	f, err := os.OpenFile(l.path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return err
	}
	st, err := f.Stat()
	if err == nil && !sameState(st, l.left) {
		// Not as this process left it: forgotten (this append made a
		// new file), folded into, or appended to by another process.
		l.stale = true
	}
	// After a kill mid-line the file ends without its newline: this
	// line starts a new one, else both would be lost.
	if err == nil && st.Size() > 0 {
		var last [1]byte
		if r, err := os.Open(l.path); err == nil {
			if _, err := r.ReadAt(last[:], st.Size()-1); err == nil && last[0] != '\n' {
				line = append([]byte{'\n'}, line...)
			}
			r.Close()
		}
	}
	_, err = f.Write(line)
	if err == nil {
		l.left, _ = f.Stat()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("record feedback in %s: %w", l.path, err)
	}
	l.lines++
	if l.lines >= 2*l.cap {
		events, err := l.eventsLocked()
		if err != nil {
			return err
		}
		return l.rewriteLocked(events)
	}
	return nil
}

// Fold adds events (a read-only replica's, DecodeFeedbackLines) to the
// log, leaving out those it already holds (the same request, tool,
// caller and time: a file folded twice counts once) and keeping the
// newest cap, in time order. It returns how many were added.
func (l *FeedbackLog) Fold(events []FeedbackEvent) (int, error) {
	if l.readOnly {
		return 0, fmt.Errorf("fold feedback: %w", index.ErrReadOnly)
	}
	if l.path == "" {
		return 0, nil
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	have, err := l.eventsLocked()
	if err != nil {
		return 0, err
	}
	type key struct {
		req, tool, caller string
		t                 int64
	}
	seen := make(map[key]bool, len(have)+len(events))
	for _, ev := range have {
		seen[key{ev.Request, ev.Tool, ev.Caller, ev.Time.UnixNano()}] = true
	}
	added := 0
	all := have
	for _, ev := range events {
		ev, err := ev.Clean()
		if err != nil {
			return 0, err
		}
		k := key{ev.Request, ev.Tool, ev.Caller, ev.Time.UnixNano()}
		if seen[k] {
			continue
		}
		seen[k] = true
		all = append(all, ev)
		added++
	}
	if added == 0 {
		return 0, nil
	}
	slices.SortStableFunc(all, func(a, b FeedbackEvent) int { return a.Time.Compare(b.Time) })
	if len(all) > l.cap {
		all = all[len(all)-l.cap:]
	}
	return added, l.rewriteLocked(all)
}

// Forget removes every event.
func (l *FeedbackLog) Forget() error {
	if l.readOnly {
		return fmt.Errorf("forget feedback: %w", index.ErrReadOnly)
	}
	if l.path == "" {
		return nil
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if err := os.Remove(l.path); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	l.lines, l.left = 0, nil
	return nil
}
