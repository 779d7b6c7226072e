package store

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"hash/crc32"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/toolscout/toolscout/index"
	"github.com/toolscout/toolscout/index/pin"
	"github.com/toolscout/toolscout/internal/checksum"
	"github.com/toolscout/toolscout/internal/fuzzcheck"
)

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

// TestPinsUpdate: what Update writes, Read and another handle read back;
// fn's "no change" writes nothing; the memory store keeps its book.
func TestPinsUpdate(t *testing.T) {
	for _, dir := range []string{t.TempDir(), ""} {
		p := OpenPins(dir, nil)
		if err := p.Update(func(b *pin.Book) bool { *b = *pinSample(); return true }); err != nil {
			t.Fatal(err)
		}
		stamp := p.Stamp()
		if err := p.Update(func(b *pin.Book) bool { return false }); err != nil {
			t.Fatal(err)
		}
		if p.Stamp() != stamp {
			t.Error("an Update that changed nothing wrote the file")
		}
		b, err := p.Read()
		if err != nil || b.Len() != 2 || len(b.Pending()) != 1 {
			t.Fatalf("Read(%q) = %+v, %v", dir, b, err)
		}
		if dir != "" {
			other, err := OpenPins(dir, nil).Read()
			if err != nil || other.Len() != 2 || stamp == "" {
				t.Errorf("another handle reads %+v, %v (stamp %q)", other, err, stamp)
			}
		}
	}
}

// TestPinsConcurrent: updates of several handles (processes) interleave
// whole: none is lost.
func TestPinsConcurrent(t *testing.T) {
	dir := t.TempDir()
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			p := OpenPins(dir, nil)
			for j := range 5 {
				name := string(rune('a'+i)) + string(rune('a'+j))
				err := p.Update(func(b *pin.Book) bool {
					b.Check("d", []index.ToolSpec{{Name: name, InputSchema: json.RawMessage(`{"type":"object"}`)}}, time.Now())
					return true
				})
				if err != nil {
					t.Error(err)
				}
			}
		})
	}
	wg.Wait()
	b, err := OpenPins(dir, nil).Read()
	if err != nil || b.Len() != 40 {
		t.Errorf("after 40 concurrent updates: %d pins, %v", b.Len(), err)
	}
}

// TestPinsDamaged: a pins.bin with a byte flipped is refused by Read
// (left alone), and moved aside by Update with a warning, the pins
// starting over; never a panic.
func TestPinsDamaged(t *testing.T) {
	dir := t.TempDir()
	p := OpenPins(dir, nil)
	if err := p.Update(func(b *pin.Book) bool { *b = *pinSample(); return true }); err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(p.Path())
	for _, at := range []int{0, len(pinsMagic), pinsHead + 10, len(data) - 2} {
		bad := bytes.Clone(data)
		bad[at] ^= 0x20
		os.WriteFile(p.Path(), bad, 0o600)
		if _, err := p.Read(); !errors.Is(err, ErrPinsCorrupt) {
			t.Errorf("Read of a file flipped at %d = %v, want ErrPinsCorrupt", at, err)
		}
	}
	var seen int
	if err := p.Update(func(b *pin.Book) bool { seen = b.Len(); return false }); err != nil {
		t.Fatal(err)
	}
	if seen != 0 || len(p.Healed()) != 1 || !strings.Contains(p.Healed()[0], "moved to "+p.Path()+".damaged") {
		t.Errorf("Update on a damaged file saw %d pins; healed %q", seen, p.Healed())
	}
	if _, err := os.Stat(filepath.Join(dir, pinsFile+".damaged")); err != nil {
		t.Error(err)
	}
}

// FuzzPins reads pins.bin (readPins). With fix set the length and CRC in
// the head are made to match the body, so that the JSON and
// Book.Validate behind them are fuzzed too. Contract: an error wrapping
// ErrPinsCorrupt, or a book that writePins writes and readPins reads
// back the same.
func FuzzPins(f *testing.F) {
	var good bytes.Buffer
	if err := writePins(&good, pinSample()); err != nil {
		f.Fatal(err)
	}
	f.Add(good.Bytes(), false)
	f.Add(good.Bytes(), true)
	for _, at := range []int{len(pinsMagic), len(pinsMagic) + 4, pinsHead, good.Len() - 1} {
		b := bytes.Clone(good.Bytes())
		b[at] ^= 0x40
		f.Add(b, at >= pinsHead)
	}
	f.Add(append([]byte(pinsMagic+"\x00\x00\x00\x00"), 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f), false)
	f.Fuzz(func(t *testing.T, data []byte, fix bool) {
		if fix && len(data) >= pinsHead {
			data = bytes.Clone(data)
			body := data[pinsHead:]
			binary.LittleEndian.PutUint32(data[len(pinsMagic):], crc32.Checksum(body, checksum.Castagnoli))
			binary.LittleEndian.PutUint64(data[len(pinsMagic)+4:], uint64(len(body)))
		}
		var (
			b   *pin.Book
			err error
		)
		fuzzcheck.Bounded(t, len(data), func() { b, err = readPins(bytes.NewReader(data)) })
		if err != nil {
			if !errors.Is(err, ErrPinsCorrupt) || b != nil {
				t.Fatalf("readPins = %v, %v; want an ErrPinsCorrupt error and no book", b, err)
			}
			return
		}
		var w1, w2 bytes.Buffer
		if err := writePins(&w1, b); err != nil {
			t.Fatalf("writePins of what readPins read: %v", err)
		}
		again, err := readPins(bytes.NewReader(w1.Bytes()))
		if err != nil {
			t.Fatalf("readPins of what writePins wrote: %v", err)
		}
		if err := writePins(&w2, again); err != nil || !bytes.Equal(w1.Bytes(), w2.Bytes()) {
			t.Fatalf("pins.bin read back writes differently (%v)", err)
		}
	})
}
