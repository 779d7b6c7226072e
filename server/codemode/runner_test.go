package codemode

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"strings"
	"sync"
	"testing"
	"time"
)

func TestMain(m *testing.M) {
	ChildMain()
	os.Exit(m.Run())
}

// fakeBridge is a bridge over a few tools in memory: the real one (the
// server's) is tested in package server.
type fakeBridge struct {
	mu     sync.Mutex
	calls  []string
	tools  map[string]func(args map[string]any) (any, error)
	search func(q string, limit int) any
	delay  time.Duration
}

func (b *fakeBridge) Call(ctx context.Context, domain, tool string, args json.RawMessage) (string, json.RawMessage, error) {
	name := domain + "__" + tool
	b.mu.Lock()
	b.calls = append(b.calls, name)
	fn := b.tools[name]
	b.mu.Unlock()
	if fn == nil {
		return "", nil, fmt.Errorf("unknown tool %s.%s", domain, tool)
	}
	if b.delay > 0 {
		select {
		case <-time.After(b.delay):
		case <-ctx.Done():
			return name, nil, ctx.Err()
		}
	}
	var a map[string]any
	if err := json.Unmarshal(args, &a); err != nil {
		return name, nil, fmt.Errorf("arguments: %v", err)
	}
	v, err := fn(a)
	if err != nil {
		return name, nil, err
	}
	if raw, ok := v.(json.RawMessage); ok {
		// Bytes as an upstream's result arrives: encoding 100 MB here
		// under -race took longer than the program's wall limit on a
		// loaded machine, a limit of the test, not of the sandbox.
		return name, raw, nil
	}
	out, err := json.Marshal(v)
	return name, out, err
}

func (b *fakeBridge) Search(ctx context.Context, q string, limit int) (json.RawMessage, error) {
	if b.search == nil {
		return json.RawMessage(`{"results":[]}`), nil
	}
	out, err := json.Marshal(b.search(q, limit))
	return out, err
}

func kvBridge() *fakeBridge {
	store := map[string]any{}
	var mu sync.Mutex
	return &fakeBridge{tools: map[string]func(map[string]any) (any, error){
		"kv__put": func(a map[string]any) (any, error) {
			mu.Lock()
			defer mu.Unlock()
			k, _ := a["key"].(string)
			if k == "" {
				return nil, errors.New("key is required")
			}
			store[k] = a["value"]
			return map[string]any{"stored": k}, nil
		},
		"kv__get": func(a map[string]any) (any, error) {
			mu.Lock()
			defer mu.Unlock()
			k, _ := a["key"].(string)
			v, ok := store[k]
			if !ok {
				return nil, fmt.Errorf("no key %q", k)
			}
			return map[string]any{"key": k, "value": v}, nil
		},
		"kv__big": func(a map[string]any) (any, error) {
			n, _ := a["bytes"].(float64)
			b := bytes.Repeat([]byte{'x'}, int(n)+2)
			b[0], b[len(b)-1] = '"', '"'
			return json.RawMessage(b), nil
		},
	}}
}

func newTestRunner(t *testing.T, opts Options) *Runner {
	t.Helper()
	r := New(opts)
	t.Cleanup(func() { r.Close() })
	return r
}

func run(t *testing.T, r *Runner, code string, lim Limits, b Bridge) *Answer {
	t.Helper()
	ans, err := r.Run(context.Background(), code, lim, b)
	if err != nil {
		t.Fatalf("Run(%q): %v", code, err)
	}
	return ans
}

