package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

func TestComposesSeededTasksWithinASplit(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "q.jsonl")
	var buf bytes.Buffer
	for i, split := range []string{"dev", "dev", "dev", "dev", "test", "test", "test", "test"} {
		json.NewEncoder(&buf).Encode(query{ID: string(rune('a' + i)), Query: "do thing " + string(rune('a'+i)), Relevant: []string{"d/t" + string(rune('a'+i))}, Split: split})
	}
	json.NewEncoder(&buf).Encode(query{ID: "z", Query: "hacer algo", Relevant: []string{"d/tz"}, Split: "dev", Category: "non-English"})
	os.WriteFile(in, buf.Bytes(), 0o644)
	out1, out2 := filepath.Join(dir, "1.jsonl"), filepath.Join(dir, "2.jsonl")
	if err := run(in, out1, 30, 5); err != nil {
		t.Fatal(err)
	}
	run(in, out2, 30, 5)
	a, _ := os.ReadFile(out1)
	b, _ := os.ReadFile(out2)
	if !bytes.Equal(a, b) {
		t.Error("the same seed gave different tasks")
	}
	sc := bufio.NewScanner(bytes.NewReader(a))
	n := 0
	for sc.Scan() {
		n++
		var q query
		if err := json.Unmarshal(sc.Bytes(), &q); err != nil {
			t.Fatal(err)
		}
		if len(q.Relevant) < 2 || len(q.Relevant) > 4 || q.Category != "long-task" {
			t.Errorf("task %s: %d tools, category %q; want 2-4 and long-task", q.ID, len(q.Relevant), q.Category)
		}
		seen := map[string]bool{}
		for _, r := range q.Relevant {
			letter := r[len(r)-1]
			if seen[r] || letter == 'z' {
				t.Errorf("task %s: tool %s repeated or from a non-English query", q.ID, r)
			}
			seen[r] = true
			if inDev := letter <= 'd'; inDev != (q.Split == "dev") {
				t.Errorf("task %s (%s) uses %s from the other split", q.ID, q.Split, r)
			}
		}
	}
	if n != 30 {
		t.Errorf("%d tasks, want 30", n)
	}
}
