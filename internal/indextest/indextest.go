// Package indextest holds what the tests of index/keyword, index/vector
// and index/store share: small catalogs and an embedder that hashes
// words and counts what it embedded.
package indextest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"strings"
	"sync"
	"testing"

	"github.com/toolscout/toolscout/index"
)

// SmallCatalog is a catalog.json of 6 tools in 3 domains, two of them
// named create_issue.
const SmallCatalog = `{"domains":[
 {"name":"github","description":"GitHub repositories and issues","tools":[
  {"name":"getFileContents","description":"Read a file from a repository.","group":"repos","inputSchema":{"type":"object","properties":{"path":{"type":"string","description":"File path"}}}},
  {"name":"create_issue","description":"Open a new issue in a repository.","group":"issues","inputSchema":{"type":"object"}},
  {"name":"list_issues","description":"List the issues of a repository.","group":"issues","inputSchema":{"type":"object"}}]},
 {"name":"slack","description":"Slack chat","tools":[
  {"name":"post_message","description":"Send a message to a channel.","inputSchema":{"type":"object","properties":{"channel_id":{"type":"string"}}}},
  {"name":"search_messages","description":"Search messages in the workspace.","inputSchema":{"type":"object"}}]},
 {"name":"jira","description":"Jira tickets","tools":[
  {"name":"create_issue","description":"Create a ticket in a project.","inputSchema":{"type":"object"}}]}]}`

// MustCatalog parses and builds the catalog js, failing the test on an
// error.
func MustCatalog(t testing.TB, js string) *index.Catalog {
	t.Helper()
	specs, err := index.ParseCatalog("test", []byte(js))
	if err != nil {
		t.Fatal(err)
	}
	cat, err := index.NewCatalog(specs)
	if err != nil {
		t.Fatal(err)
	}
	return cat
}

// CountingEmbedder embeds by hashing words (HashVec) and counts the
// texts it embeds.
type CountingEmbedder struct {
	mu     sync.Mutex
	Texts  int
	Calls  int
	FailAt int // fail the call that would bring Texts above this (0: never)
}

// EmbedDocuments embeds texts with HashVec.
func (c *CountingEmbedder) EmbedDocuments(ctx context.Context, texts []string) ([][]float32, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.FailAt > 0 && c.Texts+len(texts) > c.FailAt {
		return nil, errors.New("embedder failed")
	}
	c.Calls++
	c.Texts += len(texts)
	out := make([][]float32, len(texts))
	for i, t := range texts {
		out[i] = HashVec(t)
	}
	return out, nil
}

// HashVec is a 16-dimensional bag of s's words, hashed.
func HashVec(s string) []float32 {
	v := make([]float32, 16)
	for _, w := range strings.Fields(strings.ToLower(s)) {
		h := fnv.New32a()
		h.Write([]byte(strings.Trim(w, ".,:")))
		v[h.Sum32()%16]++
	}
	v[0] += 0.01
	return v
}

// DeltaCatalog returns a catalog of 5 domains × 20 tools; edit changes
// it per tool (return false to leave the tool out).
func DeltaCatalog(t testing.TB, extra []string, edit func(d, i int, tool map[string]any) bool) *index.Catalog {
	t.Helper()
	words := []string{"alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel", "india", "juliet", "kilo", "lima"}
	var domains []map[string]any
	for d := 0; d < 5; d++ {
		var tools []map[string]any
		for i := 0; i < 20; i++ {
			tool := map[string]any{
				"name":        fmt.Sprintf("tool%02d", i),
				"description": fmt.Sprintf("Do %s %s with %s.", words[(d+i)%12], words[(3*i+1)%12], words[(d*7+i*5)%12]),
				"inputSchema": map[string]any{"type": "object"},
			}
			if edit == nil || edit(d, i, tool) {
				tools = append(tools, tool)
			}
		}
		if d == 0 {
			for _, name := range extra {
				tools = append(tools, map[string]any{"name": name, "description": "Added " + name + " later.", "inputSchema": map[string]any{"type": "object"}})
			}
		}
		domains = append(domains, map[string]any{"name": fmt.Sprintf("dom%d", d), "description": "Domain " + words[d], "tools": tools})
	}
	raw, err := json.Marshal(map[string]any{"domains": domains})
	if err != nil {
		t.Fatal(err)
	}
	return MustCatalog(t, string(raw))
}
