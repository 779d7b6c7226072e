package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestBuiltinTasks: the checked-in tasks load, are at least 20, each of
// 2 to 6 steps, and every tool a step names is one of the reference
// servers' (or discover_tools), so that every task runs three ways.
func TestBuiltinTasks(t *testing.T) {
	tasks, err := loadTasks("")
	if err != nil {
		t.Fatal(err)
	}
	if len(tasks) < 20 {
		t.Errorf("%d tasks, want at least 20", len(tasks))
	}
	for _, tk := range tasks {
		for _, s := range tk.Steps {
			domain, _, _ := strings.Cut(s.Tool, "__")
			switch domain {
			case "memory", "filesystem", "everything", "discover_tools":
			default:
				t.Errorf("task %s: step %s is not a reference server's tool", tk.ID, s.Tool)
			}
		}
		if !strings.Contains(tk.Program, "tools.") && !strings.Contains(tk.Program, "toolscout.search") {
			t.Errorf("task %s: its program calls no tool", tk.ID)
		}
	}
}

// TestLoadTasksRefuses: a tasks file with a mistake is refused, saying
// which task and what.
func TestLoadTasksRefuses(t *testing.T) {
	ok := "- id: a\n  request: r\n  query: q\n  program: p\n  expect: '1'\n  steps:\n    - {tool: memory__read_graph}\n    - {tool: memory__read_graph}\n"
	tests := []struct {
		name, yaml, want string
	}{
		{"one step", strings.Replace(ok, "    - {tool: memory__read_graph}\n", "", 1), "1 steps, want 2 to 6"},
		{"no program", strings.Replace(ok, "  program: p\n", "", 1), "program are required"},
		{"expect not JSON", strings.Replace(ok, "'1'", "'{x'", 1), "expect is not JSON"},
		{"same id twice", ok + strings.Replace(ok, "- id: a", "- id: a", 1), "an id of its own"},
		{"bare tool name", strings.Replace(ok, "memory__read_graph", "read_graph", 1), "not a qualified name"},
		{"not YAML", "- [", "tasks:"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := filepath.Join(t.TempDir(), "tasks.yaml")
			if err := os.WriteFile(p, []byte(tt.yaml), 0o644); err != nil {
				t.Fatal(err)
			}
			_, err := loadTasks(p)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("loadTasks(%s) = %v, want an error with %q", tt.name, err, tt.want)
			}
		})
	}
	p := filepath.Join(t.TempDir(), "tasks.yaml")
	os.WriteFile(p, []byte(ok), 0o644)
	if _, err := loadTasks(p); err != nil {
		t.Errorf("a valid file: %v", err)
	}
}

func TestSameJSON(t *testing.T) {
	tests := []struct {
		a, b string
		want bool
	}{
		{`{"a":1,"b":[2]}`, `{"b":[2], "a":1}`, true},
		{`[1,2]`, `[2,1]`, false},
		{`"x"`, `"x"`, true},
		{`1`, `1.0`, true},
		{`{`, `{`, false},
	}
	for _, tt := range tests {
		if got := sameJSON([]byte(tt.a), []byte(tt.b)); got != tt.want {
			t.Errorf("sameJSON(%s, %s) = %v, want %v", tt.a, tt.b, got, tt.want)
		}
	}
}

// TestUnsigned: the code way looks up only the tools a search did not
// answer with a signature.
func TestUnsigned(t *testing.T) {
	answer := `{"query":"q","results":[{"name":"a__x","signature":"tools.a.x(args: {}): Promise<unknown>"},{"name":"a__y"},{"name":"b__z","signature":""}]}`
	tests := []struct {
		name   string
		tools  []string
		answer string
		want   []string
	}{
		{"all signed", []string{"a__x"}, answer, nil},
		{"listed without a signature, or not listed", []string{"a__x", "a__y", "b__z", "c__w"}, answer, []string{"a__y", "b__z", "c__w"}},
		{"an answer without signatures (an older server)", []string{"a__x"}, `{"results":[{"name":"a__x"}]}`, []string{"a__x"}},
		{"not JSON", []string{"a__x"}, "oops", []string{"a__x"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := unsigned(tt.tools, tt.answer); !slices.Equal(got, tt.want) {
				t.Errorf("unsigned(%v) = %v, want %v", tt.tools, got, tt.want)
			}
		})
	}
}
