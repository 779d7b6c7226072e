package format

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"reflect"
	"testing"
	"time"

	"github.com/toolscout/toolscout/index"
	"github.com/toolscout/toolscout/index/pin"
	"github.com/toolscout/toolscout/internal/checksum"
	"github.com/toolscout/toolscout/internal/fuzzcheck"
)

// The fuzz targets of the files index/store owns besides the catalog
// cache (index's FuzzCatalogCache): upstreams.bin, the fit files,
// feedback.log and pins.bin. Each is seeded with the bytes the format's
// own writer writes (index/store's tests check that a Store writes
// these files with them), and asserts the decoder's contract: an error
// of the kind its caller heals, or a value that writes and reads back
// the same; never a panic, never memory out of proportion to the input.
// They live here, not in index/store, so that -fuzz instruments this
// package's few dependencies instead of Bleve's and chromem-go's.

// listedSample is two servers' tools, every field of a ToolSpec used.
func listedSample() []index.ListedTools {
	return []index.ListedTools{
		{Domain: "memory", Title: "Memory", Instructions: "Keeps a knowledge graph.", Tools: []index.ToolSpec{
			{Name: "create_entities", Description: "Create entities.", InputSchema: json.RawMessage(`{"type":"object","properties":{"entities":{"type":"array"}}}`),
				Annotations: json.RawMessage(`{"readOnlyHint":false}`), Group: "graph"},
			{Name: "read_graph", Title: "Read", InputSchema: json.RawMessage(`{"type":"object"}`), OutputSchema: json.RawMessage(`{"type":"object"}`), Tags: []string{"read"}},
		}},
		{Domain: "files", Tools: []index.ToolSpec{{Name: "read_file", InputSchema: json.RawMessage(`{"type":"object"}`)}}},
	}
}

// fitSample is the sketch of a six-tool catalog, sorted by name hash.
func fitSample() FitSketch {
	s := make(FitSketch, 6)
	for i := range s {
		s[i] = FitTool{Name: uint64(i+1) << 40, Content: uint64(i) * 31}
	}
	return s
}

// saveLabel writes label as an embedder's own bytes.
func saveLabel(label string) func(io.Writer) error {
	return func(w io.Writer) error { _, err := io.WriteString(w, label); return err }
}

// fbEvent is the i-th event of a log.
func fbEvent(i int) FeedbackEvent {
	return FeedbackEvent{Request: fmt.Sprintf("open a ticket %d", i), Tool: "jira__create_issue", Caller: fmt.Sprintf("session:%d", i%3),
		Time: time.Date(2026, 1, 1, 0, 0, i, 0, time.UTC)}
}

// pinSample is a book of two tools, one of them changed since approved.
func pinSample() *pin.Book {
	var b pin.Book
	now := time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)
	b.Check("fs", []index.ToolSpec{
		{Name: "read", Description: "Read a file <fast>.", InputSchema: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"}}}`)},
		{Name: "write", Description: "Write a file.", InputSchema: json.RawMessage(`{"type":"object"}`), Annotations: json.RawMessage(`{"destructiveHint":true}`)},
	}, now)
	b.Check("fs", []index.ToolSpec{{Name: "read", Description: "Read a file & mail it.", InputSchema: json.RawMessage(`{"type":"object"}`)}}, now)
	return &b
}

// FuzzListed reads upstreams.bin (ReadListed). With fix set the length
// and CRC in the head are made to match the body, so that the JSON and
// the domain checks behind them are fuzzed too. Contract: an error
// wrapping ErrListedCorrupt, or servers that WriteListed writes and
// ReadListed reads back equal, each domain valid and once.
func FuzzListed(f *testing.F) {
	var buf bytes.Buffer
	if err := WriteListed(&buf, listedSample()); err != nil {
		f.Fatal(err)
	}
	good := buf.Bytes()
	f.Add(good, false)
	f.Add(good, true)
	for _, at := range []int{len(ListedMagic), len(ListedMagic) + 4, ListedHead, len(good) - 1} {
		b := bytes.Clone(good)
		b[at] ^= 0x40
		f.Add(b, at >= ListedHead)
	}
	f.Add(good[:ListedHead+3], true)
	f.Add(append([]byte(ListedMagic+"\x00\x00\x00\x00"), 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f), false)
	f.Fuzz(func(t *testing.T, data []byte, fix bool) {
		if fix && len(data) >= ListedHead {
			data = bytes.Clone(data)
			body := data[ListedHead:]
			binary.LittleEndian.PutUint32(data[len(ListedMagic):], crc32.Checksum(body, checksum.Castagnoli))
			binary.LittleEndian.PutUint64(data[len(ListedMagic)+4:], uint64(len(body)))
		}
		var (
			servers []index.ListedTools
			err     error
		)
		fuzzcheck.Bounded(t, len(data), func() { servers, err = ReadListed(bytes.NewReader(data)) })
		if err != nil {
			if !errors.Is(err, ErrListedCorrupt) || servers != nil {
				t.Fatalf("ReadListed = %d servers, %v; want an ErrListedCorrupt error and none", len(servers), err)
			}
			return
		}
		var w1, w2 bytes.Buffer
		if err := WriteListed(&w1, servers); err != nil {
			t.Fatalf("WriteListed of what ReadListed read: %v", err)
		}
		again, err := ReadListed(bytes.NewReader(w1.Bytes()))
		if err != nil {
			t.Fatalf("ReadListed of what WriteListed wrote: %v", err)
		}
		if err := WriteListed(&w2, again); err != nil || !bytes.Equal(w1.Bytes(), w2.Bytes()) {
			t.Fatalf("upstreams.bin read back writes differently (%v)", err)
		}
	})
}

