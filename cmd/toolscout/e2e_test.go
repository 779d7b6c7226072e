package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tiktoken-go/tokenizer"

	"github.com/toolscout/toolscout/index"
	"github.com/toolscout/toolscout/internal/synth"
	"github.com/toolscout/toolscout/server"
	"github.com/toolscout/toolscout/server/arguments"
)

// nodeClient returns the path of the TypeScript SDK client script, or
// skips the test when npm packages are not installed (outside CI only).
func nodeClient(t *testing.T) string {
	t.Helper()
	root, _ := filepath.Abs("../..")
	if _, err := exec.LookPath("node"); err != nil {
		needNode(t, "node is not installed")
	}
	if _, err := os.Stat(filepath.Join(root, "node_modules", "@modelcontextprotocol", "sdk")); err != nil {
		needNode(t, "npm packages are missing: run `npm ci` (make test does)")
	}
	return filepath.Join(root, "cmd", "toolscout", "testdata", "e2e_client.mjs")
}

func needNode(t *testing.T, why string) {
	t.Helper()
	if os.Getenv("CI") != "" {
		t.Fatal(why)
	}
	t.Skip(why)
}

// largestShown matches the instructions' two largest domains with their
// sizes, as a catalog of more than eight domains names them.
var largestShown = regexp.MustCompile(`the largest: github \(\d+ tools\), slack \(\d+ tools\)`)

type e2eOutput struct {
	Server       map[string]any `json:"server"`
	Instructions string         `json:"instructions"`
	Tools        []struct {
		Name        string         `json:"name"`
		Annotations map[string]any `json:"annotations"`
	} `json:"tools"`
	Contents struct {
		Domains []struct {
			Name      string `json:"name"`
			ToolCount int    `json:"tool_count"`
		} `json:"domains"`
		TotalTools int `json:"total_tools"`
	} `json:"contents"`
	Query struct {
		SearchMode string `json:"search_mode"`
		Embedder   string `json:"embedder"`
		Results    []struct {
			Name, Domain, Group, Summary string
		} `json:"results"`
	} `json:"query"`
	Domain struct {
		Domain string                  `json:"domain"`
		Tools  []struct{ Name string } `json:"tools"`
	} `json:"domain"`
	Schema struct {
		Tools []struct {
			Name        string         `json:"name"`
			InputSchema map[string]any `json:"inputSchema"`
			Examples    []struct {
				Arguments map[string]any `json:"arguments"`
				Source    string         `json:"source"`
			} `json:"examples"`
			RelatedTools []struct{ Name, Summary string } `json:"related_tools"`
		} `json:"tools"`
	} `json:"schema"`
	Unknown struct {
		IsError bool                    `json:"isError"`
		Content []struct{ Text string } `json:"content"`
	} `json:"unknown"`
}

