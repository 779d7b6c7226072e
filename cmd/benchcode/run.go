package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/tiktoken-go/tokenizer"

	"github.com/toolscout/toolscout/index"
)

type options struct {
	bin, nodeModules, only string
	latency                int
	progress               io.Writer
	turns                  io.Writer // each turn's tokens (nil: not written)
}

// The ways of working, as serve's --expose.
var ways = []string{"eager", "meta", "code"}

// gateway is one toolscout serve over stdio, with fresh reference
// servers and a fresh copy of the project folder.
type gateway struct {
	cs   *mcp.ClientSession
	root string // the project folder
	// upfront is what the model reads before the first request:
	// tools/list and the instructions.
	upfront int
	tools   int       // tools listed
	turns   io.Writer // each turn's tokens, with -turns (else nil)
}

// startGateway starts serve --expose way in dir.
func startGateway(ctx context.Context, o options, way, dir string) (*gateway, error) {
	root := filepath.Join(dir, "project")
	if err := copyProject(root); err != nil {
		return nil, err
	}
	bins := filepath.Join(o.nodeModules, ".bin")
	cfg := map[string]any{"mcpServers": map[string]any{
		"memory":     map[string]any{"command": filepath.Join(bins, "mcp-server-memory"), "env": map[string]string{"MEMORY_FILE_PATH": filepath.Join(dir, "memory.jsonl")}},
		"filesystem": map[string]any{"command": filepath.Join(bins, "mcp-server-filesystem"), "args": []string{root}},
		"everything": map[string]any{"command": filepath.Join(bins, "mcp-server-everything")},
	}}
	data, _ := json.Marshal(cfg)
	cfgPath := filepath.Join(dir, "servers.json")
	if err := os.WriteFile(cfgPath, data, 0o644); err != nil {
		return nil, err
	}
	catalog, err := haystack(dir)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(o.bin, "serve", "--expose", way, "--config", cfgPath, "--catalog", catalog,
		"--embedder", "builtin", "--data-dir", filepath.Join(dir, "data"), "--log-level", "warn")
	cmd.Env = append(os.Environ(), "OLLAMA_HOST=127.0.0.1:9")
	cmd.Stderr = os.Stderr
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "benchcode", Version: "1"}, nil).Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		return nil, fmt.Errorf("start toolscout serve --expose %s: %w", way, err)
	}
	g := &gateway{cs: cs, root: root, turns: o.turns}
	// The upstream servers list their tools in the background: the
	// benchmark starts once all three have (eager lists them then).
	deadline := time.Now().Add(60 * time.Second)
	for {
		lt, err := cs.ListTools(ctx, nil)
		if err != nil {
			cs.Close()
			return nil, err
		}
		if way != "eager" || hasDomains(lt.Tools, "memory__", "filesystem__", "everything__") {
			if way != "eager" {
				if err := waitUpstreams(ctx, cs); err != nil {
					cs.Close()
					return nil, err
				}
			}
			b, _ := json.Marshal(lt.Tools)
			g.upfront = count(string(b)) + count(cs.InitializeResult().Instructions)
			g.tools = len(lt.Tools)
			return g, nil
		}
		if time.Now().After(deadline) {
			cs.Close()
			return nil, fmt.Errorf("serve --expose %s: the reference servers did not list their tools in a minute", way)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

func hasDomains(tools []*mcp.Tool, prefixes ...string) bool {
	for _, p := range prefixes {
		if !slices.ContainsFunc(tools, func(t *mcp.Tool) bool { return strings.HasPrefix(t.Name, p) }) {
			return false
		}
	}
	return true
}

// waitUpstreams waits until discover_tools lists the three servers with
// their tools.
func waitUpstreams(ctx context.Context, cs *mcp.ClientSession) error {
	for range 300 {
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "discover_tools", Arguments: map[string]any{"limit": 100}})
		if err != nil {
			return err
		}
		var out struct {
			Domains []struct {
				Name      string `json:"name"`
				ToolCount int    `json:"tool_count"`
			} `json:"domains"`
		}
		_ = json.Unmarshal([]byte(textOf(res)), &out)
		n := 0
		for _, d := range out.Domains {
			if (d.Name == "memory" || d.Name == "filesystem" || d.Name == "everything") && d.ToolCount > 0 {
				n++
			}
		}
		if n == 3 {
			return nil
		}
		time.Sleep(200 * time.Millisecond)
	}
	return fmt.Errorf("the reference servers did not list their tools in a minute")
}

