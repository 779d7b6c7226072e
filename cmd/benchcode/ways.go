package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/toolscout/toolscout/server/codemode"
)

// result is one task done one way.
type result struct {
	// Tokens is everything that reached the model's context, once:
	// tools/list and instructions, the user's request, each call and
	// each answer.
	Tokens  int `json:"tokens"`
	Upfront int `json:"upfront"` // of which tools/list and instructions
	// Processed is what the model read over the task: each of its turns
	// (one per round trip, and the last, which answers the user) reads
	// the whole context so far, as an API bills input tokens.
	Processed  int     `json:"processed"`
	RoundTrips int     `json:"round_trips"` // tool calls the model made
	WallMS     float64 `json:"wall_ms"`     // the calls' time, as the client saw it
	OK         bool    `json:"ok"`
	Note       string  `json:"note,omitempty"`
	// Parts splits Tokens by where they came from (the part* keys):
	// where code mode's tokens go, beside the other ways'.
	Parts map[string]int `json:"parts"`
}

// The parts of result.Tokens, in the order the report lists them.
const (
	partUpfront        = "tools/list + instructions"
	partRequest        = "the user's request"
	partDiscoverCall   = "discover_tools: requests"
	partDiscoverAnswer = "discover_tools: answers"
	partSchemaCall     = "get_tool_schema: requests"
	partSchemaAnswer   = "get_tool_schema: answers"
	partToolCall       = "tool calls (execute_tool or direct): requests"
	partToolAnswer     = "tool calls (execute_tool or direct): answers"
	partProgram        = "run_code: the programs"
	partRunAnswer      = "run_code: answers"
)

var partOrder = []string{partUpfront, partRequest, partDiscoverCall, partDiscoverAnswer, partSchemaCall, partSchemaAnswer,
	partToolCall, partToolAnswer, partProgram, partRunAnswer}

// turnParts names the parts a turn's request and answer count in.
func turnParts(tool string) (request, answer string) {
	switch tool {
	case "discover_tools":
		return partDiscoverCall, partDiscoverAnswer
	case "get_tool_schema":
		return partSchemaCall, partSchemaAnswer
	case "run_code":
		return partProgram, partRunAnswer
	}
	return partToolCall, partToolAnswer
}

// taskReport is one task done every way.
type taskReport struct {
	ID    string             `json:"id"`
	Steps int                `json:"steps"`
	Ways  map[string]*result `json:"ways"`
}

// run runs every task each way, then the mistakes and the latency.
func run(ctx context.Context, o options, tasks []task) (*report, error) {
	rep := &report{}
	var picked []task
	for _, t := range tasks {
		if strings.Contains(t.ID, o.only) {
			picked = append(picked, t)
		}
	}
	for _, t := range picked {
		rep.Tasks = append(rep.Tasks, &taskReport{ID: t.ID, Steps: len(t.Steps), Ways: map[string]*result{}})
	}
	for _, way := range ways {
		dir, err := os.MkdirTemp("", "benchcode-"+way+"-")
		if err != nil {
			return nil, err
		}
		defer os.RemoveAll(dir)
		g, err := startGateway(ctx, o, way, dir)
		if err != nil {
			return nil, err
		}
		rep.Upfront = append(rep.Upfront, upfront{Way: way, Tools: g.tools, Tokens: g.upfront})
		for i, t := range picked {
			fmt.Fprintf(o.progress, "%s %s\n", way, t.ID)
			r, err := g.do(ctx, way, t)
			if err != nil {
				g.cs.Close()
				return nil, fmt.Errorf("%s, %s: %w", t.ID, way, err)
			}
			if !r.OK {
				rep.Failed++
			}
			rep.Tasks[i].Ways[way] = r
		}
		if way == "code" {
			fmt.Fprintln(o.progress, "mistakes")
			if rep.Mistakes, err = g.mistakes(ctx); err != nil {
				g.cs.Close()
				return nil, err
			}
			for _, m := range rep.Mistakes {
				if !m.OK {
					rep.Failed++
				}
			}
			if o.latency > 0 {
				fmt.Fprintln(o.progress, "latency")
				if rep.Latency, err = g.latency(ctx, o.latency); err != nil {
					g.cs.Close()
					return nil, err
				}
			}
		}
		g.cs.Close()
	}
	return rep, nil
}

