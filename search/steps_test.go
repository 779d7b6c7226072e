package search

import (
	"reflect"
	"testing"

	"github.com/toolscout/toolscout/index"
)

func TestSteps(t *testing.T) {
	for _, tc := range []struct {
		name, in string
		want     []string
	}{
		{"one sentence", "find the weather in Paris", []string{"find the weather in Paris"}},
		{"sentences", "Find the trial data for drug X. Chart the results! Save them as a PDF?",
			[]string{"Find the trial data for drug X", "Chart the results", "Save them as a PDF"}},
		{"connectives", "find the trial data for drug X, then chart the results and then save them as a PDF",
			[]string{"find the trial data for drug X", "then chart the results", "and then save them as a PDF"}},
		{"then without comma stays", "list the files then delete them", []string{"list the files then delete them"}},
		{"short piece joins the step before", "Book a flight to Rome. Thanks! Then rent a car there",
			[]string{"Book a flight to Rome. Thanks", "Then rent a car there"}},
		{"short first piece joins the next", "Hi. Book a flight to Rome", []string{"Hi. Book a flight to Rome"}},
		{"empty", "  ", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := Steps(tc.in); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("Steps(%q) = %q, want %q", tc.in, got, tc.want)
			}
		})
	}
	var long string
	for range 20 {
		long += "Do this one thing. "
	}
	if got := Steps(long); len(got) != maxSteps {
		t.Errorf("Steps of 20 sentences: %d steps, want %d", len(got), maxSteps)
	}
}

func TestLabelSteps(t *testing.T) {
	tool := func(n string) *index.Tool { return &index.Tool{QualifiedName: n} }
	res := func(ns ...string) []Result {
		var out []Result
		for _, n := range ns {
			out = append(out, Result{Tool: tool(n)})
		}
		return out
	}
	whole := res("a", "b", "c", "d")
	got := labelSteps(whole, [][]Result{res("c", "a"), res("a", "b")})
	var names []string
	var steps []int
	for _, r := range got {
		names = append(names, r.Tool.QualifiedName)
		steps = append(steps, r.Step)
	}
	// The order stays the whole request's; a's best rank is in step 2.
	if want := []string{"a", "b", "c", "d"}; !reflect.DeepEqual(names, want) {
		t.Errorf("labelSteps order = %v, want %v", names, want)
	}
	if want := []int{2, 2, 1, 0}; !reflect.DeepEqual(steps, want) {
		t.Errorf("labelSteps steps = %v, want %v", steps, want)
	}
}