// copyProject copies testdata/project (found beside this source file,
// or in the module's cmd/benchcode) to root.
func copyProject(root string) error {
	src, err := sourceDir("testdata/project")
	if err != nil {
		return err
	}
	return filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		dst := filepath.Join(root, rel)
		if d.IsDir() {
			return os.MkdirAll(dst, 0o755)
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(dst, data, 0o644)
	})
}

// sourceDir finds rel under cmd/benchcode, from the module root or
// from this folder (go test runs in it).
func sourceDir(rel string) (string, error) {
	for _, base := range []string{"cmd/benchcode", "."} {
		p, _ := filepath.Abs(filepath.Join(base, rel))
		if _, err := os.Stat(p); err == nil {
			return p, nil
		}
	}
	return "", fmt.Errorf("%s not found: run benchcode from the module root", rel)
}

// haystack writes, in dir, the built-in catalog without its memory and
// filesystem domains (the reference servers stand for them): the
// tools a search has to find the right ones among.
func haystack(dir string) (string, error) {
	var cat struct {
		Domains []map[string]any `json:"domains"`
	}
	if err := json.Unmarshal(index.BuiltinCatalogJSON(), &cat); err != nil {
		return "", fmt.Errorf("the built-in catalog: %w", err)
	}
	cat.Domains = slices.DeleteFunc(cat.Domains, func(d map[string]any) bool { return d["name"] == "memory" || d["name"] == "filesystem" })
	data, err := json.Marshal(cat)
	if err != nil {
		return "", err
	}
	p := filepath.Join(dir, "catalog.json")
	return p, os.WriteFile(p, data, 0o644)
}

// enc counts tokens as toolscout's own figures do.
var enc, _ = tokenizer.Get(tokenizer.O200kBase)

func count(s string) int {
	if s == "" {
		return 0
	}
	n, err := enc.Count(s)
	if err != nil {
		return len(s) / 4
	}
	return n
}

// textOf is what a client hands its model of a result: its text
// contents, or its structured content when it has no text.
func textOf(res *mcp.CallToolResult) string {
	var b strings.Builder
	for _, c := range res.Content {
		switch c := c.(type) {
		case *mcp.TextContent:
			b.WriteString(c.Text)
		default:
			j, _ := json.Marshal(c)
			b.Write(j)
		}
	}
	if b.Len() == 0 && res.StructuredContent != nil {
		j, _ := json.Marshal(res.StructuredContent)
		return string(j)
	}
	return b.String()
}

// turn is one model round trip: a tool call and its answer.
type turn struct {
	tool           string
	request, reply int // tokens
	ms             float64
	err            bool
	text           string
}

// callTool makes one call and measures it as a model turn.
func (g *gateway) callTool(ctx context.Context, name string, args map[string]any) (turn, *mcp.CallToolResult, error) {
	req, _ := json.Marshal(map[string]any{"name": name, "arguments": args})
	t0 := time.Now()
	res, err := g.cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
	ms := float64(time.Since(t0).Microseconds()) / 1000
	if err != nil {
		return turn{}, nil, fmt.Errorf("%s: %w", name, err)
	}
	text := textOf(res)
	return turn{tool: name, request: count(string(req)), reply: count(text), ms: ms, err: res.IsError, text: text}, res, nil
}
