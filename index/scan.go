package index

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"strings"
	"sync/atomic"
)

// Reading a catalog file again after a small edit: most of its tools are
// byte for byte what the previous build read, so instead of decoding all
// of them, scanCatalog finds each tool's bytes, a digest of them (with
// its domain's name and description) picks out the tools the previous
// build already has, and only the others are decoded. At 100k tools the
// JSON decoding alone took 0.5 s of a 2.2 s re-index.

// domainSpans are the raw JSON values of one domain of a catalog document.
type domainSpans struct {
	name, desc []byte   // nil when absent
	tools      [][]byte // nil when "tools" is absent
	hasTools   bool
}

// scanCatalog finds the parts of a catalog document without decoding
// them. ok is false unless encoding/json would read the document's
// structure exactly as the spans say: any key but "domains" at the top,
// a domain key that differs from "name", "description" or "tools" only
// in case (encoding/json matches keys without regard to case), a key
// with an escape, a repeated key, or anything malformed outside the
// values. The values themselves are checked when they are decoded; a
// tool's value taken from the previous build without decoding is byte
// for byte one that decoded then.
func scanCatalog(data []byte) ([]domainSpans, bool) {
	s := scanner{data: data}
	if !s.expect('{') {
		return nil, false
	}
	var domains []domainSpans
	seen := false
	ok := s.members(func(key string) bool {
		if key != "domains" || seen {
			return false
		}
		seen = true
		var ok bool
		domains, ok = s.domains()
		return ok
	})
	if !ok || !seen || domains == nil {
		return nil, false
	}
	s.space()
	return domains, s.pos == len(data)
}

type scanner struct {
	data []byte
	pos  int
}

func (s *scanner) space() {
	for s.pos < len(s.data) {
		switch s.data[s.pos] {
		case ' ', '\t', '\n', '\r':
			s.pos++
		default:
			return
		}
	}
}

// expect skips spaces and then c.
func (s *scanner) expect(c byte) bool {
	s.space()
	if s.pos < len(s.data) && s.data[s.pos] == c {
		s.pos++
		return true
	}
	return false
}

// peek skips spaces and says whether c comes next.
func (s *scanner) peek(c byte) bool {
	s.space()
	return s.pos < len(s.data) && s.data[s.pos] == c
}

// members reads the members of an object whose '{' was read, calling
// member with each key (which must then read the value).
func (s *scanner) members(member func(key string) bool) bool {
	if s.expect('}') {
		return true
	}
	for {
		key, ok := s.key()
		if !ok || !s.expect(':') || !member(key) {
			return false
		}
		if s.expect('}') {
			return true
		}
		if !s.expect(',') {
			return false
		}
	}
}

// key reads a string without escapes.
func (s *scanner) key() (string, bool) {
	if !s.expect('"') {
		return "", false
	}
	start := s.pos
	for s.pos < len(s.data) {
		switch c := s.data[s.pos]; {
		case c == '"':
			s.pos++
			return string(s.data[start : s.pos-1]), true
		case c == '\\' || c < 0x20:
			return "", false
		}
		s.pos++
	}
	return "", false
}

// elements reads the elements of an array whose '[' was read.
func (s *scanner) elements(element func() bool) bool {
	if s.expect(']') {
		return true
	}
	for {
		if !element() {
			return false
		}
		if s.expect(']') {
			return true
		}
		if !s.expect(',') {
			return false
		}
	}
}

func (s *scanner) domains() ([]domainSpans, bool) {
	if !s.expect('[') {
		return nil, false
	}
	out := []domainSpans{}
	ok := s.elements(func() bool {
		if !s.expect('{') {
			return false
		}
		var d domainSpans
		var seen [3]bool
		ok := s.members(func(key string) bool {
			slot := -1
			switch key {
			case "name":
				slot = 0
			case "description":
				slot = 1
			case "tools":
				slot = 2
			default:
				if strings.EqualFold(key, "name") || strings.EqualFold(key, "description") || strings.EqualFold(key, "tools") {
					return false
				}
				// Never decoded, so checked here.
				v, ok := s.value()
				return ok && json.Valid(v)
			}
			if seen[slot] {
				return false
			}
			seen[slot] = true
			switch slot {
			case 0, 1:
				v, ok := s.value()
				if slot == 0 {
					d.name = v
				} else {
					d.desc = v
				}
				return ok
			}
			d.hasTools = true
			if !s.expect('[') {
				return false // null or another type: decoded whole, with its error
			}
			d.tools = [][]byte{}
			return s.elements(func() bool {
				if !s.peek('{') {
					return false
				}
				v, ok := s.value()
				d.tools = append(d.tools, v)
				return ok
			})
		})
		out = append(out, d)
		return ok
	})
	return out, ok
}

