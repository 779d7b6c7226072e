package main

import (
	"errors"
	"strings"
	"testing"
)

// TestConfigInstructions: toolscout.instructions is read (trimmed),
// bounded with an error naming the key and the limit, and a typo of the
// key is named (issue 35, item 5: it was "unknown key").
func TestConfigInstructions(t *testing.T) {
	gc, err := parseConfig("c.json", []byte(`{"mcpServers": {}, "toolscout": {"instructions": "  Use the staging servers unless told otherwise.\n"}}`), env(nil))
	if err != nil || gc.Instructions != "Use the staging servers unless told otherwise." {
		t.Fatalf("instructions = %q, %v", gc.Instructions, err)
	}
	long := strings.Repeat("é", 2001)
	_, err = parseConfig("c.json", []byte(`{"mcpServers": {}, "toolscout": {"instructions": "`+long+`"}}`), env(nil))
	var ce *ConfigError
	if !errors.As(err, &ce) || ce.Path != "toolscout.instructions" || !strings.Contains(err.Error(), "2001 characters: at most 2000") {
		t.Errorf("2001 characters: %v", err)
	}
	_, err = parseConfig("c.json", []byte(`{"mcpServers": {}, "toolscout": {"instruction": "x"}}`), env(nil))
	if err == nil || !strings.Contains(err.Error(), `did you mean "instructions"`) {
		t.Errorf("a typo of the key: %v", err)
	}
}
