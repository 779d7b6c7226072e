package codemode

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// Small limits, so that each hostile program ends in well under a
// second or two; the defaults are checked to apply in TestDefaults. The
// time limit is the exception: it is the one that counts the time a
// loaded machine gives to other processes (and, from Run, the wait for
// a sandbox), so a test of another limit must never reach it first. At
// 20 s, under make test-stress, programs that should have ended at
// their CPU or memory limit ended at it instead (issue 47); the tests
// of the time limit set their own.
var tight = Limits{Wall: 10 * time.Minute, CPU: 400 * time.Millisecond, Memory: 32 << 20, Output: 64 << 10, Console: 4 << 10, ToolCalls: 50, ResultBytes: 1 << 20}

// TestHostileProgramsEndWithTheirLimit runs the security list:
// each program ends with its named limit or a clean error, within a
// bound, and the runner goes on serving.
func TestHostileProgramsEndWithTheirLimit(t *testing.T) {
	r := newTestRunner(t, Options{})
	tests := []struct {
		name      string
		code      string
		wantKind  string
		wantLimit string
		wantMsg   string
		// kernel: the case needs the sandbox's address-space limit,
		// which race builds leave off (make unit runs this package
		// without -race as well).
		kernel bool
		// memory: a memory bomb, given CPU time enough to reach its
		// bound (race builds run it slowly).
		memory bool
		// result: a huge tool result, which the bridge makes and the
		// runner checks before it can refuse it, with no way to stop
		// either midway: a race build on a loaded machine took 23 to
		// 67 s (make test-stress, issue 47), and the sandbox, waiting
		// all that time, used up its 400 ms of CPU (its watchdog reads
		// the heap and CPU time every 2 ms, slowly under -race): the
		// CPU limit is not the limit under test here.
		result bool
	}{
		{name: "infinite loop", code: "while (true) {}", wantKind: KindLimit, wantLimit: LimitCPU},
		{name: "loop inside a promise", code: "await new Promise(() => { while (true) {} })", wantKind: KindLimit, wantLimit: LimitCPU},
		{name: "loop in a then", code: "await Promise.resolve(1).then(() => { for (;;) {} })", wantKind: KindLimit, wantLimit: LimitCPU},
		{name: "growing arrays", memory: true, code: "const a = []; while (true) a.push(new Array(10000).fill(1.5));", wantKind: KindLimit, wantLimit: LimitMemory},
		{name: "doubling string", memory: true, code: "let s = 'x'; while (true) { s += s; }", wantKind: KindLimit, wantLimit: LimitMemory},
		{name: "one huge string", memory: true, code: "const s = 'x'.repeat(2 ** 30); s.length", wantKind: KindLimit, wantLimit: LimitMemory, kernel: true},
		{name: "deep recursion", code: "function f(n) { return f(n + 1) + 1; } f(0)", wantKind: KindRuntime, wantMsg: "stack"},
		{name: "backtracking regular expression", code: "/^((a+)+)(?=c)/.test('a'.repeat(40) + 'b')", wantKind: KindLimit, wantLimit: LimitCPU},
		{name: "billion console lines", code: "for (let i = 0; i < 1e9; i++) console.log('line ' + i);", wantKind: KindLimit, wantLimit: LimitCPU},
		{name: "ten thousand tool calls", code: "for (let i = 0; i < 10000; i++) await tools.kv.put({key: 'k' + i, value: i});", wantKind: KindLimit, wantLimit: LimitToolCalls},
		{name: "catching the tool-call limit", code: "for (let i = 0; i < 10000; i++) { try { await tools.kv.put({key: 'k' + i, value: i}); } catch (e) {} } 'escaped'", wantKind: KindLimit, wantLimit: LimitToolCalls},
		{name: "a 100 MB tool result", result: true, code: "(await tools.kv.big({bytes: 100e6})).length", wantKind: KindLimit, wantLimit: LimitResultBytes},
		{name: "a result over the output limit", code: "'x'.repeat(1e6)", wantKind: KindLimit, wantLimit: LimitOutput},
		{name: "dynamic import", code: "await import('fs')", wantKind: KindSyntax, wantMsg: "SyntaxError"},
		{name: "require", code: "require('child_process')", wantKind: KindRuntime, wantMsg: "require is not defined"},
		{name: "process", code: "process.exit(1)", wantKind: KindRuntime, wantMsg: "process is not defined"},
		{name: "fetch", code: "await fetch('http://127.0.0.1:9/')", wantKind: KindRuntime, wantMsg: "fetch is not defined"},
		{name: "XMLHttpRequest", code: "new XMLHttpRequest()", wantKind: KindRuntime, wantMsg: "XMLHttpRequest is not defined"},
		{name: "WebAssembly", code: "WebAssembly.compile(new Uint8Array(8))", wantKind: KindRuntime, wantMsg: "WebAssembly is not defined"},
		{name: "redefining the bridge", code: "Object.defineProperty(tools, 'kv', {value: 1})", wantKind: KindRuntime, wantMsg: "TypeError"},
		{name: "replacing the bridge", code: "'use strict'; tools = {}", wantKind: KindRuntime, wantMsg: "TypeError"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.kernel && raceBuild {
				t.Skip("needs the address-space limit, off in race builds")
			}
			lim := tight
			if tt.memory {
				lim.CPU = 10 * time.Second
			}
			if tt.result {
				lim.CPU = time.Minute
			}
			ans := run(t, r, tt.code, lim, kvBridge())
			e := ans.Error
			if e == nil || e.Kind != tt.wantKind || e.Limit != tt.wantLimit || !strings.Contains(e.Message, tt.wantMsg) {
				t.Fatalf("Run(%q) error = %+v, want kind %q limit %q with %q", tt.code, e, tt.wantKind, tt.wantLimit, tt.wantMsg)
			}
			if tt.wantKind == KindLimit && !strings.Contains(e.Message, tt.wantLimit+" limit") {
				t.Errorf("Run(%q) message %q does not name the %s limit", tt.code, e.Message, tt.wantLimit)
			}
			if string(ans.Result) != "null" {
				t.Errorf("Run(%q) result = %s, want null", tt.code, ans.Result)
			}
		})
	}
	// The runner still serves.
	if ans := run(t, r, "6 * 7", tight, kvBridge()); string(ans.Result) != "42" {
		t.Fatalf("after the hostile programs: 6 * 7 = %s (%+v)", ans.Result, ans.Error)
	}
}

