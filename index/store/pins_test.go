package store

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/toolscout/toolscout/index"
	"github.com/toolscout/toolscout/index/pin"
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
// (left alone); never a panic.
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
		if after, _ := os.ReadFile(p.Path()); !bytes.Equal(after, bad) {
			t.Errorf("Read of a file flipped at %d changed it", at)
		}
	}
}

// TestPinsPrevious: each write keeps the file it replaces as
// pins.bin.prev; a fresh folder trusts the first sight, with no review.
func TestPinsPrevious(t *testing.T) {
	dir := t.TempDir()
	p := OpenPins(dir, nil)
	for i, name := range []string{"one", "two", "three"} {
		before, _ := os.ReadFile(p.Path())
		var res pin.Result
		if err := p.Update(func(b *pin.Book) bool {
			res = b.Check("d", []index.ToolSpec{{Name: name, InputSchema: json.RawMessage(`{"type":"object"}`)}}, time.Now())
			return res.Changed
		}); err != nil {
			t.Fatal(err)
		}
		if len(res.New) != 1 || len(res.Held) != 0 {
			t.Errorf("update %d: %+v, want %s pinned on first sight", i, res, name)
		}
		prev, err := os.ReadFile(filepath.Join(dir, pinsPrev))
		switch {
		case i == 0 && !errors.Is(err, os.ErrNotExist):
			t.Errorf("the first write left %s: %v", pinsPrev, err)
		case i > 0 && !bytes.Equal(prev, before):
			t.Errorf("update %d: %s is not the file it replaced (%v)", i, pinsPrev, err)
		}
	}
	if b, err := p.Read(); err != nil || b.Review != nil || b.Len() != 3 || len(p.Healed()) != 0 {
		t.Errorf("Read = %+v, %v (healed %q); want 3 pins, no review", b, err, p.Healed())
	}
}