// FuzzFit reads a fit file (ReadFit). With seal set the input is taken
// as a body and given its footer of checksums, so that the sketch behind
// the checksum is fuzzed. Contract: an error, or a sketch and the
// embedder's bytes that WriteFit writes and ReadFit reads back equal.
func FuzzFit(f *testing.F) {
	var file bytes.Buffer
	if err := WriteFit(&file, fitSample(), saveLabel("the embedder's own bytes")); err != nil {
		f.Fatal(err)
	}
	good := file.Bytes()
	body := good[:len(good)-checksum.FooterLen(good)]
	f.Add(good, false)
	f.Add(body, true)
	for _, at := range []int{len(FitHeader), len(FitHeader) + 3, len(FitHeader) + 4, len(body) - 1} {
		b := bytes.Clone(body)
		b[at] ^= 0x40
		f.Add(b, true)
	}
	f.Add(body[:len(FitHeader)+4+7], true)
	f.Add([]byte("TSFITV02"), false)
	f.Fuzz(func(t *testing.T, data []byte, seal bool) {
		if seal {
			data = checksum.Append(bytes.Clone(data))
		}
		var (
			sketch FitSketch
			rest   []byte
			err    error
		)
		fuzzcheck.Bounded(t, len(data), func() { sketch, rest, err = ReadFit(data) })
		if err != nil {
			return
		}
		var buf bytes.Buffer
		if err := WriteFit(&buf, sketch, func(w io.Writer) error { _, err := w.Write(rest); return err }); err != nil {
			t.Fatal(err)
		}
		sketch2, rest2, err := ReadFit(buf.Bytes())
		if err != nil || !reflect.DeepEqual(sketch2, sketch) || !bytes.Equal(rest2, rest) {
			t.Fatalf("a fit file read back reads differently: %d tools, %d bytes (%v); want %d, %d", len(sketch2), len(rest2), err, len(sketch), len(rest))
		}
	})
}

// FuzzFeedbackLog reads feedback.log (ReadFeedback) and the same bytes
// as a replica's event lines (DecodeFeedbackLines). Contract for the
// log: every line is an event or counted damaged, and the events write
// and read back the same with none damaged. For the lines: an error
// wrapping ErrBadFeedback, or events that encode and decode the same.
func FuzzFeedbackLog(f *testing.F) {
	var log bytes.Buffer
	if err := WriteFeedback(&log, []FeedbackEvent{fbEvent(0), fbEvent(1), fbEvent(2), fbEvent(3)}); err != nil {
		f.Fatal(err)
	}
	good := log.Bytes()
	f.Add(good)
	f.Add(good[:len(good)-5])
	b := bytes.Clone(good)
	b[len(b)/2] ^= 0x01
	f.Add(b)
	var lines bytes.Buffer
	for i := range 3 {
		line, err := EncodeFeedbackLine(fbEvent(i))
		if err != nil {
			f.Fatal(err)
		}
		lines.WriteString("time=x level=INFO msg=served\n")
		lines.Write(line)
	}
	f.Add(lines.Bytes())
	f.Fuzz(func(t *testing.T, data []byte) {
		var (
			events     []FeedbackEvent
			n, damaged int
			err        error
			lineEvents []FeedbackEvent
			lerr       error
		)
		fuzzcheck.Bounded(t, len(data), func() {
			events, n, damaged, err = ReadFeedback(bytes.NewReader(data))
			lineEvents, _, lerr = DecodeFeedbackLines(bytes.NewReader(data), "fuzz")
		})
		if err != nil {
			t.Fatalf("ReadFeedback of bytes in memory: %v", err)
		}
		if len(events)+damaged != n {
			t.Fatalf("ReadFeedback: %d events and %d damaged of %d lines", len(events), damaged, n)
		}
		var buf bytes.Buffer
		if err := WriteFeedback(&buf, events); err != nil {
			t.Fatalf("WriteFeedback of events read from the log: %v", err)
		}
		again, _, damaged2, err := ReadFeedback(&buf)
		if err != nil || damaged2 != 0 || !sameEvents(again, events) {
			t.Fatalf("feedback.log read back: %d events, %d damaged (%v); want %d, 0", len(again), damaged2, err, len(events))
		}
		if lerr != nil {
			if !errors.Is(lerr, ErrBadFeedback) || lineEvents != nil {
				t.Fatalf("DecodeFeedbackLines = %d events, %v; want an ErrBadFeedback error", len(lineEvents), lerr)
			}
			return
		}
		buf.Reset()
		for _, ev := range lineEvents {
			line, err := EncodeFeedbackLine(ev)
			if err != nil {
				t.Fatalf("EncodeFeedbackLine of a decoded event: %v", err)
			}
			buf.Write(line)
		}
		again, skipped, err := DecodeFeedbackLines(&buf, "again")
		if err != nil || skipped != 0 || !sameEvents(again, lineEvents) {
			t.Fatalf("event lines read back: %d events, %d skipped (%v); want %d", len(again), skipped, err, len(lineEvents))
		}
	})
}

