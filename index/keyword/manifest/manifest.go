// Package manifest owns the keyword index's manifest format: the value
// index/keyword stores in its Bleve index's internal key
// "toolscout_manifest", one line per indexed tool with its content hash
// and its fields' word counts. It is a package of its own, with the
// standard library alone, so that `make fuzz` builds its fuzz target
// without instrumenting Bleve and bbolt (index/keyword imports them).
//
//	m, err := manifest.Decode(raw) // each id's hash
//	w, err := manifest.NewWalk(raw) // in catalog order, for a Sync
//	found, same, lengths := w.Take(id, hash)
package manifest

import (
	"bytes"
	"errors"
	"fmt"
	"strconv"
)

// Header starts the manifest: then a line "<qualified name>\t<hash>
// \t<lengths>" for each indexed tool, lengths as AppendLengths writes
// them (the tool's field lengths, index/keyword's bm25stats.go).
// Qualified names and hashes hold neither tabs nor newlines. A line may
// lack its lengths: a Sync then counts the whole catalog's. Earlier
// manifests are brought to this format by index/keyword's Migrate.
const Header = "TSKWM02\n"

// NumLengths is how many counts a line's lengths hold.
const NumLengths = 9

// MaxToolLength bounds each count read from a manifest, so that no sum
// of 100k tools' counts overflows.
const MaxToolLength = 1 << 30

// AppendLengths appends l as the manifest writes it: the counts in
// decimal, separated by commas.
func AppendLengths(b []byte, l [NumLengths]int) []byte {
	for i, n := range l {
		if i > 0 {
			b = append(b, ',')
		}
		b = strconv.AppendInt(b, int64(n), 10)
	}
	return b
}

// ParseLengths reads what AppendLengths wrote; false when b is not
// that.
func ParseLengths(b []byte) ([NumLengths]int, bool) {
	var l [NumLengths]int
	for i := range l {
		if i > 0 {
			if len(b) == 0 || b[0] != ',' {
				return l, false
			}
			b = b[1:]
		}
		j := 0
		for j < len(b) && j < 11 && b[j] >= '0' && b[j] <= '9' {
			j++
		}
		n, err := strconv.Atoi(string(b[:j]))
		if j == 0 || err != nil || n > MaxToolLength {
			return l, false
		}
		l[i], b = n, b[j:]
	}
	return l, len(b) == 0
}

// LineFormat returns what follows the header of a manifest in lines,
// and whether it is one.
func LineFormat(raw []byte) ([]byte, bool) {
	return bytes.CutPrefix(raw, []byte(Header))
}

// Decode reads a manifest as each id's hash; an empty one has none.
func Decode(raw []byte) (map[string]string, error) {
	if len(raw) == 0 {
		return map[string]string{}, nil
	}
	rest, lines := LineFormat(raw)
	if !lines {
		return nil, errors.New("unknown format")
	}
	m := make(map[string]string, bytes.Count(rest, []byte{'\n'}))
	_, err := Lines(rest, func(id, hash, _ []byte) { m[string(id)] = string(hash) })
	return m, err
}

// Lines calls f on each line of a manifest in lines (rest: what follows
// the header), in order, lengths nil where the line has none; a damaged
// line is an error. all says whether every line had lengths.
func Lines(rest []byte, f func(id, hash, lengths []byte)) (all bool, err error) {
	all = true
	for len(rest) > 0 {
		line, after, ok := bytes.Cut(rest, []byte{'\n'})
		id, hash, tab := bytes.Cut(line, []byte{'\t'})
		if !ok || !tab || len(id) == 0 {
			return false, fmt.Errorf("damaged line %q", line)
		}
		hash, lengths, has := bytes.Cut(hash, []byte{'\t'})
		if has {
			if _, ok := ParseLengths(lengths); !ok {
				return false, fmt.Errorf("damaged line %q", line)
			}
		} else {
			lengths, all = nil, false
		}
		f(id, hash, lengths)
		rest = after
	}
	return all, nil
}

// Walk answers what the manifest recorded for each tool, asked in
// catalog order. While the catalog follows the manifest's own order
// (the same catalog, or one edited in place), it reads the next line;
// from the first tool asked out of order on, it asks a map of the lines
// left. A catalog with 1% of its tools changed is so compared without a
// map of every id.
type Walk struct {
	rest []byte         // lines not yet read, in order (m == nil)
	m    map[string]row // the lines left, once asked out of order
	// lengths: every line has the tool's lengths.
	lengths bool
}

// row is what a manifest line says of a tool: its hash and its lengths
// as written (empty when the line has none).
type row struct{ hash, lengths string }

// NewWalk returns the walk of a manifest (raw as stored: a header and
// lines, or empty); a damaged line is an error.
func NewWalk(raw []byte) (*Walk, error) {
	if rest, ok := LineFormat(raw); ok {
		all, err := Lines(rest, func(_, _, _ []byte) {})
		if err != nil {
			return nil, err
		}
		return &Walk{rest: rest, lengths: all && len(rest) > 0}, nil
	}
	m, err := Decode(raw)
	if err != nil {
		return nil, err
	}
	return HashWalk(m), nil
}

// HashWalk returns the walk of a manifest of hashes alone.
func HashWalk(hashes map[string]string) *Walk {
	w := &Walk{m: make(map[string]row, len(hashes))}
	for id, h := range hashes {
		w.m[id] = row{hash: h}
	}
	return w
}

// AllLengths reports whether every line of the walk's manifest has its
// tool's lengths (and it has a line).
func (w *Walk) AllLengths() bool { return w.lengths }

// Take reports whether the manifest has id, and with hash, and forgets
// the line; lengths are the line's lengths as written (nil when it has
// none).
func (w *Walk) Take(id, hash string) (found, same bool, lengths []byte) {
	if w.m == nil {
		line, after, _ := bytes.Cut(w.rest, []byte{'\n'})
		if lid, lhash, _ := bytes.Cut(line, []byte{'\t'}); len(line) > 0 && string(lid) == id {
			w.rest = after
			lhash, lengths, _ = bytes.Cut(lhash, []byte{'\t'})
			return true, string(lhash) == hash, lengths
		}
		w.m = make(map[string]row)
		Lines(w.rest, func(id, hash, lengths []byte) { // checked by NewWalk
			w.m[string(id)] = row{string(hash), string(lengths)}
		})
		w.rest = nil
	}
	r, ok := w.m[id]
	if ok {
		delete(w.m, id)
		if r.lengths != "" {
			lengths = []byte(r.lengths)
		}
	}
	return ok, ok && r.hash == hash, lengths
}

// Left calls f on the ids never taken, with their lines' lengths (nil
// when none): documents the catalog no longer has.
func (w *Walk) Left(f func(id string, lengths []byte)) {
	if w.m == nil {
		Lines(w.rest, func(id, _, lengths []byte) { f(string(id), lengths) })
		return
	}
	for id, r := range w.m {
		var l []byte
		if r.lengths != "" {
			l = []byte(r.lengths)
		}
		f(id, l)
	}
}
