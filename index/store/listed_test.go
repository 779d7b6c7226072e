package store

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"github.com/toolscout/toolscout/index"
	"github.com/toolscout/toolscout/internal/fileio"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

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

// TestListedRoundTrip: what writeListed writes, readListed reads back
// whole, every field kept.
func TestListedRoundTrip(t *testing.T) {
	for _, tc := range []struct {
		name    string
		servers []index.ListedTools
		want    []index.ListedTools
	}{
		{"two servers", listedSample(), listedSample()},
		{"none", nil, []index.ListedTools{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var buf bytes.Buffer
			if err := writeListed(&buf, tc.servers); err != nil {
				t.Fatal(err)
			}
			got, err := readListed(&buf)
			if err != nil || !reflect.DeepEqual(got, tc.want) {
				t.Errorf("readListed(writeListed(%v)) = %+v, %v; want %+v", tc.servers, got, err, tc.want)
			}
		})
	}
}

// TestListedDamage: a file cut short, flipped, with a lying length or
// wrong magic, or whose JSON names an invalid or repeated domain, is an
// ErrListedCorrupt error, never a partial list.
func TestListedDamage(t *testing.T) {
	var buf bytes.Buffer
	if err := writeListed(&buf, listedSample()); err != nil {
		t.Fatal(err)
	}
	good := buf.Bytes()
	with := func(f func(b []byte) []byte) []byte { return f(append([]byte(nil), good...)) }
	reencode := func(servers []index.ListedTools) []byte {
		var b bytes.Buffer
		writeListed(&b, servers)
		return b.Bytes()
	}
	for _, tc := range []struct {
		name string
		data []byte
	}{
		{"empty", nil},
		{"header only", good[:listedHead]},
		{"cut in the body", good[:len(good)-5]},
		{"longer than said", append(append([]byte(nil), good...), ' ')},
		{"flipped byte", with(func(b []byte) []byte { b[len(b)-3] ^= 0x20; return b })},
		{"wrong magic", with(func(b []byte) []byte { b[0] = 'X'; return b })},
		{"huge length", with(func(b []byte) []byte { binary.LittleEndian.PutUint64(b[len(listedMagic)+4:], 1<<60); return b })},
		{"invalid domain", reencode([]index.ListedTools{{Domain: "Not Valid"}})},
		{"repeated domain", reencode([]index.ListedTools{{Domain: "a"}, {Domain: "a"}})},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := readListed(bytes.NewReader(tc.data))
			if !errors.Is(err, ErrListedCorrupt) || got != nil {
				t.Errorf("readListed(%s) = %v, %v; want nil and ErrListedCorrupt", tc.name, got, err)
			}
		})
	}
}

// TestStoreListedTools: the store keeps the servers' tools in its data
// dir, replaces them atomically, and removes a damaged file with a
// Healed line instead of failing; in memory it keeps nothing.
func TestStoreListedTools(t *testing.T) {
	dir := t.TempDir()
	s, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if got := s.ListedTools(); got != nil {
		t.Fatalf("ListedTools of a new data dir = %v, want nil", got)
	}
	if err := s.SaveListedTools(listedSample()); err != nil {
		t.Fatal(err)
	}
	if got := s.ListedTools(); !reflect.DeepEqual(got, listedSample()) {
		t.Errorf("ListedTools after SaveListedTools = %+v", got)
	}
	one := listedSample()[:1]
	if err := s.SaveListedTools(one); err != nil {
		t.Fatal(err)
	}
	if got := s.ListedTools(); !reflect.DeepEqual(got, one) {
		t.Errorf("ListedTools after a second save = %+v, want %+v", got, one)
	}
	if tmps, _ := filepath.Glob(filepath.Join(dir, listedFile+fileio.TmpSuffix+"*")); len(tmps) > 0 {
		t.Errorf("temporary files left: %v", tmps)
	}
	path := filepath.Join(dir, listedFile)
	data, _ := os.ReadFile(path)
	os.WriteFile(path, data[:len(data)/2], 0o644)
	if got := s.ListedTools(); got != nil {
		t.Errorf("ListedTools of a cut file = %v, want nil", got)
	}
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Errorf("the cut file is still there (%v)", err)
	}
	if h := strings.Join(s.Healed(), "\n"); !strings.Contains(h, listedFile) {
		t.Errorf("Healed = %q, want a line naming %s", h, listedFile)
	}
	mem, err := Open("")
	if err != nil {
		t.Fatal(err)
	}
	defer mem.Close()
	if err := mem.SaveListedTools(listedSample()); err != nil || mem.ListedTools() != nil {
		t.Errorf("in memory: save %v, read %v; want nothing kept", err, mem.ListedTools())
	}
}
