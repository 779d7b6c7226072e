package main

import (
	"strings"
	"testing"
)

// TestReportParts: the markdown report says where each way's tokens
// went, summed over the tasks, with each part's share of the way's
// total.
func TestReportParts(t *testing.T) {
	res := func(parts map[string]int) *result {
		r := &result{OK: true, Parts: parts}
		for _, n := range parts {
			r.Tokens += n
		}
		return r
	}
	rep := &report{Tasks: []*taskReport{
		{ID: "a", Steps: 2, Ways: map[string]*result{
			"meta": res(map[string]int{partUpfront: 400, partSchemaAnswer: 500, partToolAnswer: 100}),
			"code": res(map[string]int{partUpfront: 600, partDiscoverAnswer: 150, partProgram: 250}),
		}},
		{ID: "b", Steps: 3, Ways: map[string]*result{
			"meta": res(map[string]int{partUpfront: 400, partSchemaAnswer: 300, partToolAnswer: 300}),
			"code": res(map[string]int{partUpfront: 600, partDiscoverAnswer: 250, partProgram: 150}),
		}},
	}}
	var b strings.Builder
	if err := rep.write(&b, "markdown"); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{
		"| part | eager | meta | code |",
		"| " + partUpfront + " | – | 800 (40%) | 1200 (60%) |",
		"| " + partSchemaAnswer + " | – | 800 (40%) | 0 (0%) |",
		"| " + partDiscoverAnswer + " | – | 0 (0%) | 400 (20%) |",
		"| " + partProgram + " | – | 0 (0%) | 400 (20%) |",
		"| all | – | **2000** | **2000** |",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("report lacks %q:\n%s", want, out)
		}
	}
}
