package text

import (
	"math/rand"
	"reflect"
	"strings"
	"testing"
)

func TestSplitIdentifier(t *testing.T) {
	for in, want := range map[string][]string{
		"getUserByID":       {"get", "user", "by", "id"},
		"s3_put-object.v2":  {"s3", "put", "object", "v2"},
		"HTMLParser":        {"html", "parser"},
		"EC2Instances":      {"ec2", "instances"},
		"oauth2 2fa":        {"oauth2", "2fa"},
		"Ünïcödé naïveCafé": {"ünïcödé", "naïve", "café"},
		"":                  nil,
		"--":                nil,
	} {
		if got := SplitIdentifier(in); !reflect.DeepEqual(got, want) {
			t.Errorf("SplitIdentifier(%q) = %q, want %q", in, got, want)
		}
	}
}

// The ASCII path must split exactly as the rune path does.
func TestSplitASCIIMatchesRunes(t *testing.T) {
	r := rand.New(rand.NewSource(3))
	pieces := []string{"a", "b", "Z", "Q", "7", "0", " ", "-", "_", ".", "/", "HTML", "Parser", "get", "ID", "s3", "x", "Y"}
	for i := 0; i < 5000; i++ {
		var b strings.Builder
		for j := r.Intn(10); j >= 0; j-- {
			b.WriteString(pieces[r.Intn(len(pieces))])
		}
		s := b.String()
		if got, want := splitASCII(s), splitRunes(s); !reflect.DeepEqual(got, want) {
			t.Fatalf("splitASCII(%q) = %q, splitRunes gives %q", s, got, want)
		}
	}
}

// EachWord gives the words SplitIdentifier gives, in order, for ASCII
// text and any other, with the buffer reused across calls.
func TestEachWordMatchesSplit(t *testing.T) {
	r := rand.New(rand.NewSource(5))
	pieces := []string{"a", "b", "Z", "Q", "7", "0", " ", "-", "_", ".", "/", "HTML", "Parser", "get", "ID", "s3", "x", "Y", "É", "ü", "東京", "Café"}
	var buf []byte
	for i := 0; i < 5000; i++ {
		var b strings.Builder
		for j := r.Intn(10); j >= 0; j-- {
			b.WriteString(pieces[r.Intn(len(pieces))])
		}
		s := b.String()
		var got []string
		buf = EachWord(s, buf, func(w []byte) { got = append(got, string(w)) })
		if want := SplitIdentifier(s); !reflect.DeepEqual(got, want) {
			t.Fatalf("EachWord(%q) gives %q, SplitIdentifier %q", s, got, want)
		}
	}
}
