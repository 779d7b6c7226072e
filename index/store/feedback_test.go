package store

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/toolscout/toolscout/index"
)

func fbEvent(i int) FeedbackEvent {
	return FeedbackEvent{Request: fmt.Sprintf("open a ticket %d", i), Tool: "jira__create_issue", Caller: fmt.Sprintf("session:%d", i%3),
		Time: time.Date(2026, 1, 1, 0, 0, i, 0, time.UTC)}
}

// TestFeedbackLogHeals: a cut last line (a kill mid-append) and a
// flipped byte each lose their own event only, the loss is said in
// Healed, the log is rewritten whole, and the next append after a cut
// line is not glued to it.
func TestFeedbackLogHeals(t *testing.T) {
	for _, tc := range []struct {
		name   string
		damage func(data []byte) []byte
		want   int // events left of 3
	}{
		{"cut last line", func(d []byte) []byte { return d[:len(d)-7] }, 2},
		{"flipped byte in the middle line", func(d []byte) []byte {
			i := bytes.IndexByte(d, '\n') + 30
			d[i] ^= 0x20
			return d
		}, 2},
		{"garbage line", func(d []byte) []byte { return append(d, []byte("not a line at all\n")...) }, 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			l := OpenFeedback(dir, FeedbackOptions{})
			for i := range 3 {
				if err := l.Record(fbEvent(i)); err != nil {
					t.Fatal(err)
				}
			}
			path := filepath.Join(dir, feedbackFile)
			data, _ := os.ReadFile(path)
			os.WriteFile(path, tc.damage(data), 0o600)
			// Appended after the damage by a log that counted its lines
			// before it: the damage is found when the log is read.
			if err := l.Record(fbEvent(9)); err != nil {
				t.Fatal(err)
			}
			evs, err := l.Events()
			if err != nil {
				t.Fatal(err)
			}
			if len(evs) != tc.want+1 || evs[len(evs)-1] != fbEvent(9) {
				t.Fatalf("Events() = %d events, last %v; want %d, the last appended", len(evs), evs[len(evs)-1], tc.want+1)
			}
			if h := l.Healed(); len(h) != 1 || !strings.Contains(h[0], "damaged") {
				t.Errorf("Healed() = %q, want one line about the damaged line", h)
			}
			// Rewritten: a second reader sees no damage.
			l2 := OpenFeedback(dir, FeedbackOptions{})
			if evs2, _ := l2.Events(); len(evs2) != len(evs) || len(l2.Healed()) != 0 {
				t.Errorf("after healing: %d events, healed %q; want %d, none", len(evs2), l2.Healed(), len(evs))
			}
		})
	}
}

// TestFeedbackLogCap: the log keeps the newest Cap events however many
// are recorded, and its file stays within twice that.
func TestFeedbackLogCap(t *testing.T) {
	dir := t.TempDir()
	l := OpenFeedback(dir, FeedbackOptions{Cap: 10})
	for i := range 45 {
		if err := l.Record(fbEvent(i)); err != nil {
			t.Fatal(err)
		}
	}
	evs, err := l.Events()
	if err != nil {
		t.Fatal(err)
	}
	if len(evs) != 10 || evs[0] != fbEvent(35) || evs[9] != fbEvent(44) {
		t.Errorf("Events() = %d events from %v; want the newest 10 (35 to 44)", len(evs), evs[0].Request)
	}
	data, _ := os.ReadFile(filepath.Join(dir, feedbackFile))
	if n := bytes.Count(data, []byte("\n")); n >= 20 {
		t.Errorf("the file holds %d lines, want fewer than 20 (twice the cap)", n)
	}
}

// TestFeedbackFold: folding adds new events in time order, counts a
// file folded twice once, and keeps the cap.
func TestFeedbackFold(t *testing.T) {
	dir := t.TempDir()
	l := OpenFeedback(dir, FeedbackOptions{Cap: 5})
	l.Record(fbEvent(3))
	in := []FeedbackEvent{fbEvent(1), fbEvent(2), fbEvent(3)}
	n, err := l.Fold(in)
	if err != nil || n != 2 {
		t.Fatalf("Fold = %d, %v; want 2 added (one was there)", n, err)
	}
	if n, _ := l.Fold(in); n != 0 {
		t.Errorf("folding the same events again added %d, want 0", n)
	}
	evs, _ := l.Events()
	if len(evs) != 3 || evs[0] != fbEvent(1) || evs[2] != fbEvent(3) {
		t.Errorf("Events() = %v, want events 1, 2, 3 in time order", evs)
	}
	l.Fold([]FeedbackEvent{fbEvent(4), fbEvent(5), fbEvent(6), fbEvent(0)})
	evs, _ = l.Events()
	if len(evs) != 5 || evs[0] != fbEvent(2) {
		t.Errorf("after folding past the cap: %d events from %q, want 5 from event 2", len(evs), evs[0].Request)
	}
	if err := l.Forget(); err != nil {
		t.Fatal(err)
	}
	if evs, _ := l.Events(); len(evs) != 0 {
		t.Errorf("after Forget: %d events", len(evs))
	}
}

// TestFeedbackReadOnly: a read-only log reads and never writes, even a
// damaged file.
func TestFeedbackReadOnly(t *testing.T) {
	dir := t.TempDir()
	OpenFeedback(dir, FeedbackOptions{}).Record(fbEvent(1))
	path := filepath.Join(dir, feedbackFile)
	os.WriteFile(path, append(must(os.ReadFile(path)), "cut"...), 0o600)
	before, _ := os.ReadFile(path)
	l := OpenFeedback(dir, FeedbackOptions{ReadOnly: true})
	if evs, err := l.Events(); err != nil || len(evs) != 1 {
		t.Fatalf("Events() = %v, %v; want the one whole event", evs, err)
	}
	for name, err := range map[string]error{"Record": l.Record(fbEvent(2)), "Forget": l.Forget(), "Fold": func() error { _, err := l.Fold([]FeedbackEvent{fbEvent(3)}); return err }()} {
		if !errors.Is(err, index.ErrReadOnly) {
			t.Errorf("%s on a read-only log = %v, want ErrReadOnly", name, err)
		}
	}
	if after, _ := os.ReadFile(path); !bytes.Equal(before, after) {
		t.Error("a read-only log changed its file")
	}
}