func checkE2E(t *testing.T, raw []byte) {
	t.Helper()
	var out e2eOutput
	if err := json.Unmarshal(raw, &out); err != nil {
		t.Fatalf("client output %q: %v", raw, err)
	}
	var names []string
	for _, tool := range out.Tools {
		names = append(names, tool.Name)
	}
	if strings.Join(names, ",") != "discover_tools,execute_tool,get_tool_schema" {
		t.Errorf("tools/list = %v, want exactly the three meta-tools", names)
	}
	if out.Server["name"] != "toolscout" || !strings.Contains(out.Instructions, "discover_tools") {
		t.Errorf("server %v, instructions %q", out.Server, out.Instructions)
	}
	// The client initializes while the index loads: the instructions
	// still name the largest domains with their sizes, as they do after.
	if !largestShown.MatchString(out.Instructions) {
		t.Errorf("instructions %q: want the largest domains with their sizes, as in github (41 tools), slack (…)", out.Instructions)
	}
	if out.Contents.TotalTools < 300 || len(out.Contents.Domains) < 15 {
		t.Errorf("contents: %d tools in %d domains", out.Contents.TotalTools, len(out.Contents.Domains))
	}
	if out.Query.SearchMode != "hybrid" || out.Query.Embedder != "builtin/wordvec-v2" || len(out.Query.Results) != 3 ||
		out.Query.Results[0].Name != "kubernetes__rollout_restart" || out.Query.Results[0].Summary == "" {
		t.Errorf("query answer = %+v", out.Query)
	}
	if out.Domain.Domain != "weather" || len(out.Domain.Tools) != 5 {
		t.Errorf("domain answer = %+v", out.Domain)
	}
	if len(out.Schema.Tools) != 1 || out.Schema.Tools[0].InputSchema["type"] != "object" {
		t.Fatalf("schema answer = %+v", out.Schema)
	}
	// Examples validate against the schema; related tools are other tools
	// of the same domain.
	cat, err := index.BuiltinCatalog()
	if err != nil {
		t.Fatal(err)
	}
	st := out.Schema.Tools[0]
	if len(st.Examples) == 0 {
		t.Errorf("schema answer has no examples")
	}
	for _, ex := range st.Examples {
		if err := arguments.Validate(cat.Tool(st.Name), ex.Arguments); err != nil || ex.Source == "" {
			t.Errorf("example %+v: %v", ex, err)
		}
	}
	if len(st.RelatedTools) == 0 {
		t.Errorf("schema answer has no related tools")
	}
	for _, r := range st.RelatedTools {
		if !strings.HasPrefix(r.Name, "kubernetes__") || r.Name == st.Name || r.Summary == "" {
			t.Errorf("related tool %+v", r)
		}
	}
	if !out.Unknown.IsError || len(out.Unknown.Content) == 0 || !strings.Contains(out.Unknown.Content[0].Text, "did you mean kubernetes__rollout_restart") {
		t.Errorf("unknown tool answer = %+v", out.Unknown)
	}
}

// TestEndToEndStdioAndHTTP: the TypeScript SDK client's fixed script
// against a serve over stdio and one over HTTP, both sessions in one node
// process (one SDK load), at once.
func TestEndToEndStdioAndHTTP(t *testing.T) {
	t.Parallel()
	client := nodeClient(t)
	bin := buildBinary(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	srv := exec.CommandContext(ctx, bin, "serve", "--http", "127.0.0.1:0", "--embedder", "builtin", "--data-dir", t.TempDir())
	stderr, err := srv.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		srv.Process.Signal(os.Interrupt)
		srv.Wait()
	}()
	urlRE := regexp.MustCompile(`http://127\.0\.0\.1:\d+/mcp`)
	sc := bufio.NewScanner(stderr)
	url := ""
	for sc.Scan() {
		if m := urlRE.FindString(sc.Text()); m != "" {
			url = m
			break
		}
	}
	if url == "" {
		t.Fatal("serve --http printed no URL")
	}
	go func() {
		for sc.Scan() {
		}
	}()
	cmd := exec.CommandContext(ctx, "node", client, "http", url, "stdio", bin, "serve", "--embedder", "builtin", "--data-dir", t.TempDir())
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("node client over HTTP and stdio: %v\n%s", err, out)
	}
	lines := bytes.Split(bytes.TrimSpace(out), []byte("\n"))
	if len(lines) != 2 {
		t.Fatalf("node client printed %d lines, want one for HTTP and one for stdio:\n%s", len(lines), out)
	}
	t.Run("http", func(t *testing.T) { checkE2E(t, lines[0]) })
	t.Run("stdio", func(t *testing.T) { checkE2E(t, lines[1]) })
}

