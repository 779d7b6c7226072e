package main

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// BenchmarkGatewayFirstDiscover: how long after `toolscout serve
// --config` starts (behind it the three npm reference servers, the data
// dir indexed by `toolscout index --config`) a go-sdk client over stdio
// has its first discover_tools answer: the process start, initialize and
// the call. "known" starts with the tools the servers listed last (kept
// in the data dir); "unknown" with that file removed, as before it was
// kept: the answer waits for the servers. Reports the median and the
// slowest start in ms.
//
//	go test -run '^$' -bench BenchmarkGatewayFirstDiscover -benchtime 10x ./cmd/toolscout
func BenchmarkGatewayFirstDiscover(b *testing.B) {
	root, _ := filepath.Abs("../..")
	npm := func(name string) string { return filepath.Join(root, "node_modules", ".bin", name) }
	if _, err := os.Stat(npm("mcp-server-everything")); err != nil {
		b.Skip("npm packages are missing: run `npm ci` (make test does)")
	}
	bin := buildBinary(b)
	dir := b.TempDir()
	doc, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{
		"memory":     map[string]any{"command": npm("mcp-server-memory"), "env": map[string]string{"MEMORY_FILE_PATH": filepath.Join(dir, "m.jsonl")}},
		"files":      map[string]any{"command": npm("mcp-server-filesystem"), "args": []string{dir}},
		"everything": map[string]any{"command": npm("mcp-server-everything")},
	}})
	cfg := filepath.Join(dir, "servers.json")
	os.WriteFile(cfg, doc, 0o644)
	data := filepath.Join(dir, "data")
	flags := []string{"--config", cfg, "--data-dir", data, "--embedder", "builtin"}
	if out, err := exec.Command(bin, append([]string{"index"}, flags...)...).CombinedOutput(); err != nil {
		b.Fatalf("index: %v\n%s", err, out)
	}
	kept, _ := filepath.Glob(filepath.Join(data, "sets", "*", "upstreams.bin"))
	if len(kept) != 1 {
		b.Fatalf("index --config kept no upstream tools: %v", kept)
	}
	saved, err := os.ReadFile(kept[0])
	if err != nil {
		b.Fatal(err)
	}
	for _, known := range []bool{true, false} {
		name := "unknown"
		if known {
			name = "known"
		}
		b.Run(name, func(b *testing.B) {
			var took []time.Duration
			for range b.N {
				if known {
					os.WriteFile(kept[0], saved, 0o644)
				} else {
					os.Remove(kept[0])
				}
				ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
				cmd := exec.Command(bin, append([]string{"serve", "--log-level", "error"}, flags...)...)
				start := time.Now()
				cs, err := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "1"}, nil).Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
				if err != nil {
					b.Fatal(err)
				}
				res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "discover_tools", Arguments: map[string]any{"query": "create entities in the knowledge graph", "limit": 3}})
				took = append(took, time.Since(start))
				if err != nil || res.IsError {
					b.Fatalf("discover_tools: %v %+v", err, res)
				}
				b.StopTimer()
				cs.Close()
				cancel()
				b.StartTimer()
			}
			slices.Sort(took)
			b.ReportMetric(float64(took[len(took)/2].Microseconds())/1000, "ms-p50")
			b.ReportMetric(float64(took[len(took)-1].Microseconds())/1000, "ms-max")
		})
	}
}
