package store

import (
	"bufio"
	"bytes"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/toolscout/toolscout/index"
	"github.com/toolscout/toolscout/internal/checksum"
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
	// feedbackVersion marks an event line; a line without it is not an
	// event (a log record beside them on stderr).
	feedbackVersion = 1
)

// Bounds of an event: what a replica's file, or a hostile agent, can
// make the log hold.
const (
	// MaxFeedbackRequest is the most bytes of a request kept (cut at a
	// rune boundary).
	MaxFeedbackRequest = 1000
	// MaxFeedbackCaller is the most bytes of a caller id.
	MaxFeedbackCaller = 200
	// MaxFeedbackLine is the longest line a feedback file may hold.
	MaxFeedbackLine = 16 << 10
	// DefaultFeedbackCap is FeedbackOptions.Cap's default.
	DefaultFeedbackCap = 10000
)

// FeedbackEvent is one recorded run: the request of a search, the tool
// the same caller then ran successfully, who and when.
type FeedbackEvent struct {
	Request string `json:"request"`
	// Tool is the tool's qualified name.
	Tool string `json:"tool"`
	// Caller identifies who ran it: "user:ID" for an authenticated
	// identity, else AnonymousCaller; the ranking counts distinct
	// callers (CountedCaller).
	Caller string    `json:"caller"`
	Time   time.Time `json:"time"`
}

// AnonymousCaller is the one caller of every run made without an
// authenticated identity: anonymous sessions, stateless requests, stdio,
// and requests made with one shared token.
const AnonymousCaller = "local"

// CountedCaller returns the caller ev counts for among distinct callers:
// its Caller, except that an MCP session ("session:ID", which servers
// recorded before issue 52) is no identity (one client opens as many as
// it likes), so such events count as AnonymousCaller's.
func (ev FeedbackEvent) CountedCaller() string {
	if strings.HasPrefix(ev.Caller, "session:") {
		return AnonymousCaller
	}
	return ev.Caller
}

// feedbackLine is an event as a line: FeedbackEvent with the version
// that marks it.
type feedbackLine struct {
	Version int `json:"toolscout_feedback"`
	FeedbackEvent
}

var toolNameRE = regexp.MustCompile(`^[a-zA-Z0-9_-]{1,64}$`)

// ErrBadFeedback is wrapped by the errors of an event that is not one.
var ErrBadFeedback = errors.New("not a valid feedback event")

// Clean bounds ev (the request and caller cut to their limits, spaces
// trimmed, the time in UTC) and checks it: a request, a tool name as
// qualified names are spelt, a time.
func (ev FeedbackEvent) Clean() (FeedbackEvent, error) {
	ev.Request = cut(strings.TrimSpace(strings.ToValidUTF8(ev.Request, "")), MaxFeedbackRequest)
	ev.Caller = cut(strings.TrimSpace(strings.ToValidUTF8(ev.Caller, "")), MaxFeedbackCaller)
	switch {
	case ev.Request == "":
		return ev, fmt.Errorf("%w: empty request", ErrBadFeedback)
	case !toolNameRE.MatchString(ev.Tool):
		return ev, fmt.Errorf("%w: tool %q is not a qualified tool name ([a-zA-Z0-9_-], 1 to 64)", ErrBadFeedback, cut(ev.Tool, 80))
	case ev.Time.IsZero():
		return ev, fmt.Errorf("%w: no time", ErrBadFeedback)
	}
	ev.Time = ev.Time.UTC()
	if y := ev.Time.Year(); y < 0 || y > 9999 {
		// JSON reads "0000-01-01T00:00:00+01:00", whose year in UTC is
		// -1: an event that could never be written again (a fold of the
		// replicas' lines would fail on it).
		return ev, fmt.Errorf("%w: time %s is outside the years 0 to 9999", ErrBadFeedback, ev.Time)
	}
	return ev, nil
}

// cut returns s cut to at most n bytes at a rune boundary.
func cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// EncodeFeedbackLine returns ev as one JSON line (with its newline), as
// read-only replicas write events and DecodeFeedbackLines reads them.
func EncodeFeedbackLine(ev FeedbackEvent) ([]byte, error) {
	ev, err := ev.Clean()
	if err != nil {
		return nil, err
	}
	b, err := json.Marshal(feedbackLine{Version: feedbackVersion, FeedbackEvent: ev})
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}

// isEventLine reports whether a line means to be an event: a JSON object
// that names the marker key. Other lines (log records gathered from the
// same stderr) are not events.
func isEventLine(line []byte) bool {
	return len(line) > 0 && line[0] == '{' && bytes.Contains(line, []byte(`"toolscout_feedback"`))
}

