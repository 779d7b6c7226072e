package main

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"os"
	"strings"

	"gopkg.in/yaml.v3"
)

//go:embed tasks.yaml
var builtinTasks []byte

// task is one multi-step task: what the user asks, the search an agent
// makes for it, the calls a step-by-step agent makes, the program a
// code-mode agent writes, and the answer the program must return.
// "{{root}}" in any of them is the project folder's path.
type task struct {
	ID      string `yaml:"id"`
	Request string `yaml:"request"`
	// Query is the discover_tools query both meta and code mode send.
	Query string `yaml:"query"`
	// Steps are the tool calls, in order (qualified names).
	Steps []step `yaml:"steps"`
	// Program is the run_code program.
	Program string `yaml:"program"`
	// Expect is the program's result, as JSON.
	Expect string `yaml:"expect"`
}

type step struct {
	Tool string         `yaml:"tool"`
	Args map[string]any `yaml:"args"`
}

// loadTasks reads the tasks file (the built-in one for "") and checks
// every task.
func loadTasks(path string) ([]task, error) {
	data := builtinTasks
	if path != "" {
		var err error
		if data, err = os.ReadFile(path); err != nil {
			return nil, err
		}
	}
	var tasks []task
	if err := yaml.Unmarshal(data, &tasks); err != nil {
		return nil, fmt.Errorf("tasks: %w", err)
	}
	seen := map[string]bool{}
	for i, t := range tasks {
		where := fmt.Sprintf("task %d (%s)", i+1, t.ID)
		switch {
		case t.ID == "" || seen[t.ID]:
			return nil, fmt.Errorf("%s: an id of its own is required", where)
		case t.Request == "" || t.Query == "" || t.Program == "":
			return nil, fmt.Errorf("%s: request, query and program are required", where)
		case len(t.Steps) < 2 || len(t.Steps) > 6:
			return nil, fmt.Errorf("%s: %d steps, want 2 to 6", where, len(t.Steps))
		case !json.Valid([]byte(strings.ReplaceAll(t.Expect, "{{root}}", "/r"))):
			return nil, fmt.Errorf("%s: expect is not JSON: %q", where, t.Expect)
		}
		for _, s := range t.Steps {
			if !strings.Contains(s.Tool, "__") && s.Tool != "discover_tools" {
				return nil, fmt.Errorf("%s: step tool %q is not a qualified name", where, s.Tool)
			}
		}
		seen[t.ID] = true
	}
	return tasks, nil
}

// withRoot replaces "{{root}}" in s.
func withRoot(s, root string) string { return strings.ReplaceAll(s, "{{root}}", root) }

// argsWithRoot replaces "{{root}}" in every string of v.
func argsWithRoot(v any, root string) any {
	switch x := v.(type) {
	case string:
		return withRoot(x, root)
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = argsWithRoot(e, root)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = argsWithRoot(e, root)
		}
		return out
	}
	return v
}