// sameEvents compares events as they are written.
func sameEvents(a, b []FeedbackEvent) bool {
	ja, erra := json.Marshal(a)
	jb, errb := json.Marshal(b)
	return len(a) == len(b) && erra == nil && errb == nil && bytes.Equal(ja, jb)
}

// FuzzPins reads pins.bin (ReadPins). With fix set the length and CRC in
// the head are made to match the body, so that the JSON and
// Book.Validate behind them are fuzzed too. Contract: an error wrapping
// ErrPinsCorrupt, or a book that WritePins writes and ReadPins reads
// back the same.
func FuzzPins(f *testing.F) {
	var good bytes.Buffer
	if err := WritePins(&good, pinSample()); err != nil {
		f.Fatal(err)
	}
	f.Add(good.Bytes(), false)
	f.Add(good.Bytes(), true)
	// A book under review, with a tool held unchecked.
	review := pinSample()
	review.StartReview("pins.bin was damaged, and no good copy was left", time.Date(2026, 11, 28, 0, 0, 0, 0, time.UTC))
	review.Check("web", []index.ToolSpec{{Name: "fetch", Description: "Fetch a URL.", InputSchema: json.RawMessage(`{"type":"object"}`)}}, time.Date(2026, 11, 28, 1, 0, 0, 0, time.UTC))
	var reviewed bytes.Buffer
	if err := WritePins(&reviewed, review); err != nil {
		f.Fatal(err)
	}
	f.Add(reviewed.Bytes(), false)
	f.Add(bytes.Replace(reviewed.Bytes(), []byte(`"pending":`), []byte(`"pendin":`), 1), true)
	for _, at := range []int{len(PinsMagic), len(PinsMagic) + 4, PinsHead, good.Len() - 1} {
		b := bytes.Clone(good.Bytes())
		b[at] ^= 0x40
		f.Add(b, at >= PinsHead)
	}
	f.Add(append([]byte(PinsMagic+"\x00\x00\x00\x00"), 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f), false)
	f.Fuzz(func(t *testing.T, data []byte, fix bool) {
		if fix && len(data) >= PinsHead {
			data = bytes.Clone(data)
			body := data[PinsHead:]
			binary.LittleEndian.PutUint32(data[len(PinsMagic):], crc32.Checksum(body, checksum.Castagnoli))
			binary.LittleEndian.PutUint64(data[len(PinsMagic)+4:], uint64(len(body)))
		}
		var (
			b   *pin.Book
			err error
		)
		fuzzcheck.Bounded(t, len(data), func() { b, err = ReadPins(bytes.NewReader(data)) })
		if err != nil {
			if !errors.Is(err, ErrPinsCorrupt) || b != nil {
				t.Fatalf("ReadPins = %v, %v; want an ErrPinsCorrupt error and no book", b, err)
			}
			return
		}
		var w1, w2 bytes.Buffer
		if err := WritePins(&w1, b); err != nil {
			t.Fatalf("WritePins of what ReadPins read: %v", err)
		}
		again, err := ReadPins(bytes.NewReader(w1.Bytes()))
		if err != nil {
			t.Fatalf("ReadPins of what WritePins wrote: %v", err)
		}
		if err := WritePins(&w2, again); err != nil || !bytes.Equal(w1.Bytes(), w2.Bytes()) {
			t.Fatalf("pins.bin read back writes differently (%v)", err)
		}
	})
}