func must(b []byte, err error) []byte {
	if err != nil {
		panic(err)
	}
	return b
}

// TestDecodeFeedbackLines: a replica's events come back as they were
// written, log records beside them are skipped, and a line that means
// to be an event and is not one is an error naming the file and line.
func TestDecodeFeedbackLines(t *testing.T) {
	var good bytes.Buffer
	good.WriteString(`time=2026-01-01T00:00:00Z level=INFO msg="serving"` + "\n")
	good.WriteString(`{"time":"2026-01-01T00:00:00Z","level":"INFO","msg":"index loaded"}` + "\n\n")
	for i := range 2 {
		line, err := EncodeFeedbackLine(fbEvent(i))
		if err != nil {
			t.Fatal(err)
		}
		good.Write(line)
	}
	evs, skipped, err := DecodeFeedbackLines(&good, "replica.jsonl")
	if err != nil || len(evs) != 2 || evs[1] != fbEvent(1) || skipped != 2 {
		t.Fatalf("DecodeFeedbackLines = %v, %d skipped, %v; want the 2 events, 2 log lines skipped", evs, skipped, err)
	}
	long := `{"toolscout_feedback":1,"request":"` + strings.Repeat("x", 5000) + `","tool":"a__b","caller":"c","time":"2026-01-01T00:00:00Z"}`
	if evs, _, err := DecodeFeedbackLines(strings.NewReader(long), "f"); err != nil || len(evs[0].Request) != MaxFeedbackRequest {
		t.Errorf("a long request: %v; want it cut to %d bytes", err, MaxFeedbackRequest)
	}
	for _, tc := range []struct{ name, text, want string }{
		{"cut line", "{\"toolscout_feedback\":1,\"request\":\"open\n", "f.jsonl:1:"},
		{"no tool", `{"toolscout_feedback":1,"request":"open","caller":"c","time":"2026-01-01T00:00:00Z"}`, "f.jsonl:1: not a valid feedback event: tool"},
		{"bad tool", "\n" + `{"toolscout_feedback":1,"request":"open","tool":"a b","time":"2026-01-01T00:00:00Z"}`, "f.jsonl:2:"},
		{"no time", `{"toolscout_feedback":1,"request":"open","tool":"a__b"}`, "no time"},
		{"other version", `{"toolscout_feedback":2,"request":"open","tool":"a__b","time":"2026-01-01T00:00:00Z"}`, "version"},
		{"too long", "x\n" + `{"toolscout_feedback":1,"x":"` + strings.Repeat("y", MaxFeedbackLine) + `"}`, "f.jsonl:2:"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := DecodeFeedbackLines(strings.NewReader(tc.text), "f.jsonl")
			if err == nil || !strings.Contains(err.Error(), tc.want) || !errors.Is(err, ErrBadFeedback) {
				t.Errorf("DecodeFeedbackLines(%s) = %v, want an ErrBadFeedback naming %q", tc.name, err, tc.want)
			}
		})
	}
}

// TestFeedbackLogChanged: a log tells what another process did to its
// file (a forget, even one after which this process appends first; a
// fold; another's append) from its own appends and cap rewrites, which
// never count (issue 52, item 4: a serve kept ranking what `toolscout
// feedback --forget` had forgotten).
func TestFeedbackLogChanged(t *testing.T) {
	for _, tc := range []struct {
		name  string
		other func(dir string) error // what another process does; nil: nothing
		then  bool                   // whether this process appends after it
		want  bool
	}{
		{"own appends", nil, true, false},
		{"forget", func(dir string) error { return OpenFeedback(dir, FeedbackOptions{}).Forget() }, false, true},
		{"forget, then an own append", func(dir string) error { return OpenFeedback(dir, FeedbackOptions{}).Forget() }, true, true},
		{"fold", func(dir string) error {
			_, err := OpenFeedback(dir, FeedbackOptions{}).Fold([]FeedbackEvent{fbEvent(50)})
			return err
		}, false, true},
		{"another's append, then an own one", func(dir string) error { return OpenFeedback(dir, FeedbackOptions{}).Record(fbEvent(60)) }, true, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			l := OpenFeedback(dir, FeedbackOptions{Cap: 4})
			if l.Changed() {
				t.Fatal("Changed() before the log was read = true")
			}
			if _, err := l.Events(); err != nil {
				t.Fatal(err)
			}
			for i := range 7 { // past twice the cap: a rewrite of its own
				if err := l.Record(fbEvent(i)); err != nil {
					t.Fatal(err)
				}
			}
			if l.Changed() {
				t.Fatal("Changed() after the log's own appends and rewrite = true")
			}
			if tc.other != nil {
				if err := tc.other(dir); err != nil {
					t.Fatal(err)
				}
			}
			if tc.then {
				if err := l.Record(fbEvent(70)); err != nil {
					t.Fatal(err)
				}
			}
			if got := l.Changed(); got != tc.want {
				t.Fatalf("Changed() = %v, want %v", got, tc.want)
			}
			if _, err := l.Events(); err != nil {
				t.Fatal(err)
			}
			if l.Changed() {
				t.Error("Changed() after Events read the log again = true")
			}
		})
	}
}