func TestEndToEndGateway(t *testing.T) {
	t.Parallel()
	nodeClient(t)
	root, _ := filepath.Abs("../..")
	memory := filepath.Join(root, "node_modules", ".bin", "mcp-server-memory")
	bin := buildBinary(t)
	dir := t.TempDir()
	cfg := filepath.Join(dir, "servers.json")
	os.WriteFile(cfg, []byte(`{"mcpServers": {"memory": {"command": "`+memory+`", "env": {"MEMORY_FILE_PATH": "`+filepath.Join(dir, "m.jsonl")+`"}}}}`), 0o644)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, "node", filepath.Join(root, "cmd", "toolscout", "testdata", "e2e_gateway.mjs"),
		bin, "serve", "--config", cfg, "--embedder", "builtin", "--data-dir", filepath.Join(dir, "data"))
	cmd.Stderr = os.Stderr
	raw, err := cmd.Output()
	if err != nil {
		t.Fatalf("node gateway client: %v\n%s", err, raw)
	}
	var out struct {
		Tools    []string `json:"tools"`
		Discover struct {
			Results []struct{ Name string } `json:"results"`
		} `json:"discover"`
		Create struct {
			IsError bool `json:"isError"`
		} `json:"create"`
		Read struct {
			IsError bool                    `json:"isError"`
			Content []struct{ Text string } `json:"content"`
		} `json:"read"`
	}
	if err := json.Unmarshal(raw, &out); err != nil {
		t.Fatalf("%v: %s", err, raw)
	}
	if strings.Join(out.Tools, ",") != "discover_tools,execute_tool,get_tool_schema" {
		t.Errorf("tools/list = %v", out.Tools)
	}
	if len(out.Discover.Results) == 0 || !strings.HasPrefix(out.Discover.Results[0].Name, "memory__") {
		t.Errorf("first discover (right after initialize) = %+v, want memory tools", out.Discover)
	}
	if out.Create.IsError || out.Read.IsError || len(out.Read.Content) == 0 || !strings.Contains(out.Read.Content[0].Text, "owns the billing service") {
		t.Errorf("create/read through the gateway: %+v / %+v", out.Create, out.Read)
	}
}

// TestEndToEndThousandDomains: on a generated catalog of 1,000 domains,
// through the TypeScript SDK, the instructions stay about 80 tokens and
// the domain listing comes in bounded pages that a client follows with
// next_cursor to the end.
func TestEndToEndThousandDomains(t *testing.T) {
	t.Parallel()
	client := nodeClient(t)
	script := filepath.Join(filepath.Dir(client), "e2e_scale.mjs")
	bin := buildBinary(t)
	data, err := json.Marshal(map[string]any{"domains": synth.Specs(2000, 2, 1)})
	if err != nil {
		t.Fatal(err)
	}
	catalog := filepath.Join(t.TempDir(), "catalog.json")
	if err := os.WriteFile(catalog, data, 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, "node", script, bin, "serve", "--catalog", catalog, "--embedder", "builtin", "--data-dir", t.TempDir(), "--log-level", "warn")
	cmd.Stderr = os.Stderr
	raw, err := cmd.Output()
	if err != nil {
		t.Fatalf("node client: %v\n%s", err, raw)
	}
	var out struct {
		Instructions string
		Pages        []struct {
			Names []string
			Total int
			Bytes int
			Next  *string
		}
		Bad struct {
			IsError bool
			Content []struct{ Text string }
		}
	}
	if err := json.Unmarshal(raw, &out); err != nil {
		t.Fatalf("client output %.500s: %v", raw, err)
	}
	enc, err := tokenizer.Get(tokenizer.O200kBase)
	if err != nil {
		t.Fatal(err)
	}
	// Eight domains named, each with two words (72b2699 moved the
	// built-in catalog's budget from 90 to 120 for the words; this
	// client, initializing before the index loaded, got none until the
	// command passed them too).
	if ids, _, _ := enc.Encode(out.Instructions); len(ids) > 120 || !strings.Contains(out.Instructions, "1000 domains") || !strings.Contains(out.Instructions, "svc000 (") {
		t.Errorf("instructions at 1,000 domains: %d tokens, %q; want at most 120 naming the count and the largest domains with their words", len(ids), out.Instructions)
	}
	seen := map[string]bool{}
	for i, p := range out.Pages {
		if len(p.Names) > server.PageSize || p.Total != 1000 {
			t.Errorf("page %d: %d domains of %d, want at most %d of 1000", i, len(p.Names), p.Total, server.PageSize)
		}
		if p.Bytes > 20000 {
			t.Errorf("page %d is %d bytes: a page should stay small", i, p.Bytes)
		}
		for _, n := range p.Names {
			if seen[n] {
				t.Errorf("domain %s listed twice", n)
			}
			seen[n] = true
		}
	}
	if len(seen) != 1000 {
		t.Errorf("following next_cursor listed %d domains in %d pages, want all 1000", len(seen), len(out.Pages))
	}
	if !out.Bad.IsError || len(out.Bad.Content) == 0 || !strings.Contains(out.Bad.Content[0].Text, "next_cursor") {
		t.Errorf("a bad cursor gave %+v, want an error saying what to pass", out.Bad)
	}
}

