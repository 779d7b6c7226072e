package codemode

import (
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"regexp"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"strings"
	"sync"
	"time"

	"github.com/dop251/goja"
)

// The sandbox is this same executable started again with childEnv set
// and nothing else in its environment (no secret of the gateway's is
// there to find), talking to the gateway over its stdin and stdout
// (protocol.go). One process runs one program and exits.
const (
	childEnv   = "TOOLSCOUT_CODEMODE_SANDBOX"
	childValue = "1"
)

// MaxCode bounds a program's source, in bytes.
const MaxCode = 256 << 10

// ChildMain runs the sandbox and exits when this process was started as
// one (by a Runner); otherwise it returns at once. Call it first thing
// in main, and in TestMain of a test binary whose tests run programs.
func ChildMain() {
	if os.Getenv(childEnv) != childValue {
		return
	}
	os.Exit(serveChild(os.Stdin, os.Stdout))
}

// Exit codes of a sandbox process that did not run a program.
const (
	exitNoProgram = 3 // stdin closed or unreadable before a program came
)

//go:embed prelude.js
var preludeJS string

// serveChild reads one program from in, runs it, and writes its
// requests and its end to out.
func serveChild(in io.Reader, out io.Writer) int {
	restrictProcess()
	lr := newLineReader(in, MaxCode+64<<10)
	line, err := lr.next()
	if err != nil {
		return exitNoProgram
	}
	var st start
	if err := json.Unmarshal(line, &st); err != nil {
		return exitNoProgram
	}
	lim := st.Limits.WithDefaults()
	// Replies carry tool results, each at most the result-bytes limit
	// (the parent counts them before it sends one).
	lr.max = int(min(lim.ResultBytes, 1<<30)) + 64<<10
	c := &childRun{lr: lr, out: out, lim: lim}
	c.limitMemory()
	limitProcess(lim)
	c.run(st.Code)
	return 0
}

// childRun is the program running in a sandbox process.
type childRun struct {
	lr  *lineReader
	out io.Writer
	lim Limits
	vm  *goja.Runtime
	// stringify and parse are JSON's, taken before the program runs:
	// a program that replaces them changes only what it sees.
	stringify, parse goja.Callable

	mu       sync.Mutex // out, done
	done     bool
	limitHit *LimitError // set by the watchdog or a reply; read under mu

	console        []string
	consoleBytes   int
	consoleDropped int

	heapBase uint64
	cpuBase  time.Duration // the process's CPU time before the program
}

// limitMemory makes the Go heap keep to the program's bound (the GC
// works harder near it) and records the heap before the program.
func (c *childRun) limitMemory() {
	runtime.GC()
	c.heapBase = heapBytes()
	debug.SetMemoryLimit(int64(c.heapBase) + c.lim.Memory + 16<<20)
	// A deep Go recursion inside the engine (a huge nested JSON) ends
	// the process instead of using 1 GB of stack.
	debug.SetMaxStack(256 << 20)
}

var heapSample = []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}

func heapBytes() uint64 {
	metrics.Read(heapSample)
	if heapSample[0].Value.Kind() != metrics.KindUint64 {
		return 0
	}
	return heapSample[0].Value.Uint64()
}

func (c *childRun) run(code string) {
	c.cpuBase = cpuTime()
	c.vm = goja.New()
	c.vm.SetMaxCallStackSize(4096)
	stop := make(chan struct{})
	defer close(stop)
	go c.watch(stop)

	prog, perr := compileProgram(code)
	if perr != nil {
		c.finish(nil, perr)
		return
	}
	if err := c.installBridge(); err != nil {
		c.finish(nil, &ProgramError{Kind: KindRuntime, Message: "setting up the sandbox: " + err.Error()})
		return
	}
	v, err := c.vm.RunProgram(prog)
	if err != nil {
		c.finish(nil, c.errorOf(err))
		return
	}
	p, ok := v.Export().(*goja.Promise)
	if !ok {
		c.finish(nil, &ProgramError{Kind: KindRuntime, Message: "the program did not run as an async function"})
		return
	}
	switch p.State() {
	case goja.PromiseStateRejected:
		c.finish(nil, c.reasonError(p.Result()))
	case goja.PromiseStatePending:
		c.finish(nil, &ProgramError{Kind: KindRuntime, Message: "the program ended waiting on a promise that nothing settles (only tool calls and toolscout.search are asynchronous here: there are no timers)"})
	default:
		out, perr := c.resultJSON(p.Result())
		c.finish(out, perr)
	}
}