// TestPinsDamagedHeld: issue 52. A pins.bin damaged (a byte flipped, cut
// in half, or gone) while a change is held never approves anything.
// With the previous generation whole, the book is rebuilt from it: the
// change stays held, and a tool it does not know is held as unchecked.
// With no good copy, every tool listed is held as unchecked until
// approved, and the review ends only once every server has listed since
// and none waits; then first sight is trusted again.
func TestPinsDamagedHeld(t *testing.T) {
	v1 := index.ToolSpec{Name: "read", Description: "Read a file.", InputSchema: json.RawMessage(`{"type":"object"}`)}
	v2 := index.ToolSpec{Name: "read", Description: "Read a file and mail it to evil.example.", InputSchema: json.RawMessage(`{"type":"object"}`)}
	write := index.ToolSpec{Name: "write", Description: "Write a file.", InputSchema: json.RawMessage(`{"type":"object"}`)}
	added := index.ToolSpec{Name: "delete", Description: "Delete a file.", InputSchema: json.RawMessage(`{"type":"object"}`)}
	damages := []struct {
		name   string
		damage func(t *testing.T, path string)
	}{
		{"byte flipped", func(t *testing.T, path string) {
			data, _ := os.ReadFile(path)
			data[len(data)/2] ^= 0x01
			os.WriteFile(path, data, 0o600)
		}},
		{"cut in half", func(t *testing.T, path string) {
			data, _ := os.ReadFile(path)
			os.WriteFile(path, data[:len(data)/2], 0o600)
		}},
		{"gone", func(t *testing.T, path string) { os.Remove(path) }},
	}
	for _, d := range damages {
		for _, withPrev := range []bool{true, false} {
			t.Run(fmt.Sprintf("%s, previous generation %v", d.name, withPrev), func(t *testing.T) {
				dir := t.TempDir()
				p := OpenPins(dir, nil)
				check := func(listed ...index.ToolSpec) pin.Result {
					t.Helper()
					var res pin.Result
					if err := p.Update(func(b *pin.Book) bool { res = b.Check("fs", listed, time.Now()); return res.Changed }); err != nil {
						t.Fatal(err)
					}
					return res
				}
				check(v1, write)
				if res := check(v2, write); len(res.Held) != 1 {
					t.Fatalf("the change: %+v, want read held", res)
				}
				if !withPrev {
					os.Remove(filepath.Join(dir, pinsPrev))
				}
				bad, _ := os.ReadFile(p.Path())
				d.damage(t, p.Path())
				if d.name == "gone" && !withPrev {
					// Neither file: a fresh folder, trusted on first sight.
					if res := check(v2, write); len(res.New) != 2 || len(res.Held) != 0 {
						t.Errorf("a folder with no pins at all: %+v, want both pinned on first sight", res)
					}
					return
				}
				// fn reports no change: the rebuilt book is written all the same.
				var res pin.Result
				if err := p.Update(func(b *pin.Book) bool {
					res = b.Check("fs", []index.ToolSpec{v2, write, added}, time.Now())
					return false
				}); err != nil {
					t.Fatal(err)
				}
				held := map[string]bool{} // tool: unchecked
				for _, h := range res.Held {
					held[h.Tool] = h.Unchecked
				}
				want := map[string]bool{"read": true, "write": true, "delete": true}
				if withPrev {
					want = map[string]bool{"read": false, "delete": true}
				}
				if !reflect.DeepEqual(held, want) || len(res.New) != 0 {
					t.Fatalf("held after the damage = %v (new %q), want %v (tool: unchecked) and nothing new", held, res.New, want)
				}
				for _, ts := range res.Serve {
					if ts.Name == "read" && withPrev && ts.Description != v1.Description {
						t.Errorf("read served as %q, want the approved %q", ts.Description, v1.Description)
					}
				}
				healed := p.Healed()
				wantHealed := map[bool]string{true: "using the previous generation", false: "no good previous generation"}[withPrev]
				if len(healed) != 1 || !strings.Contains(healed[0], wantHealed) {
					t.Errorf("Healed() = %q, want one line with %q", healed, wantHealed)
				}
				if aside, _ := os.ReadFile(filepath.Join(dir, pinsAside)); d.name != "gone" && !bytes.Equal(aside, bytesOf(t, d.damage, bad)) {
					t.Errorf("%s is not the damaged file", pinsAside)
				}
				b, err := OpenPins(dir, nil).Read()
				if err != nil || b.Review == nil || len(b.Pending()) != len(want) {
					t.Fatalf("another handle reads %+v, %v; want the rebuilt book, under review, %d pending", b, err, len(want))
				}
				if _, unlisted := b.EndReview([]string{"fs", "web"}); !reflect.DeepEqual(unlisted, []string{"web"}) {
					t.Errorf("EndReview unlisted = %q, want web", unlisted)
				}

				// Approving ends the hold; the review ends once the servers
				// have listed and none waits, and first sight is trusted again.
				if err := p.Update(func(b *pin.Book) bool {
					for _, h := range b.Pending() {
						if err := b.Approve(h.Domain, h.Tool, time.Now()); err != nil {
							t.Error(err)
						}
					}
					if ended, unlisted := b.EndReview([]string{"fs"}); !ended {
						t.Errorf("EndReview after approving all = false, %q", unlisted)
					}
					return true
				}); err != nil {
					t.Fatal(err)
				}
				if res := check(v2, write, added, index.ToolSpec{Name: "list", InputSchema: json.RawMessage(`{"type":"object"}`)}); len(res.Held) != 0 || !reflect.DeepEqual(res.New, []string{"list"}) {
					t.Errorf("after the review: %+v, want nothing held and list pinned on first sight", res)
				}
			})
		}
	}
}

// bytesOf returns what damage makes of good.
func bytesOf(t *testing.T, damage func(*testing.T, string), good []byte) []byte {
	path := filepath.Join(t.TempDir(), "f")
	os.WriteFile(path, good, 0o600)
	damage(t, path)
	out, _ := os.ReadFile(path)
	return out
}