// e2eTools runs e2e_tools.mjs against `toolscout serve args...` with env
// added to the environment.
func e2eTools(t *testing.T, env []string, args ...string) (count int, names []string, discover string) {
	t.Helper()
	var out struct {
		Count    int
		Names    []string
		Discover json.RawMessage
	}
	nodeClient(t) // skips without node, before the build
	runScript(t, "e2e_tools.mjs", buildBinary(t), append(env, "WAIT_MS=15000"), args, &out)
	return out.Count, out.Names, string(out.Discover)
}

// runScript runs the node script of testdata against `bin serve
// args...`, with env added to the environment, and decodes the JSON
// values it prints into outs, one each, in order (90 s for each).
func runScript(t *testing.T, script, bin string, env, args []string, outs ...any) {
	t.Helper()
	script = filepath.Join(filepath.Dir(nodeClient(t)), script)
	ctx, cancel := context.WithTimeout(context.Background(), time.Duration(len(outs))*90*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, "node", append([]string{script, bin, "serve"}, args...)...)
	cmd.Env = append(os.Environ(), env...)
	cmd.Stderr = os.Stderr
	raw, err := cmd.Output()
	if err != nil {
		t.Fatalf("node client: %v\n%s", err, raw)
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	for _, out := range outs {
		if err := dec.Decode(out); err != nil {
			t.Fatalf("client output %.300s: %v", raw, err)
		}
	}
	if dec.More() {
		t.Fatalf("client output %.300s: more than %d JSON values", raw, len(outs))
	}
}

// TestExposeFromEnvironment: TOOLSCOUT_EXPOSE chooses the loading mode
// when neither --expose nor the config does.
func TestExposeFromEnvironment(t *testing.T) {
	t.Parallel()
	count, names, discover := e2eTools(t, []string{"TOOLSCOUT_EXPOSE=eager"}, "--embedder", "builtin", "--data-dir", t.TempDir())
	if count != 302+3 || !slices.Contains(names, "kubernetes__rollout_restart") {
		t.Errorf("TOOLSCOUT_EXPOSE=eager listed %d tools, want the 302 built-in ones and the 3 meta-tools", count)
	}
	if !strings.Contains(discover, "kubernetes__rollout_restart") {
		t.Errorf("discover_tools in eager mode = %s", discover)
	}
}

// TestFallbackEager: with TOOLSCOUT_FALLBACK=eager, a server whose index
// cannot load (here: --embedder ollama with no Ollama) lists every tool
// directly instead of stopping, and a client that never calls a
// meta-tool loses nothing.
func TestFallbackEager(t *testing.T) {
	t.Parallel()
	env := []string{"TOOLSCOUT_FALLBACK=eager", "OLLAMA_HOST=127.0.0.1:9"}
	count, names, _ := e2eTools(t, env, "--embedder", "ollama", "--data-dir", t.TempDir())
	if count != 302+3 || !slices.Contains(names, "weather__get_forecast") {
		t.Errorf("fallback listed %d tools, want the 302 built-in ones and the 3 meta-tools", count)
	}
}