// value skips one JSON value and returns its bytes. It checks the nesting
// of brackets and the ends of strings, not the value's grammar: decoding
// does that.
func (s *scanner) value() ([]byte, bool) {
	s.space()
	start := s.pos
	depth := 0
	for s.pos < len(s.data) {
		c := s.data[s.pos]
		switch c {
		case '"':
			s.pos++
			for {
				if s.pos >= len(s.data) {
					return nil, false
				}
				c := s.data[s.pos]
				s.pos++
				if c == '"' {
					break
				}
				if c == '\\' {
					s.pos++
				}
			}
			if depth == 0 {
				return s.data[start:s.pos], true
			}
			continue
		case '{', '[':
			depth++
		case '}', ']':
			if depth == 0 {
				return s.data[start:s.pos], s.pos > start
			}
			depth--
			if depth == 0 {
				s.pos++
				return s.data[start:s.pos], true
			}
		case ',', ' ', '\t', '\n', '\r', ':':
			if depth == 0 {
				return s.data[start:s.pos], s.pos > start
			}
		}
		s.pos++
	}
	return s.data[start:s.pos], depth == 0 && s.pos > start
}

// toolNameIs reports whether the tool object tool has the member
// "name": name, written without escapes (false when unsure).
func toolNameIs(tool []byte, name string) bool {
	s := scanner{data: tool}
	var v []byte
	if !s.expect('{') {
		return false
	}
	s.members(func(key string) bool {
		if key == "name" {
			v, _ = s.value()
			return false // found: stop
		}
		_, ok := s.value()
		return ok
	})
	return len(v) == len(name)+2 && v[0] == '"' && v[len(v)-1] == '"' && string(v[1:len(v)-1]) == name
}

// rawDigest identifies a tool by the bytes it is read from: its own
// value and its domain's name and description, as written.
func rawDigest(name, desc, tool []byte) string {
	h := sha256.New()
	var n [8]byte
	for _, b := range [...][]byte{name, desc, tool} {
		binary.LittleEndian.PutUint64(n[:], uint64(len(b)))
		h.Write(n[:])
		h.Write(b)
	}
	return string(h.Sum(nil))
}

// scannedFile is a catalog file scanned for its tools' bytes and
// digested, before its tools are matched with the previous build's.
type scannedFile struct {
	file  string
	data  []byte
	spans []domainSpans // nil: not scanned, read by ParseCatalog
	doms  []DomainSpec  // the domains, their tools still to fill
	jobs  []scanJob
}

// scanJob is the j-th tool of the i-th domain, the k-th of the file, and
// the digest of its bytes.
type scanJob struct {
	i, j, k int
	raw     string
}

// scanFile scans data and digests its tools' bytes, on all cores.
func scanFile(file string, data []byte) *scannedFile {
	f := &scannedFile{file: file, data: data}
	spans, ok := scanCatalog(data)
	if !ok {
		return f
	}
	specs := make([]DomainSpec, len(spans))
	var jobs []scanJob
	for i, d := range spans {
		ds := DomainSpec{Source: file}
		if d.name != nil && json.Unmarshal(d.name, &ds.Name) != nil ||
			d.desc != nil && json.Unmarshal(d.desc, &ds.Description) != nil {
			return f
		}
		if d.tools != nil {
			ds.Tools = make([]ToolSpec, len(d.tools))
		}
		for j := range d.tools {
			jobs = append(jobs, scanJob{i: i, j: j, k: len(jobs)})
		}
		specs[i] = ds
	}
	inParallel(len(jobs), func(lo, hi int) {
		for k := lo; k < hi; k++ {
			d := spans[jobs[k].i]
			jobs[k].raw = rawDigest(d.name, d.desc, d.tools[jobs[k].j])
		}
	})
	f.spans, f.doms, f.jobs = spans, specs, jobs
	return f
}

// specs returns the file's domains, its tools taken from the previous
// build (m, nil for none) where it read the same bytes, decoded
// otherwise; the decoded ones go into read with the digest of their
// bytes. A document scanCatalog does not read, or one with an error,
// goes to ParseCatalog, which reports the error where it is (and whose
// tools have no digest: the next read decodes them again).
func (f *scannedFile) specs(m *rawMatcher, read readTable) ([]DomainSpec, error) {
	if f.spans == nil {
		return ParseCatalog(f.file, f.data)
	}
	decoded := make([]bool, len(f.jobs))
	var failed atomic.Bool
	inParallel(len(f.jobs), func(lo, hi int) {
		for _, jb := range f.jobs[lo:hi] {
			ts := &f.doms[jb.i].Tools[jb.j]
			var old *Tool
			if m != nil {
				old = m.at(jb.k)
			}
			if old == nil || old.rawDigest() != jb.raw {
				// Edited in place (the tool at its place has its name):
				// decoded. Moved (inserted or removed tools around it,
				// every later one shifted): maybe read before.
				raw := f.spans[jb.i].tools[jb.j]
				if old != nil && old.Domain == f.doms[jb.i].Name && toolNameIs(raw, old.Name) {
					old = nil
				} else if m != nil {
					old = m.find(jb.raw)
				}
				if old == nil {
					if json.Unmarshal(raw, ts) != nil {
						failed.Store(true)
						return
					}
					decoded[jb.k] = true
				}
			}
			if old != nil {
				*ts = old.spec()
			}
		}
	})
	if failed.Load() {
		return ParseCatalog(f.file, f.data)
	}
	for _, jb := range f.jobs {
		if decoded[jb.k] {
			ds := &f.doms[jb.i]
			read[toolKey{ds.Name, ds.Tools[jb.j].Name}] = readTool{raw: jb.raw, desc: ds.Description, spec: ds.Tools[jb.j]}
		}
	}
	return f.doms, nil
}