// resultJSON turns the program's value into JSON within the output
// limit.
func (c *childRun) resultJSON(v goja.Value) (json.RawMessage, *ProgramError) {
	if v == nil || goja.IsUndefined(v) {
		return json.RawMessage("null"), nil
	}
	s, err := c.stringify(goja.Undefined(), v)
	if err != nil {
		if pe := c.limitOf(err); pe != nil {
			return nil, pe
		}
		return nil, &ProgramError{Kind: KindRuntime, Message: "the result cannot be turned into JSON: " + messageOf(err)}
	}
	if goja.IsUndefined(s) {
		return json.RawMessage("null"), nil
	}
	text := s.String()
	if len(text) > c.lim.Output {
		return nil, c.limitProgramError(c.lim.limitError(LimitOutput))
	}
	return json.RawMessage(text), nil
}

// installBridge defines tools, toolscout and console.
func (c *childRun) installBridge() error {
	js := c.vm.Get("JSON").ToObject(c.vm)
	c.stringify, _ = goja.AssertFunction(js.Get("stringify"))
	c.parse, _ = goja.AssertFunction(js.Get("parse"))
	fn, err := c.vm.RunScript("prelude.js", preludeJS)
	if err != nil {
		return err
	}
	make, ok := goja.AssertFunction(fn)
	if !ok {
		return errors.New("prelude is not a function")
	}
	objs, err := make(goja.Undefined(), c.vm.ToValue(c.hostCall), c.vm.ToValue(c.hostSearch), c.vm.ToValue(c.hostLog))
	if err != nil {
		return err
	}
	o := objs.ToObject(c.vm)
	g := c.vm.GlobalObject()
	for _, name := range []string{"tools", "toolscout", "console"} {
		if err := g.DefineDataProperty(name, o.Get(name), goja.FLAG_FALSE, goja.FLAG_FALSE, goja.FLAG_TRUE); err != nil {
			return err
		}
	}
	return nil
}

// hostCall is tools.<domain>.<tool>(args): args is JSON already.
func (c *childRun) hostCall(domain, tool, args string) goja.Value {
	return c.ask(request{Op: opCall, Domain: domain, Tool: tool, Args: json.RawMessage(args)}, "tools."+domain+"."+tool)
}

// hostSearch is toolscout.search(query, {limit}).
func (c *childRun) hostSearch(query string, limit int) goja.Value {
	return c.ask(request{Op: opSearch, Query: query, Limit: limit}, "toolscout.search")
}

// ask sends req to the parent and returns its value, or throws its
// error in the program.
func (c *childRun) ask(req request, where string) goja.Value {
	c.mu.Lock()
	if c.done {
		c.mu.Unlock()
		select {} // the watchdog has ended the program and exits
	}
	err := writeLine(c.out, req)
	c.mu.Unlock()
	if err != nil {
		os.Exit(exitNoProgram)
	}
	line, err := c.lr.next()
	if err != nil {
		os.Exit(exitNoProgram) // the parent has gone or broke the protocol
	}
	var rep reply
	if err := json.Unmarshal(line, &rep); err != nil {
		os.Exit(exitNoProgram)
	}
	if rep.Limit != nil {
		c.interrupt(rep.Limit)
		return goja.Undefined()
	}
	if !rep.OK {
		e := c.vm.NewGoError(errors.New(rep.Error))
		_ = e.Set("name", "ToolError")
		_ = e.Set("tool", rep.Tool)
		_ = e.Set("message", rep.Error)
		panic(e)
	}
	if len(rep.Value) == 0 {
		return goja.Undefined()
	}
	v, err := c.parse(goja.Undefined(), c.vm.ToValue(string(rep.Value)))
	if err != nil {
		panic(c.vm.NewTypeError("%s returned what is not JSON: %v", where, err))
	}
	return v
}

// hostLog keeps one console line within the console limit.
func (c *childRun) hostLog(level, text string) {
	if level != "" {
		text = "[" + level + "] " + text
	}
	if c.consoleBytes+len(text) > c.lim.Console {
		c.consoleDropped++
		return
	}
	c.consoleBytes += len(text)
	c.console = append(c.console, text)
}

// interrupt ends the program with lim (the first limit hit wins).
func (c *childRun) interrupt(lim *LimitError) {
	c.mu.Lock()
	if c.limitHit == nil {
		c.limitHit = lim
	}
	c.mu.Unlock()
	c.vm.Interrupt(lim)
}

// watch checks the program's memory and CPU time until stop, and ends
// the process itself when an interrupt does not take (the engine stuck
// in one long native call, such as a backtracking regular expression).
func (c *childRun) watch(stop <-chan struct{}) {
	tick := time.NewTicker(2 * time.Millisecond)
	defer tick.Stop()
	var since time.Time
	for {
		select {
		case <-stop:
			return
		case <-tick.C:
		}
		if !since.IsZero() {
			if time.Since(since) > time.Second {
				c.mu.Lock()
				lim := c.limitHit
				c.mu.Unlock()
				c.finish(nil, c.limitProgramError(lim))
				os.Exit(0)
			}
			continue
		}
		if heapBytes() > c.heapBase+uint64(c.lim.Memory) {
			runtime.GC()
			if heapBytes() > c.heapBase+uint64(c.lim.Memory) {
				c.interrupt(c.lim.limitError(LimitMemory))
				since = time.Now()
				continue
			}
		}
		if cpuTime()-c.cpuBase > c.lim.CPU {
			c.interrupt(c.lim.limitError(LimitCPU))
			since = time.Now()
		}
	}
}

