package eval

import (
	"math"
	"slices"
	"testing"

	"github.com/toolscout/toolscout/index"
)

func TestPlainBM25(t *testing.T) {
	specs, err := index.ParseCatalog("test.json", []byte(`{"domains": [{"name": "d", "tools": [
		{"name": "sendMail", "description": "Send an email message", "inputSchema": {"type": "object", "properties": {"to": {"type": "string", "description": "recipient address"}}}},
		{"name": "read_mail", "description": "Read the mail inbox", "inputSchema": {"type": "object"}},
		{"name": "weather", "description": "Forecast for a city", "inputSchema": {"type": "object"}}]}]}`))
	if err != nil {
		t.Fatal(err)
	}
	cat, err := index.NewCatalog(specs)
	if err != nil {
		t.Fatal(err)
	}
	p := newPlainBM25(cat)
	// Documents: [send mail send email message recipient address] (7
	// terms: "an" and "to" are stop words), [read mail read mail inbox]
	// (5), [weather forecast city] (3); avgdl 5.
	if got, want := p.dl, []float64{7, 5, 3}; !slices.Equal(got, want) {
		t.Fatalf("document lengths = %v, want %v", got, want)
	}
	for _, tc := range []struct {
		query string
		want  []string
	}{
		{"mail", []string{"d/read_mail", "d/sendMail"}}, // tf 2 in a shorter document wins
		{"the city forecast", []string{"d/weather"}},
		{"recipient", []string{"d/sendMail"}},
		{"nothing matches", nil},
	} {
		if got := p.rank(tc.query, 10); !slices.Equal(got, tc.want) {
			t.Errorf("rank(%q) = %v, want %v", tc.query, got, tc.want)
		}
	}
	// The score of "mail" in read_mail by the textbook formula.
	idf := math.Log(1 + (3-2+0.5)/(2+0.5))
	want := idf * 2 * 2.2 / (2 + 1.2*(1-0.75+0.75*5/5.0))
	if got := p.score("mail", 1); math.Abs(got-want) > 1e-12 {
		t.Errorf("score(mail, read_mail) = %v, want %v", got, want)
	}
}
