package store

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/toolscout/toolscout/index"
	"github.com/toolscout/toolscout/internal/checksum"
	"github.com/toolscout/toolscout/internal/fuzzcheck"
	"github.com/toolscout/toolscout/internal/indextest"
)

// The fuzz targets of the files index/store owns besides the catalog
// cache (index's FuzzCatalogCache): upstreams.bin, the fit files and
// feedback.log. Each is seeded with the bytes a real Store wrote into a
// data dir, and asserts the decoder's contract: an error of the kind its
// caller heals, or a value that writes and reads back the same; never a
// panic, never memory out of proportion to the input.

// FuzzListed reads upstreams.bin (readListed). With fix set the length
// and CRC in the head are made to match the body, so that the JSON and
// the domain checks behind them are fuzzed too. Contract: an error
// wrapping ErrListedCorrupt, or servers that writeListed writes and
// readListed reads back equal, each domain valid and once.
func FuzzListed(f *testing.F) {
	dir := f.TempDir()
	s, err := Open(dir)
	if err != nil {
		f.Fatal(err)
	}
	if err := s.SaveListedTools(listedSample()); err != nil {
		f.Fatal(err)
	}
	good, err := os.ReadFile(filepath.Join(dir, listedFile))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(good, false)
	f.Add(good, true)
	for _, at := range []int{len(listedMagic), len(listedMagic) + 4, listedHead, len(good) - 1} {
		b := bytes.Clone(good)
		b[at] ^= 0x40
		f.Add(b, at >= listedHead)
	}
	f.Add(good[:listedHead+3], true)
	f.Add(append([]byte(listedMagic+"\x00\x00\x00\x00"), 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f), false)
	f.Fuzz(func(t *testing.T, data []byte, fix bool) {
		if fix && len(data) >= listedHead {
			data = bytes.Clone(data)
			body := data[listedHead:]
			binary.LittleEndian.PutUint32(data[len(listedMagic):], crc32.Checksum(body, checksum.Castagnoli))
			binary.LittleEndian.PutUint64(data[len(listedMagic)+4:], uint64(len(body)))
		}
		var servers []index.ListedTools
		fuzzcheck.Bounded(t, len(data), func() { servers, err = readListed(bytes.NewReader(data)) })
		if err != nil {
			if !errors.Is(err, ErrListedCorrupt) || servers != nil {
				t.Fatalf("readListed = %d servers, %v; want an ErrListedCorrupt error and none", len(servers), err)
			}
			return
		}
		var w1, w2 bytes.Buffer
		if err := writeListed(&w1, servers); err != nil {
			t.Fatalf("writeListed of what readListed read: %v", err)
		}
		again, err := readListed(bytes.NewReader(w1.Bytes()))
		if err != nil {
			t.Fatalf("readListed of what writeListed wrote: %v", err)
		}
		if err := writeListed(&w2, again); err != nil || !bytes.Equal(w1.Bytes(), w2.Bytes()) {
			t.Fatalf("upstreams.bin read back writes differently (%v)", err)
		}
	})
}

// FuzzFit reads a fit file (readFit). With seal set the input is taken
// as a body and given its footer of checksums, so that the sketch behind
// the checksum is fuzzed. Contract: an error, or a sketch and the
// embedder's bytes that writeFit writes and readFit reads back equal.
func FuzzFit(f *testing.F) {
	dir := f.TempDir()
	s, err := Open(dir)
	if err != nil {
		f.Fatal(err)
	}
	cat := indextest.MustCatalog(f, indextest.SmallCatalog)
	if err := s.SaveFit("fp", cat, saveLabel("the embedder's own bytes")); err != nil {
		f.Fatal(err)
	}
	good, err := os.ReadFile(s.fitPath("fp", cat))
	if err != nil {
		f.Fatal(err)
	}
	body := good[:len(good)-checksum.FooterLen(good)]
	f.Add(good, false)
	f.Add(body, true)
	for _, at := range []int{len(fitHeader), len(fitHeader) + 3, len(fitHeader) + 4, len(body) - 1} {
		b := bytes.Clone(body)
		b[at] ^= 0x40
		f.Add(b, true)
	}
	f.Add(body[:len(fitHeader)+4+7], true)
	f.Add([]byte("TSFITV02"), false)
	f.Fuzz(func(t *testing.T, data []byte, seal bool) {
		if seal {
			data = checksum.Append(bytes.Clone(data))
		}
		var (
			sketch fitSketch
			rest   []byte
			err    error
		)
		fuzzcheck.Bounded(t, len(data), func() { sketch, rest, err = readFit(data) })
		if err != nil {
			return
		}
		var buf bytes.Buffer
		if err := writeFit(&buf, sketch, func(w io.Writer) error { _, err := w.Write(rest); return err }); err != nil {
			t.Fatal(err)
		}
		sketch2, rest2, err := readFit(buf.Bytes())
		if err != nil || !reflect.DeepEqual(sketch2, sketch) || !bytes.Equal(rest2, rest) {
			t.Fatalf("a fit file read back reads differently: %d tools, %d bytes (%v); want %d, %d", len(sketch2), len(rest2), err, len(sketch), len(rest))
		}
	})
}

// FuzzFeedbackLog reads feedback.log (readFeedback) and the same bytes
// as a replica's event lines (DecodeFeedbackLines). Contract for the
// log: every line is an event or counted damaged, and the events write
// and read back the same with none damaged. For the lines: an error
// wrapping ErrBadFeedback, or events that encode and decode the same.
func FuzzFeedbackLog(f *testing.F) {
	dir := f.TempDir()
	fl := OpenFeedback(dir, FeedbackOptions{})
	for i := range 4 {
		if err := fl.Record(fbEvent(i)); err != nil {
			f.Fatal(err)
		}
	}
	good, err := os.ReadFile(filepath.Join(dir, feedbackFile))
	if err != nil {
		f.Fatal(err)
	}
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
			events, n, damaged, err = readFeedback(bytes.NewReader(data))
			lineEvents, _, lerr = DecodeFeedbackLines(bytes.NewReader(data), "fuzz")
		})
		if err != nil {
			t.Fatalf("readFeedback of bytes in memory: %v", err)
		}
		if len(events)+damaged != n {
			t.Fatalf("readFeedback: %d events and %d damaged of %d lines", len(events), damaged, n)
		}
		var buf bytes.Buffer
		if err := writeFeedback(&buf, events); err != nil {
			t.Fatalf("writeFeedback of events read from the log: %v", err)
		}
		again, _, damaged2, err := readFeedback(&buf)
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