// decodeEvent parses one event line.
func decodeEvent(line []byte) (FeedbackEvent, error) {
	var l feedbackLine
	dec := json.NewDecoder(bytes.NewReader(line))
	if err := dec.Decode(&l); err != nil {
		return FeedbackEvent{}, fmt.Errorf("%w: %v", ErrBadFeedback, err)
	}
	if dec.More() {
		return FeedbackEvent{}, fmt.Errorf("%w: more after the JSON object", ErrBadFeedback)
	}
	if l.Version != feedbackVersion {
		return FeedbackEvent{}, fmt.Errorf("%w: toolscout_feedback %d: this toolscout reads version %d", ErrBadFeedback, l.Version, feedbackVersion)
	}
	return l.FeedbackEvent.Clean()
}

// DecodeFeedbackLines reads the events a read-only replica wrote
// (EncodeFeedbackLine), named name in errors. Lines that are not events
// (log records on the same stderr, blank lines) are skipped and counted;
// a line that means to be an event and is not one (cut, bad JSON, no
// tool, longer than MaxFeedbackLine) is an error naming the file and the
// line.
func DecodeFeedbackLines(r io.Reader, name string) (events []FeedbackEvent, skipped int, err error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 4096), MaxFeedbackLine)
	n := 0
	for sc.Scan() {
		n++
		line := bytes.TrimSpace(sc.Bytes())
		if !isEventLine(line) {
			if len(line) > 0 {
				skipped++
			}
			continue
		}
		ev, err := decodeEvent(line)
		if err != nil {
			return nil, skipped, fmt.Errorf("%s:%d: %w", name, n, err)
		}
		events = append(events, ev)
	}
	if err := sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			return nil, skipped, fmt.Errorf("%s:%d: %w: line longer than %d bytes", name, n+1, ErrBadFeedback, MaxFeedbackLine)
		}
		return nil, skipped, fmt.Errorf("%s: %w", name, err)
	}
	return events, skipped, nil
}

// writeFeedback writes events in feedback.log's format.
func writeFeedback(w io.Writer, events []FeedbackEvent) error {
	for _, ev := range events {
		line, err := logLine(ev)
		if err != nil {
			return err
		}
		if _, err := w.Write(line); err != nil {
			return err
		}
	}
	return nil
}

// logLine is ev as a line of feedback.log.
func logLine(ev FeedbackEvent) ([]byte, error) {
	body, err := EncodeFeedbackLine(ev)
	if err != nil {
		return nil, err
	}
	body = body[:len(body)-1]
	var sum [4]byte
	crc := crc32.Checksum(body, checksum.Castagnoli)
	sum[0], sum[1], sum[2], sum[3] = byte(crc>>24), byte(crc>>16), byte(crc>>8), byte(crc)
	out := make([]byte, 0, 10+len(body))
	out = hex.AppendEncode(out, sum[:])
	out = append(out, ' ')
	out = append(out, body...)
	return append(out, '\n'), nil
}

// readFeedback reads a feedback.log: its events in file order, the number
// of lines, and how many lines were damaged (a cut last line, a
// checksum that fails, an event that does not check).
func readFeedback(r io.Reader) (events []FeedbackEvent, lines, damaged int, err error) {
	br := bufio.NewReaderSize(r, 64<<10)
	for {
		line, rerr := br.ReadSlice('\n')
		if errors.Is(rerr, bufio.ErrBufferFull) {
			// A line longer than any event: damaged; skip to its end.
			for errors.Is(rerr, bufio.ErrBufferFull) {
				_, rerr = br.ReadSlice('\n')
			}
			lines++
			damaged++
			if rerr == io.EOF {
				return events, lines, damaged, nil
			}
			if rerr != nil {
				return nil, 0, 0, rerr
			}
			continue
		}
		if len(line) > 0 {
			lines++
			if ev, ok := parseLogLine(line); ok {
				events = append(events, ev)
			} else {
				damaged++
			}
		}
		if rerr == io.EOF {
			return events, lines, damaged, nil
		}
		if rerr != nil {
			return nil, 0, 0, rerr
		}
	}
}

// parseLogLine parses one line of feedback.log; a line without its
// newline was cut by a kill.
func parseLogLine(line []byte) (FeedbackEvent, bool) {
	if len(line) < 11 || line[len(line)-1] != '\n' || line[8] != ' ' {
		return FeedbackEvent{}, false
	}
	var sum [4]byte
	if _, err := hex.Decode(sum[:], line[:8]); err != nil {
		return FeedbackEvent{}, false
	}
	body := line[9 : len(line)-1]
	want := uint32(sum[0])<<24 | uint32(sum[1])<<16 | uint32(sum[2])<<8 | uint32(sum[3])
	if crc32.Checksum(body, checksum.Castagnoli) != want {
		return FeedbackEvent{}, false
	}
	ev, err := decodeEvent(body)
	return ev, err == nil
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
	line, err := logLine(ev)
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