// TestNoWayOut checks that the program's world holds nothing of the
// host: its globals are the language's and the bridge's, and the ways
// to the real global object reach the same ones.
func TestNoWayOut(t *testing.T) {
	r := newTestRunner(t, Options{})
	code := `
const g1 = Function("return this")();
const g2 = ({}).constructor.constructor("return this")();
const g3 = globalThis;
const same = g1 === g2 && g2 === g3;
const names = Object.getOwnPropertyNames(g1).sort();
const kinds = [typeof require, typeof process, typeof fetch, typeof XMLHttpRequest, typeof WebAssembly,
  typeof g1.require, typeof g2.process, typeof setTimeout, typeof Deno, typeof Bun, typeof module, typeof exports];
({same, names, kinds})`
	ans := run(t, r, code, tight, kvBridge())
	if ans.Error != nil {
		t.Fatalf("Run: %+v", ans.Error)
	}
	res := string(ans.Result)
	if !strings.Contains(res, `"same":true`) {
		t.Errorf("the global object differs by the way it is reached: %s", res)
	}
	if !strings.Contains(res, `"kinds":["undefined","undefined","undefined","undefined","undefined","undefined","undefined","undefined","undefined","undefined","undefined","undefined"]`) {
		t.Errorf("a host object is reachable: %s", res)
	}
	standard := map[string]bool{}
	for _, n := range strings.Fields(`AggregateError Array ArrayBuffer BigInt BigInt64Array BigUint64Array Boolean DataView Date Error EvalError GoError Float32Array Float64Array Function Infinity Int16Array Int32Array Int8Array JSON Map Math NaN Number Object Promise Proxy RangeError ReferenceError Reflect RegExp Set String Symbol SyntaxError TypeError URIError Uint16Array Uint32Array Uint8Array Uint8ClampedArray WeakMap WeakSet decodeURI decodeURIComponent encodeURI encodeURIComponent escape eval globalThis isFinite isNaN parseFloat parseInt undefined unescape console tools toolscout`) {
		standard[n] = true
	}
	i := strings.Index(res, `"names":[`)
	j := strings.Index(res[i:], "]")
	for _, n := range strings.Split(res[i+len(`"names":[`):i+j], ",") {
		n = strings.Trim(n, `"`)
		if !standard[n] {
			t.Errorf("global %q is neither the language's nor the bridge's", n)
		}
	}
}

// TestPollutionStaysInItsProgram: a program that pollutes
// Object.prototype and the bridge's functions changes neither what the
// gateway receives nor the next program.
func TestPollutionStaysInItsProgram(t *testing.T) {
	r := newTestRunner(t, Options{})
	b := kvBridge()
	code := `
Object.prototype.polluted = "yes";
Object.prototype.toJSON = undefined;
Array.prototype.map = function () { return ["hijacked"]; };
JSON.stringify = () => '{"key":"stolen"}';
try { tools.kv.put.call = () => "hijacked"; } catch (e) {}
try { Object.setPrototypeOf(tools.kv, {}); } catch (e) {}
await tools.kv.put({key: "clean", value: 1});
console.log("x", {a: 1});
(await tools.kv.get({key: "clean"})).key`
	ans := run(t, r, code, tight, b)
	if ans.Error != nil || string(ans.Result) != `"clean"` {
		t.Fatalf("polluting program = %s, %+v; want \"clean\"", ans.Result, ans.Error)
	}
	ans = run(t, r, `[typeof Object.prototype.polluted, [1].map(x => x * 2)[0]]`, tight, b)
	if string(ans.Result) != `["undefined",2]` {
		t.Fatalf("the next program sees the pollution: %s (%+v)", ans.Result, ans.Error)
	}
}