// finish writes the program's end, once.
func (c *childRun) finish(result json.RawMessage, perr *ProgramError) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.done {
		return
	}
	c.done = true
	if result == nil {
		result = json.RawMessage("null")
	}
	_ = writeLine(c.out, request{Op: opDone, Result: result, Console: c.console, ConsoleDropped: c.consoleDropped, Error: perr})
}

func (c *childRun) limitProgramError(lim *LimitError) *ProgramError {
	return &ProgramError{Kind: KindLimit, Limit: lim.Limit, Message: lim.Error()}
}

// limitOf returns the limit that err (from the engine) carries, if any.
func (c *childRun) limitOf(err error) *ProgramError {
	var ie *goja.InterruptedError
	if errors.As(err, &ie) {
		if lim, ok := ie.Value().(*LimitError); ok {
			return c.limitProgramError(lim)
		}
		return &ProgramError{Kind: KindRuntime, Message: "the program was interrupted"}
	}
	return nil
}

// errorOf words an error of RunProgram.
func (c *childRun) errorOf(err error) *ProgramError {
	if pe := c.limitOf(err); pe != nil {
		return pe
	}
	var ex *goja.Exception
	if errors.As(err, &ex) {
		return c.reasonError(ex.Value())
	}
	var so *goja.StackOverflowError
	if errors.As(err, &so) {
		return &ProgramError{Kind: KindRuntime, Message: "RangeError: maximum call stack size exceeded (a recursion that does not end?)"}
	}
	return &ProgramError{Kind: KindRuntime, Message: err.Error()}
}

// reasonError words what a program threw (or its promise rejected with).
func (c *childRun) reasonError(v goja.Value) *ProgramError {
	c.mu.Lock()
	lim := c.limitHit
	c.mu.Unlock()
	if lim != nil {
		return c.limitProgramError(lim)
	}
	pe := &ProgramError{Kind: KindRuntime}
	o, isObj := v.(*goja.Object)
	if isObj {
		if name := o.Get("name"); name != nil && name.String() == "ToolError" {
			pe.Kind = KindTool
			if t := o.Get("tool"); t != nil {
				pe.Tool = t.String()
			}
			// The message names the tool when toolscout wrote it; an
			// upstream's own message may not.
			pe.Message = o.Get("message").String()
			if !strings.Contains(pe.Message, pe.Tool) {
				pe.Message = pe.Tool + ": " + pe.Message
			}
			return pe
		}
	}
	pe.Message = safeString(v)
	if isObj {
		if st := o.Get("stack"); st != nil {
			if at := programLine(st.String()); at != "" {
				pe.Message += " (at " + at + ")"
			}
		}
	}
	return pe
}

var programAt = regexp.MustCompile(`program\.js:(\d+):(\d+)`)

// programLine returns "line L, column C" of the first frame of the
// program in a stack, or "".
func programLine(stack string) string {
	m := programAt.FindStringSubmatch(stack)
	if m == nil {
		return ""
	}
	return "line " + m[1] + ", column " + m[2]
}

// safeString is String(v) that a hostile toString cannot turn into a
// second failure.
func safeString(v goja.Value) (s string) {
	defer func() {
		if recover() != nil {
			s = "an error that cannot be shown"
		}
	}()
	if v == nil {
		return "undefined"
	}
	s = v.String()
	if len(s) > 4<<10 {
		s = s[:4<<10] + "…"
	}
	return s
}

func messageOf(err error) string {
	var ex *goja.Exception
	if errors.As(err, &ex) {
		return safeString(ex.Value())
	}
	return err.Error()
}

// compileProgram wraps code in an async function whose value is that of
// its return, or of its last expression statement, and compiles it.
func compileProgram(code string) (*goja.Program, *ProgramError) {
	src, err := wrapProgram(code)
	if err != nil {
		return nil, &ProgramError{Kind: KindSyntax, Message: syntaxMessage(err)}
	}
	prog, err := goja.Compile("program.js", src, false)
	if err != nil {
		return nil, &ProgramError{Kind: KindSyntax, Message: syntaxMessage(err)}
	}
	return prog, nil
}

// syntaxMessage words a parse error for the model: the file name the
// parser gives is ours, not the program's.
func syntaxMessage(err error) string {
	msg := err.Error()
	msg = strings.TrimPrefix(msg, "SyntaxError: ")
	msg = strings.ReplaceAll(msg, "program.js: ", "")
	msg = strings.ReplaceAll(msg, "(anonymous): ", "")
	return fmt.Sprintf("SyntaxError: %s", msg)
}
