package main

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/toolscout/toolscout/server/codemode"
)

// mistake is a program with an error models make, and what the answer
// must say for the model to put it right in one step.
type mistake struct {
	Name    string   `json:"name"`
	Code    string   `json:"-"`
	Kind    string   `json:"kind"`            // the answer's error.kind ("" for a cut result)
	Want    []string `json:"-"`               // what the message must name
	Message string   `json:"message"`         // what it said
	OK      bool     `json:"ok"`              // it said all of Want
	Limit   string   `json:"limit,omitempty"` // error.limit
	Trunc   string   `json:"truncated,omitempty"`
}

var mistakeBattery = []mistake{
	{Name: "misspelt tool", Code: `await tools.memory.create_entitys({entities: []})`, Kind: codemode.KindTool,
		Want: []string{"unknown tool", "memory__create_entities"}},
	{Name: "misspelt domain", Code: `await tools.memroy.read_graph({})`, Kind: codemode.KindTool,
		Want: []string{"unknown tool", "memroy__read_graph"}},
	{Name: "wrong argument type", Code: `await tools.everything.get_sum({a: "2", b: 3})`, Kind: codemode.KindTool,
		Want: []string{"everything__get-sum", "a", "number"}},
	{Name: "missing required argument", Code: `await tools.memory.open_nodes({})`, Kind: codemode.KindTool,
		Want: []string{"memory__open_nodes", "names"}},
	{Name: "arguments not an object", Code: `await tools.memory.search_nodes("Acme")`, Kind: codemode.KindRuntime,
		Want: []string{"tools.memory.search_nodes takes one object of arguments"}},
	{Name: "missing await", Code: `const g = tools.memory.read_graph({}); return g.entities.length;`, Kind: codemode.KindRuntime,
		Want: []string{"await tools.memory.read_graph(...)", ".entities"}},
	{Name: "a tool that errors", Code: `await tools.filesystem.read_text_file({path: "/etc/passwd"})`, Kind: codemode.KindTool,
		Want: []string{"filesystem__read_text_file", "denied"}},
	{Name: "a syntax error", Code: "const x = {a: 1;\nreturn x;", Kind: codemode.KindSyntax,
		Want: []string{"SyntaxError", "Line 1"}},
	{Name: "a thrown error", Code: "const x = null;\nreturn x.name;", Kind: codemode.KindRuntime,
		Want: []string{"TypeError", "line 2"}},
	{Name: "a result over the answer budget", Code: `const r = []; for (let i = 0; i < 20000; i++) r.push({i, text: "row " + i}); r`,
		Want: []string{"return less"}},
	{Name: "a loop that never ends", Code: `while (true) {}`, Kind: codemode.KindLimit,
		Want: []string{"look for a loop that never ends"}},
}

// mistakes runs the battery in code mode.
func (g *gateway) mistakes(ctx context.Context) ([]mistake, error) {
	var out []mistake
	for _, m := range mistakeBattery {
		code := m.Code
		args := map[string]any{"code": code}
		if m.Kind == codemode.KindLimit {
			args["timeout_ms"] = 20000
		}
		tr, _, err := g.callTool(ctx, "run_code", args)
		if err != nil {
			return nil, fmt.Errorf("mistake %q: %w", m.Name, err)
		}
		var ans codemode.Answer
		if err := json.Unmarshal([]byte(tr.text), &ans); err != nil {
			return nil, fmt.Errorf("mistake %q: %v: %.200s", m.Name, err, tr.text)
		}
		said := ans.Truncated
		kind := ""
		if ans.Error != nil {
			said, kind, m.Limit = ans.Error.Message, ans.Error.Kind, ans.Error.Limit
		}
		m.Message, m.Trunc = said, ans.Truncated
		m.OK = kind == m.Kind && said != ""
		for _, w := range m.Want {
			m.OK = m.OK && strings.Contains(said, w)
		}
		out = append(out, m)
	}
	return out, nil
}

// latencyReport is what a program of three fast calls costs over the
// calls themselves.
type latencyReport struct {
	Programs int `json:"programs"`
	// OverheadP50 and OverheadP99: run_code's time as the client saw it
	// less the three calls' own (as the sandbox's bridge timed them), ms.
	OverheadP50 float64 `json:"overhead_p50_ms"`
	OverheadP99 float64 `json:"overhead_p99_ms"`
	// CallsP50: the three calls' own time; ProgramP50: the whole run_code.
	CallsP50   float64 `json:"calls_p50_ms"`
	ProgramP50 float64 `json:"program_p50_ms"`
}

const threeCalls = `const a = await tools.everything.echo({message: "one"});
const b = await tools.everything.get_sum({a: 1, b: 2});
const c = await tools.everything.echo({message: "three"});
return [a, b, c].length;`

// latency runs n programs of three fast calls, one at a time (after 5
// to warm up).
func (g *gateway) latency(ctx context.Context, n int) (*latencyReport, error) {
	var over, calls, whole []float64
	for i := range n + 5 {
		t0 := time.Now()
		tr, _, err := g.callTool(ctx, "run_code", map[string]any{"code": threeCalls})
		if err != nil {
			return nil, err
		}
		ms := float64(time.Since(t0).Microseconds()) / 1000
		var ans codemode.Answer
		if err := json.Unmarshal([]byte(tr.text), &ans); err != nil || ans.Error != nil || len(ans.Calls) != 3 {
			return nil, fmt.Errorf("latency program: %v %.300s", err, tr.text)
		}
		sum := 0.0
		for _, c := range ans.Calls {
			sum += c.Ms
		}
		if i < 5 {
			continue // warm-up
		}
		over = append(over, ms-sum)
		calls = append(calls, sum)
		whole = append(whole, ms)
	}
	return &latencyReport{Programs: n, OverheadP50: pct(over, 50), OverheadP99: pct(over, 99), CallsP50: pct(calls, 50), ProgramP50: pct(whole, 50)}, nil
}

func pct(v []float64, p int) float64 {
	if len(v) == 0 {
		return 0
	}
	s := slices.Clone(v)
	sort.Float64s(s)
	i := (len(s)*p + 99) / 100
	return s[max(min(i, len(s))-1, 0)]
}
