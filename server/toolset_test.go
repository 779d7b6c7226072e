package server

import (
	"errors"
	"maps"
	"strings"
	"testing"
)

func TestToolsetRoundTrip(t *testing.T) {
	t.Parallel()
	for _, keys := range []map[string]bool{
		{},
		{"github": true},
		{"github/issues": true, "jira": true, "weather": true},
		{"a-b_c/group with spaces/and/slashes": true},
	} {
		h := encodeToolset(keys)
		got, err := decodeToolset(h)
		if err != nil || !maps.Equal(got, keys) {
			t.Errorf("decodeToolset(encodeToolset(%v)) = %v, %v", keys, got, err)
		}
		if !strings.HasPrefix(h, toolsetPrefix) || strings.ContainsAny(h, "+/= ") {
			t.Errorf("handle %q: want %q and URL-safe base64 without padding", h, toolsetPrefix)
		}
	}
	// The same set, however built, has the same handle.
	if a, b := encodeToolset(map[string]bool{"b": true, "a": true}), encodeToolset(map[string]bool{"a": true, "b": true}); a != b {
		t.Errorf("handles %q and %q of the same set differ", a, b)
	}
}

// FuzzDecodeToolset: no input crashes the decoder or is accepted without
// naming a set that encodes back to a handle of the same set.
func FuzzDecodeToolset(f *testing.F) {
	for _, s := range []string{"", "ts1.", "ts1.W10", encodeToolset(map[string]bool{"github/issues": true}), "ts1.WyIiXQ", "ts1.bnVsbA", "ts1.WzEsMl0"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, h string) {
		keys, err := decodeToolset(h)
		if err != nil {
			if !errors.Is(err, ErrInvalidToolset) {
				t.Fatalf("decodeToolset(%q): %v does not wrap ErrInvalidToolset", h, err)
			}
			return
		}
		again, err := decodeToolset(encodeToolset(keys))
		if err != nil || !maps.Equal(again, keys) {
			t.Fatalf("decodeToolset(%q) = %v, which encodes to %v, %v", h, keys, again, err)
		}
	})
}
