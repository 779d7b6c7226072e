// Command genlongtasks writes the built-in dataset's long-task queries: each
// joins 2 to 4 single-tool queries of the built-in dataset into one task
// paragraph, the kind of multi-step request agents send ("find the latest
// papers on X, summarise them into a document and mail it to ..."), and
// labels it with the union of their relevant tools.
//
// The composition is mechanical and seeded, so that the long-query figures
// measure the ranking rather than queries written to fit it. Parts come
// from one split (dev tasks from dev queries, test from test), are English,
// and name different tools.
//
//	go run ./cmd/genlongtasks   (what `make longtasks` runs)
package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"strings"
)

type query struct {
	ID       string   `json:"id"`
	Query    string   `json:"query"`
	Relevant []string `json:"relevant"`
	Split    string   `json:"split,omitempty"`
	Category string   `json:"category,omitempty"`
}

func main() {
	in := flag.String("in", "eval/datasets/builtin/queries.jsonl", "single-tool queries to compose from")
	out := flag.String("out", "eval/datasets/builtin/longtasks.jsonl", "output file")
	n := flag.Int("n", 200, "number of long tasks")
	seed := flag.Uint64("seed", 1, "random seed")
	flag.Parse()
	if err := run(*in, *out, *n, *seed); err != nil {
		fmt.Fprintln(os.Stderr, "genlongtasks:", err)
		os.Exit(1)
	}
}

// Connectives that join the parts, chosen at random: plain English glue
// that says nothing about any tool.
var (
	firsts = []string{"", "First, ", "To start, ", "I need a few things. "}
	thens  = []string{"Then ", "After that, ", "Next, ", "Also, ", "Once that is done, "}
	lasts  = []string{"Finally, ", "Last, ", "And then ", "To finish, "}
)

func run(in, out string, n int, seed uint64) error {
	data, err := os.ReadFile(in)
	if err != nil {
		return err
	}
	bySplit := map[string][]query{}
	var splits []string
	sc := bufio.NewScanner(bytes.NewReader(data))
	for line := 1; sc.Scan(); line++ {
		var q query
		if err := json.Unmarshal(sc.Bytes(), &q); err != nil {
			return fmt.Errorf("%s:%d: %w", in, line, err)
		}
		if q.Category == "non-English" || len(q.Relevant) != 1 {
			continue
		}
		if _, ok := bySplit[q.Split]; !ok {
			splits = append(splits, q.Split)
		}
		bySplit[q.Split] = append(bySplit[q.Split], q)
	}
	total := 0
	for _, s := range splits {
		total += len(bySplit[s])
	}
	if total == 0 {
		return fmt.Errorf("%s: no single-tool English queries", in)
	}
	rng := rand.New(rand.NewPCG(seed, 0x10c7a5))
	var buf bytes.Buffer
	for i := 0; i < n; i++ {
		// Pick the split in proportion to its size.
		r := rng.IntN(total)
		split := splits[0]
		for _, s := range splits {
			if r < len(bySplit[s]) {
				split = s
				break
			}
			r -= len(bySplit[s])
		}
		pool := bySplit[split]
		k := 2 + rng.IntN(3)
		var parts []query
		var relevant []string
		for tries := 0; len(parts) < k && tries < 100; tries++ {
			q := pool[rng.IntN(len(pool))]
			if slices.Contains(relevant, q.Relevant[0]) {
				continue
			}
			parts = append(parts, q)
			relevant = append(relevant, q.Relevant[0])
		}
		task := query{ID: fmt.Sprintf("long%03d", i+1), Query: compose(rng, parts), Relevant: relevant, Split: split, Category: "long-task"}
		line, err := json.Marshal(task)
		if err != nil {
			return err
		}
		buf.Write(line)
		buf.WriteByte('\n')
	}
	return os.WriteFile(out, buf.Bytes(), 0o644)
}

func compose(rng *rand.Rand, parts []query) string {
	var b strings.Builder
	for i, p := range parts {
		s := strings.TrimSpace(p.Query)
		s = strings.TrimRight(s, ".?!")
		var lead string
		switch {
		case i == 0:
			lead = firsts[rng.IntN(len(firsts))]
		case i == len(parts)-1:
			lead = lasts[rng.IntN(len(lasts))]
		default:
			lead = thens[rng.IntN(len(thens))]
		}
		if i > 0 {
			b.WriteByte(' ')
		}
		if lead != "" && !strings.HasSuffix(lead, ". ") {
			s = lowerFirst(s)
		} else {
			s = upperFirst(s)
		}
		b.WriteString(lead + s + ".")
	}
	return b.String()
}

func lowerFirst(s string) string {
	if s == "" || (len(s) > 1 && s[1] >= 'A' && s[1] <= 'Z') {
		return s // an acronym ("PR 12 ...") keeps its case
	}
	return strings.ToLower(s[:1]) + s[1:]
}

func upperFirst(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}
