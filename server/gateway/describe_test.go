package gateway

import (
	"strings"
	"testing"

	"github.com/toolscout/toolscout/index"
	"github.com/toolscout/toolscout/search"
)

func TestDescribeUpstream(t *testing.T) {
	memory := []index.ToolSpec{
		{Name: "create_entities", Description: "Create multiple new entities in the knowledge graph"},
		{Name: "delete_entities", Description: "Delete multiple entities from the knowledge graph"},
		{Name: "add_observations", Description: "Add observations to entities in the knowledge graph"},
		{Name: "delete_observations", Description: "Delete observations from entities in the knowledge graph"},
		{Name: "read_graph", Description: "Read the whole knowledge graph"},
	}
	tests := []struct {
		name, title, instructions string
		tools                     []index.ToolSpec
		want                      []string
		not                       []string
	}{
		{"name in words and tool words", "memory-server", "", memory,
			[]string{"memory server.", "Tools about", "entities", "observations"}, []string{"graph"}},
		{"title and first sentence", "Memory Server", "Stores facts about people. Call read_graph first.\nThen search.", memory,
			[]string{"Memory Server. Stores facts about people. Tools about"}, []string{"Call read_graph"}},
		{"too few name words: descriptions too", "x", "", []index.ToolSpec{
			{Name: "echo", Description: "Echo a message back to the client"},
			{Name: "ping", Description: "Send a ping message to the client"},
		}, []string{"Tools about", "message", "client"}, nil},
		{"overlong instructions skipped", "srv", strings.Repeat("word ", 60) + ".", memory,
			[]string{"srv. Tools about"}, []string{"word word"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := describeUpstream(tc.title, tc.instructions, tc.tools, search.WordFrequency)
			for _, w := range tc.want {
				if !strings.Contains(got, w) {
					t.Errorf("describeUpstream = %q, want it to contain %q", got, w)
				}
			}
			for _, w := range tc.not {
				if strings.Contains(got, w) {
					t.Errorf("describeUpstream = %q, want no %q", got, w)
				}
			}
			if len(got) > maxDescription {
				t.Errorf("describeUpstream is %d bytes, over %d", len(got), maxDescription)
			}
		})
	}
}