// TestWallTime: a program waiting on a slow tool ends at its time
// limit, and the tool's context is canceled. The limit counts from Run,
// the sandbox's start included, and the advice is on calls only when the
// program spent at least half of it in them (else it is the loop's,
// TestWallTimeLoop). A loaded machine took more than half of 300 ms to
// start the sandbox and reach the call (make test-stress, issue 47): then
// the limit doubles until the call began in its first half, each
// answer's advice checked against the time its calls took.
func TestWallTime(t *testing.T) {
	r := newTestRunner(t, Options{})
	b := kvBridge()
	b.delay = time.Hour // the tool answers only when its context ends
	for wall := 300 * time.Millisecond; ; wall *= 2 {
		lim := tight
		lim.Wall = wall
		ans := run(t, r, `await tools.kv.put({key: "a", value: 1})`, lim, b)
		if ans.Error == nil || ans.Error.Limit != LimitTime {
			t.Fatalf("slow tool: error %+v, want the time limit", ans.Error)
		}
		if len(ans.Calls) > 1 || len(ans.Calls) == 1 && (ans.Calls[0].OK || !strings.Contains(ans.Calls[0].Error, "context deadline exceeded")) {
			t.Fatalf("slow tool: calls %+v, want the one call, its context ended by the time limit", ans.Calls)
		}
		calls := len(ans.Calls) == 1 && time.Duration(ans.Calls[0].Ms*float64(time.Millisecond)) >= wall/2
		if !calls {
			if !strings.Contains(ans.Error.Message, "look for a loop") {
				t.Errorf("slow tool reached after more than half of a %v limit (calls %+v): message %q, want the loop's hint", wall, ans.Calls, ans.Error.Message)
			}
			if wall >= 30*time.Second {
				t.Fatalf("the sandbox did not reach the call within half of a %v limit", wall)
			}
			t.Logf("the call began after half of the %v limit (calls %+v): again with twice the limit", wall, ans.Calls)
			continue
		}
		if !strings.Contains(ans.Error.Message, "make fewer or faster calls") || strings.Contains(ans.Error.Message, "loop") {
			t.Errorf("slow tool: message %q, want the time limit's advice on calls", ans.Error.Message)
		}
		return
	}
}

// TestWallTimeLoop: a loop that reaches the time limit before the CPU
// limit (a busy machine gives the sandbox little CPU; here a CPU limit
// far above the time limit) is told to look for the loop, since it
// spent its time running, not waiting for tools.
func TestWallTimeLoop(t *testing.T) {
	r := newTestRunner(t, Options{})
	lim := tight
	lim.Wall, lim.CPU = 300*time.Millisecond, time.Minute
	ans := run(t, r, `await tools.kv.put({key: "a", value: 1}); while (true) {}`, lim, kvBridge())
	if ans.Error == nil || ans.Error.Limit != LimitTime || !strings.Contains(ans.Error.Message, "look for a loop that never ends") {
		t.Fatalf("a loop past the time limit: error %+v, want the time limit, pointing at the loop", ans.Error)
	}
}

// TestKilledSandbox: a sandbox process killed mid-program is a clean
// error, and the next program runs.
func TestKilledSandbox(t *testing.T) {
	r := newTestRunner(t, Options{})
	lim := tight
	lim.CPU = 30 * time.Second
	done := make(chan *Answer)
	go func() {
		ans, _ := r.Run(context.Background(), "while (true) {}", lim, kvBridge())
		done <- ans
	}()
	var killed bool
	for i := 0; i < 200 && !killed; i++ {
		time.Sleep(20 * time.Millisecond)
		r.mu.Lock()
		for p := range r.live {
			if p.busy.Load() {
				_ = p.cmd.Process.Signal(syscall.SIGKILL)
				killed = true
			}
		}
		r.mu.Unlock()
	}
	if !killed {
		t.Fatal("no running sandbox process to kill")
	}
	ans := <-done
	if ans == nil || ans.Error == nil || ans.Error.Kind != KindRuntime || !strings.Contains(ans.Error.Message, "ended without an answer") {
		t.Fatalf("killed sandbox: %+v", ans)
	}
	if ans := run(t, r, "1", tight, kvBridge()); string(ans.Result) != "1" {
		t.Fatalf("after a killed sandbox: %s (%+v)", ans.Result, ans.Error)
	}
}

