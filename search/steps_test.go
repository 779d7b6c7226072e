package search

import (
	"context"
	"reflect"
	"testing"

	"github.com/toolscout/toolscout/embed"
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

// TestLabelSteps: by default a request of several steps keeps the whole
// request's ranking, and each result says the step it fits.
func TestLabelSteps(t *testing.T) {
	eng := newTestEngine(t, embed.NewBuiltin(embed.BuiltinOptions{}))
	ctx := context.Background()
	q := "Get the weather forecast for a city. Then post a message to a channel"
	for _, mode := range Modes {
		resp, err := eng.Search(ctx, Request{Query: q, Mode: mode})
		if err != nil {
			t.Fatal(err)
		}
		whole, err := eng.Search(ctx, Request{Query: q, Mode: mode, Params: &Params{StepDepth: int(Off)}})
		if err != nil {
			t.Fatal(err)
		}
		if len(resp.Steps) != 2 || len(whole.Steps) != 0 {
			t.Fatalf("%s: steps %q with steps on, %q off", mode, resp.Steps, whole.Steps)
		}
		if got, want := names(resp.Results), names(whole.Results); !reflect.DeepEqual(got, want) {
			t.Errorf("%s: labelled ranking %v, whole request's %v", mode, got, want)
		}
		step := map[string]int{}
		for _, r := range resp.Results {
			step[r.Tool.QualifiedName] = r.Step
		}
		if step["weather__get_forecast"] != 1 || step["slack__post_message"] != 2 {
			t.Errorf("%s: steps %v, want get_forecast 1 and post_message 2", mode, step)
		}
	}
}