// do runs t the way way.
func (g *gateway) do(ctx context.Context, way string, t task) (*result, error) {
	r := &result{Upfront: g.upfront, Tokens: g.upfront + count(t.Request), OK: true,
		Parts: map[string]int{partUpfront: g.upfront, partRequest: count(t.Request)}}
	r.Processed = r.Tokens // the first turn reads the request
	add := func(tr turn) {
		if g.turns != nil {
			fmt.Fprintf(g.turns, "%s\t%s\t%s\trequest %d\tanswer %d\n", t.ID, way, tr.tool, tr.request, tr.reply)
		}
		r.Tokens += tr.request + tr.reply
		req, ans := turnParts(tr.tool)
		r.Parts[req] += tr.request
		r.Parts[ans] += tr.reply
		r.Processed += r.Tokens // the next turn reads it all
		r.RoundTrips++
		r.WallMS += tr.ms
	}
	var tools []string
	for _, s := range t.Steps {
		if s.Tool != "discover_tools" && !slices.Contains(tools, s.Tool) {
			tools = append(tools, s.Tool)
		}
	}
	switch way {
	case "eager", "meta":
		if way == "meta" {
			tr, _, err := g.callTool(ctx, "discover_tools", map[string]any{"query": t.Query, "limit": 5})
			if err != nil {
				return nil, err
			}
			add(tr)
			if len(tools) > 0 {
				if tr, _, err = g.callTool(ctx, "get_tool_schema", map[string]any{"tool_names": tools}); err != nil {
					return nil, err
				}
				add(tr)
			}
		}
		for i, s := range t.Steps {
			args, _ := argsWithRoot(s.Args, g.root).(map[string]any)
			if args == nil {
				args = map[string]any{}
			}
			name, callArgs := s.Tool, args
			if way == "meta" && s.Tool != "discover_tools" {
				name, callArgs = "execute_tool", map[string]any{"tool_name": s.Tool, "arguments": args}
			}
			tr, _, err := g.callTool(ctx, name, callArgs)
			if err != nil {
				return nil, err
			}
			add(tr)
			if tr.err {
				r.OK = false
				r.Note = fmt.Sprintf("step %d (%s) failed: %.200s", i+1, s.Tool, tr.text)
			}
		}
	case "code":
		tr, _, err := g.callTool(ctx, "discover_tools", map[string]any{"query": t.Query, "limit": 5})
		if err != nil {
			return nil, err
		}
		add(tr)
		// A tool the search answered with its signature needs no
		// lookup; the others are declared in one get_tool_schema.
		if need := unsigned(tools, tr.text); len(need) > 0 {
			if tr, _, err = g.callTool(ctx, "get_tool_schema", map[string]any{"tool_names": need, "format": "typescript"}); err != nil {
				return nil, err
			}
			add(tr)
		}
		tr, _, err = g.callTool(ctx, "run_code", map[string]any{"code": withRoot(t.Program, g.root)})
		if err != nil {
			return nil, err
		}
		add(tr)
		var ans codemode.Answer
		if err := json.Unmarshal([]byte(tr.text), &ans); err != nil {
			return nil, fmt.Errorf("run_code answer: %v: %.300s", err, tr.text)
		}
		switch {
		case ans.Error != nil:
			r.OK, r.Note = false, fmt.Sprintf("%s: %s", ans.Error.Kind, ans.Error.Message)
		case !sameJSON(ans.Result, []byte(withRoot(t.Expect, g.root))):
			r.OK, r.Note = false, fmt.Sprintf("result %s, want %s", ans.Result, withRoot(t.Expect, g.root))
		}
	}
	return r, nil
}

// sameJSON reports whether a and b are the same JSON value.
func sameJSON(a, b []byte) bool {
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return false
	}
	xa, _ := json.Marshal(x)
	ya, _ := json.Marshal(y)
	return string(xa) == string(ya)
}

// unsigned returns the tools of tools that a discover_tools answer
// (its content text) does not give a signature for: those a code-mode
// agent still has to look up before it writes its program.
func unsigned(tools []string, answer string) []string {
	type entry struct {
		Name      string `json:"name"`
		Signature string `json:"signature"`
	}
	var a struct {
		Results []entry `json:"results"`
	}
	_ = json.Unmarshal([]byte(answer), &a)
	var out []string
	for _, t := range tools {
		if !slices.ContainsFunc(a.Results, func(r entry) bool { return r.Name == t && r.Signature != "" }) {
			out = append(out, t)
		}
	}
	return out
}
