package format

import (
	"bufio"
	"bytes"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"regexp"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/toolscout/toolscout/internal/checksum"
)

// feedback.log and a read-only replica's event lines: the layout is in
// index/store's feedback.go.

// feedbackVersion marks an event line; a line without it is not an
// event (a log record beside them on stderr).
const feedbackVersion = 1

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

// WriteFeedback writes events in feedback.log's format.
func WriteFeedback(w io.Writer, events []FeedbackEvent) error {
	for _, ev := range events {
		line, err := LogLine(ev)
		if err != nil {
			return err
		}
		if _, err := w.Write(line); err != nil {
			return err
		}
	}
	return nil
}

// LogLine is ev as a line of feedback.log.
func LogLine(ev FeedbackEvent) ([]byte, error) {
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

// ReadFeedback reads a feedback.log: its events in file order, the number
// of lines, and how many lines were damaged (a cut last line, a
// checksum that fails, an event that does not check).
func ReadFeedback(r io.Reader) (events []FeedbackEvent, lines, damaged int, err error) {
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