func TestRunPrograms(t *testing.T) {
	r := newTestRunner(t, Options{})
	tests := []struct {
		name       string
		code       string
		wantResult string
		wantCalls  []string
		wantKind   string
		wantMsg    string
		wantLog    []string
	}{
		{name: "last expression", code: "1 + 2", wantResult: "3"},
		{name: "return", code: "const a = 2;\nreturn a * 21;", wantResult: "42"},
		{name: "nothing", code: "let x = 1;", wantResult: "null"},
		{name: "modern syntax", code: "const o = {a: {b: [1, 2]}};\nconst {a: {b: [, two]}} = o;\n`${two}` + (o?.c?.d ?? '!')", wantResult: `"2!"`},
		{name: "chained tool calls", code: `await tools.kv.put({key: "a", value: {n: 7}});
const got = await tools.kv.get({key: "a"});
got.value.n * 6`, wantResult: "42", wantCalls: []string{"kv__put", "kv__get"}},
		{name: "bracket access", code: `(await tools["kv"]["put"]({key: "b", value: 1})).stored`, wantResult: `"b"`, wantCalls: []string{"kv__put"}},
		{name: "tool error caught", code: `try { await tools.kv.get({key: "none"}); } catch (e) { return [e.name, e.message, e.tool]; }`,
			wantResult: `["ToolError","no key \"none\"","kv__get"]`, wantCalls: []string{"kv__get"}},
		{name: "tool error uncaught", code: `await tools.kv.get({key: "none"})`, wantKind: KindTool, wantMsg: `no key "none"`, wantCalls: []string{"kv__get"}},
		{name: "unknown tool", code: `await tools.kv.gte({key: "a"})`, wantKind: KindTool, wantMsg: "unknown tool kv.gte", wantCalls: []string{"kv.gte"}},
		{name: "arguments not an object", code: `await tools.kv.get("a")`, wantKind: KindRuntime, wantMsg: "tools.kv.get takes one object of arguments"},
		{name: "syntax error", code: "return (1 +;", wantKind: KindSyntax, wantMsg: "SyntaxError"},
		{name: "unmatched brace", code: "}); process.exit(); (() => {", wantKind: KindSyntax, wantMsg: "SyntaxError"},
		{name: "runtime error with line", code: "const a = 1;\nnull.x", wantKind: KindRuntime, wantMsg: "line 2"},
		{name: "missing await", code: `const g = tools.kv.put({key: "a", value: 1}); g.stored`, wantKind: KindRuntime, wantMsg: "write `await tools.kv.put(...)`", wantCalls: []string{"kv__put"}},
		{name: "missing await in the result", code: `({r: tools.kv.put({key: "a", value: 1})})`, wantKind: KindRuntime, wantMsg: "gives a Promise", wantCalls: []string{"kv__put"}},
		{name: "returned promise", code: `return tools.kv.put({key: "a", value: 1})`, wantResult: `{"stored":"a"}`, wantCalls: []string{"kv__put"}},
		{name: "Promise.all", code: `const [a, b] = await Promise.all([tools.kv.put({key: "a", value: 1}), tools.kv.put({key: "b", value: 2})]); a.stored + b.stored`, wantResult: `"ab"`, wantCalls: []string{"kv__put", "kv__put"}},
		{name: "then", code: `await tools.kv.put({key: "a", value: 1}).then(r => r.stored + "!")`, wantResult: `"a!"`, wantCalls: []string{"kv__put"}},
		{name: "console", code: `console.log("hello", {a: 1}); console.warn("careful"); 1`, wantResult: "1", wantLog: []string{`hello {"a":1}`, "[warn] careful"}},
		{name: "a large tool result", code: `(await tools.kv.big({bytes: 3e6})).length`, wantResult: "3000000", wantCalls: []string{"kv__big"}},
		{name: "search", code: `(await toolscout.search("store a value", {limit: 3})).results.length`, wantResult: "0", wantCalls: []string{"toolscout.search"}},
		{name: "result not JSON", code: `const a = {}; a.a = a; a`, wantKind: KindRuntime, wantMsg: "cannot be turned into JSON"},
		{name: "pending forever", code: `await new Promise(() => {})`, wantKind: KindRuntime, wantMsg: "nothing settles"},
		{name: "empty", code: "  ", wantKind: KindSyntax, wantMsg: "empty"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := kvBridge()
			ans := run(t, r, tt.code, Limits{}, b)
			if tt.wantKind == "" {
				if ans.Error != nil {
					t.Fatalf("Run(%q) error = %+v, want none", tt.code, ans.Error)
				}
				if string(ans.Result) != tt.wantResult {
					t.Errorf("Run(%q) = %s, want %s", tt.code, ans.Result, tt.wantResult)
				}
			} else {
				if ans.Error == nil || ans.Error.Kind != tt.wantKind || !strings.Contains(ans.Error.Message, tt.wantMsg) {
					t.Fatalf("Run(%q) error = %+v, want kind %s with %q", tt.code, ans.Error, tt.wantKind, tt.wantMsg)
				}
			}
			var got []string
			for _, c := range ans.Calls {
				got = append(got, c.Tool)
			}
			if strings.Join(got, ",") != strings.Join(tt.wantCalls, ",") {
				t.Errorf("Run(%q) calls = %v, want %v", tt.code, got, tt.wantCalls)
			}
			if tt.wantLog != nil && strings.Join(ans.Console, "|") != strings.Join(tt.wantLog, "|") {
				t.Errorf("Run(%q) console = %q, want %q", tt.code, ans.Console, tt.wantLog)
			}
		})
	}
}

// TestCallTimes: a call's time is given to a tenth of a millisecond,
// the precision that means something to the model that reads it (a
// bridge that takes 1.2345 ms does not give 1.234).
func TestCallTimes(t *testing.T) {
	r := newTestRunner(t, Options{Idle: 1})
	b := kvBridge()
	b.delay = 1234567 * time.Nanosecond
	ans := run(t, r, `await tools.kv.put({key: "a", value: 1}); await tools.kv.get({key: "a"}); 1`, Limits{}, b)
	if len(ans.Calls) != 2 {
		t.Fatalf("calls = %+v, want 2", ans.Calls)
	}
	for _, c := range ans.Calls {
		if c.Ms < 1.2 || math.Round(c.Ms*10)/10 != c.Ms {
			t.Errorf("call %s took %v ms, want at least 1.2, to a tenth", c.Tool, c.Ms)
		}
	}
}