// TestManyProgramsAtOnce: 50 programs from 10 callers at once all get
// their own answer; the gateway's heap returns to its level before, and
// no process is left once the runner closes.
func TestManyProgramsAtOnce(t *testing.T) {
	before := heapInUse()
	r := New(Options{MaxConcurrent: 8})
	bridges := make([]*fakeBridge, 10)
	for i := range bridges {
		bridges[i] = kvBridge()
	}
	var wg sync.WaitGroup
	errs := make(chan error, 50)
	for i := 0; i < 50; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			b := bridges[i%10]
			code := fmt.Sprintf(`await tools.kv.put({key: "p%d", value: %d}); const a = []; for (let j = 0; j < 1e4; j++) a.push(j); (await tools.kv.get({key: "p%d"})).value`, i, i, i)
			ans, err := r.Run(context.Background(), code, tight, b)
			if err != nil {
				errs <- err
				return
			}
			if string(ans.Result) != strconv.Itoa(i) {
				errs <- fmt.Errorf("program %d = %s (%+v)", i, ans.Result, ans.Error)
			}
		}(i)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	r.Close()
	if kids := children(t); len(kids) > 0 {
		t.Errorf("processes left after Close: %v", kids)
	}
	after := heapInUse()
	if after > before+before/10+2<<20 {
		t.Errorf("heap in use %d before, %d after", before, after)
	}
}

func heapInUse() uint64 {
	runtime.GC()
	debug.FreeOSMemory()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapInuse
}

// children returns the pids of this process's live children (Linux).
func children(t *testing.T) []int {
	t.Helper()
	if runtime.GOOS != "linux" {
		return nil
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		var kids []int
		stats, _ := filepath.Glob("/proc/[0-9]*/stat")
		for _, f := range stats {
			b, err := os.ReadFile(f)
			if err != nil {
				continue
			}
			s := string(b)
			rest := s[strings.LastIndexByte(s, ')')+2:]
			f := strings.Fields(rest)
			if len(f) > 2 && f[0] != "Z" && f[1] == strconv.Itoa(os.Getpid()) {
				pid, _ := strconv.Atoi(strings.Fields(s)[0])
				kids = append(kids, pid)
			}
		}
		if len(kids) == 0 || time.Now().After(deadline) {
			return kids
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestSandboxProcess: while a program runs, its process has nothing of
// the gateway's environment (a secret set here does not reach it), may
// write no file, holds few descriptors and cannot gain privileges
// (Linux: read from /proc by the parent).
func TestSandboxProcess(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the kernel limits are Linux's")
	}
	t.Setenv("TOOLSCOUT_TEST_SECRET", "s3cret-value-0123456789")
	r := newTestRunner(t, Options{Idle: -1})
	lim := tight
	lim.CPU = 10 * time.Minute
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	b := kvBridge()
	go func() {
		defer close(done)
		// The call is made once the program runs: past restrictProcess
		// and limitProcess (serveChild), whose effects are read below.
		// A fixed 200 ms after the process started was not always past
		// them on a loaded machine (make test-stress, issue 47).
		r.Run(ctx, `await tools.kv.put({key: "a", value: 1}); while (true) {}`, lim, b)
	}()
	called := func() bool {
		b.mu.Lock()
		defer b.mu.Unlock()
		return len(b.calls) > 0
	}
	for deadline := time.Now().Add(time.Minute); !called(); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the program made no call within a minute")
		}
	}
	var pid int
	r.mu.Lock()
	for p := range r.live {
		if p.busy.Load() {
			pid = p.cmd.Process.Pid
		}
	}
	r.mu.Unlock()
	if pid == 0 {
		t.Fatal("no running sandbox process")
	}
	read := func(name string) string {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/%s", pid, name))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	env := strings.Split(strings.TrimRight(read("environ"), "\x00"), "\x00")
	slices.Sort(env)
	if strings.Join(env, " ") != "GOMAXPROCS=1 "+childEnv+"="+childValue {
		t.Errorf("sandbox environment = %q, want the marker and GOMAXPROCS only", env)
	}
	if st := read("status"); !strings.Contains(st, "NoNewPrivs:\t1") {
		t.Errorf("sandbox may gain privileges:\n%s", st)
	}
	limits := read("limits")
	for _, want := range []string{`Max file size\s+0\s+0`, `Max open files\s+32\s+32`, `Max core file size\s+0\s+0`, `Max cpu time\s+\d+\s+\d+\s+seconds`} {
		if !regexp.MustCompile(want).MatchString(limits) {
			t.Errorf("sandbox limits lack %s:\n%s", want, limits)
		}
	}
	cancel()
	<-done
}
