package codemode

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"sync"
	"time"
)

// Bridge is how a program reaches the tools: whoever implements it
// applies the caller's view, pinned definitions and the audit trail, as
// for any other call (the server's run_code does).
type Bridge interface {
	// Call runs the tool a program named as tools.<domain>.<tool>
	// (identifiers or the names themselves). name is the tool's
	// qualified name (domain__tool), or domain.tool as written when it
	// names no tool the caller may use; value is the tool's result as
	// JSON. err is the tool's failure, worded for the program.
	Call(ctx context.Context, domain, tool string, args json.RawMessage) (name string, value json.RawMessage, err error)
	// Search runs toolscout.search(query, {limit}) and returns its
	// answer as JSON.
	Search(ctx context.Context, query string, limit int) (json.RawMessage, error)
}

// Options configure a Runner; zero fields take their defaults.
type Options struct {
	// Command returns the sandbox process to start, not yet started;
	// nil: this executable again (os.Executable), whose main must call
	// ChildMain first.
	Command func() (*exec.Cmd, error)
	// Idle is how many sandbox processes are kept started ahead, so
	// that a program does not wait for one (0: 2; negative: none).
	Idle int
	// MaxConcurrent bounds the programs that run at once; the others
	// wait, within their time limit (0: 8).
	MaxConcurrent int
	// Log gets what goes wrong with the sandbox processes themselves
	// (nil: discarded). Programs' own failures are answers, not logs.
	Log *slog.Logger
}

// Runner runs programs, each in a sandbox process of its own.
type Runner struct {
	opts Options
	log  *slog.Logger
	sem  chan struct{}
	idle chan *proc
	fill chan struct{}
	stop chan struct{}
	wg   sync.WaitGroup

	mu     sync.Mutex
	live   map[*proc]struct{}
	closed bool
}

// ErrClosed is returned by Run after Close.
var ErrClosed = errors.New("code mode is shut down")

// New returns a Runner and starts its idle sandbox processes.
func New(opts Options) *Runner {
	if opts.Idle == 0 {
		opts.Idle = 2
	}
	if opts.Idle < 0 {
		opts.Idle = 0
	}
	if opts.MaxConcurrent <= 0 {
		opts.MaxConcurrent = 8
	}
	if opts.Command == nil {
		opts.Command = selfCommand
	}
	log := opts.Log
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	r := &Runner{
		opts: opts,
		log:  log,
		sem:  make(chan struct{}, opts.MaxConcurrent),
		idle: make(chan *proc, opts.Idle),
		fill: make(chan struct{}, 1),
		stop: make(chan struct{}),
		live: map[*proc]struct{}{},
	}
	if opts.Idle > 0 {
		r.wg.Add(1)
		go r.filler()
		r.refill()
	}
	return r
}

// selfCommand starts this executable as a sandbox: nothing of the
// gateway's environment (its secrets) goes along, one core at most.
func selfCommand() (*exec.Cmd, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("find this program's executable to start the sandbox: %w", err)
	}
	if runtime.GOOS == "linux" {
		// The running executable itself, even when an upgrade has
		// replaced or removed the file at its path: a sandbox always
		// speaks its gateway's protocol.
		exe = "/proc/self/exe"
	}
	cmd := exec.Command(exe)
	// What ps shows: a sandbox, not a second gateway.
	cmd.Args = []string{"toolscout-sandbox"}
	cmd.Env = []string{childEnv + "=" + childValue, "GOMAXPROCS=1"}
	cmd.Dir = os.TempDir()
	return cmd, nil
}

// Close ends the idle and running sandbox processes; Run returns
// ErrClosed after it.
func (r *Runner) Close() error {
	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		return nil
	}
	r.closed = true
	close(r.stop)
	procs := make([]*proc, 0, len(r.live))
	for p := range r.live {
		procs = append(procs, p)
	}
	r.mu.Unlock()
	r.wg.Wait()
	for _, p := range procs {
		p.kill()
	}
	for {
		select {
		case p := <-r.idle:
			p.kill()
			procs = append(procs, p)
			continue
		default:
		}
		break
	}
	for _, p := range procs {
		<-p.exited
	}
	return nil
}

func (r *Runner) refill() {
	select {
	case r.fill <- struct{}{}:
	default:
	}
}

// filler keeps Idle processes started.
func (r *Runner) filler() {
	defer r.wg.Done()
	for {
		select {
		case <-r.stop:
			return
		case <-r.fill:
		}
		for len(r.idle) < cap(r.idle) {
			p, err := r.start()
			if err != nil {
				r.log.Warn("code mode: starting a sandbox process failed", "err", err)
				break
			}
			select {
			case r.idle <- p:
			case <-r.stop:
				p.kill()
				return
			}
		}
	}
}

// take returns a started process: an idle one, or a new one.
func (r *Runner) take() (*proc, error) {
	defer r.refill()
	for {
		select {
		case p := <-r.idle:
			if p.alive() {
				return p, nil
			}
			p.kill()
			continue
		default:
		}
		return r.start()
	}
}

// Run runs code within lim (zero fields: Defaults) and returns its
// answer; the program reaches tools only through b. The error is for
// the runner itself (closed, or unable to start a sandbox); everything
// the program did, failures included, is in the answer.
func (r *Runner) Run(ctx context.Context, code string, lim Limits, b Bridge) (*Answer, error) {
	lim = lim.WithDefaults()
	ans := &Answer{Result: json.RawMessage("null"), Calls: []Call{}}
	if len(code) > MaxCode {
		ans.Error = &ProgramError{Kind: KindSyntax, Message: fmt.Sprintf("the program is %d bytes, over the %s that run_code takes: write a shorter program", len(code), sizeOf(MaxCode))}
		return ans, nil
	}
	if strings.TrimSpace(code) == "" {
		ans.Error = &ProgramError{Kind: KindSyntax, Message: "the program is empty: pass JavaScript in code, e.g. return await tools.<domain>.<tool>({...})"}
		return ans, nil
	}
	ctx, cancel := context.WithTimeout(ctx, lim.Wall)
	defer cancel()
	select {
	case r.sem <- struct{}{}:
		defer func() { <-r.sem }()
	case <-ctx.Done():
		ans.Error = r.endedBy(ctx, lim, nil) // waiting for a sandbox
		return ans, nil
	}
	r.mu.Lock()
	closed := r.closed
	r.mu.Unlock()
	if closed {
		return nil, ErrClosed
	}
	p, err := r.take()
	if err != nil {
		return nil, err
	}
	p.busy.Store(true)
	defer r.release(p)
	if err := writeLine(p.in, start{Code: code, Limits: lim}); err != nil {
		// An idle process that died meanwhile: one more try, new.
		p.kill()
		r.release(p)
		if p, err = r.start(); err != nil {
			return nil, err
		}
		p.busy.Store(true)
		defer r.release(p)
		if err := writeLine(p.in, start{Code: code, Limits: lim}); err != nil {
			return nil, fmt.Errorf("start the sandbox: %w", err)
		}
	}
	r.serve(ctx, p, lim, b, ans)
	return ans, nil
}

// release ends p: a program's process never runs a second program (the
// goroutine started with it reaps it and forgets it).
func (r *Runner) release(p *proc) {
	p.kill()
}

// endedBy words why ctx ended a program; ans is the program's answer so
// far (nil: it never started). A program that spent less than half its
// time limit in tool calls was running its own code when the limit came:
// the hint is then the CPU limit's (a loop that never ends), which a
// busy machine lets the time limit reach first.
func (r *Runner) endedBy(ctx context.Context, lim Limits, ans *Answer) *ProgramError {
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		le := lim.limitError(LimitTime)
		if ans != nil {
			var calls float64
			for _, c := range ans.Calls {
				calls += c.Ms
			}
			if time.Duration(calls*float64(time.Millisecond)) < lim.Wall/2 {
				le.Hint = "; it was running its own code, not waiting for tools: look for a loop that never ends"
			}
		}
		return &ProgramError{Kind: KindLimit, Limit: le.Limit, Message: le.Error()}
	}
	return &ProgramError{Kind: KindRuntime, Message: "the request was canceled"}
}

// serve answers p's requests until its program ends, filling ans.
func (r *Runner) serve(ctx context.Context, p *proc, lim Limits, b Bridge, ans *Answer) {
	stop := make(chan struct{})
	defer close(stop)
	lines := p.lines(lim, stop)
	var results int64
	for {
		var ln lineOrErr
		select {
		case ln = <-lines:
		case <-ctx.Done():
			p.kill()
			ans.Error = r.endedBy(ctx, lim, ans)
			return
		}
		if ln.err != nil {
			ans.Error = r.died(ctx, p, lim, ans, ln.err)
			return
		}
		var req request
		if err := json.Unmarshal(ln.line, &req); err != nil {
			p.kill()
			ans.Error = &ProgramError{Kind: KindRuntime, Message: "the sandbox broke its protocol; the program was ended"}
			r.log.Warn("code mode: a sandbox process sent what is not a request", "err", err)
			return
		}
		var rep reply
		switch req.Op {
		case opDone:
			r.done(req, lim, ans)
			return
		case opCall, opSearch:
			if len(ans.Calls) >= lim.ToolCalls {
				rep.Limit = lim.limitError(LimitToolCalls)
				break
			}
			rep = r.call(ctx, b, req, ans)
			if rep.OK {
				results += int64(len(rep.Value))
				if results > lim.ResultBytes {
					rep = reply{Limit: lim.limitError(LimitResultBytes)}
				}
			}
		default:
			p.kill()
			ans.Error = &ProgramError{Kind: KindRuntime, Message: "the sandbox broke its protocol; the program was ended"}
			return
		}
		if ctx.Err() != nil {
			p.kill()
			ans.Error = r.endedBy(ctx, lim, ans)
			return
		}
		if err := writeLine(p.in, rep); err != nil {
			ans.Error = r.died(ctx, p, lim, ans, err)
			return
		}
	}
}

// call runs one tool call or search of a program and notes it.
func (r *Runner) call(ctx context.Context, b Bridge, req request, ans *Answer) reply {
	t0 := time.Now()
	var (
		name  string
		value json.RawMessage
		err   error
	)
	if req.Op == opSearch {
		name = "toolscout.search"
		value, err = b.Search(ctx, req.Query, req.Limit)
	} else {
		name, value, err = b.Call(ctx, req.Domain, req.Tool, req.Args)
		if name == "" {
			name = req.Domain + "." + req.Tool
		}
	}
	// To a tenth of a millisecond: the model reads each digit, and
	// microseconds of a call are noise.
	c := Call{Tool: name, Ms: math.Round(float64(time.Since(t0).Microseconds())/100) / 10, OK: err == nil}
	if err != nil {
		c.Error = err.Error()
		ans.Calls = append(ans.Calls, c)
		return reply{Error: err.Error(), Tool: name}
	}
	ans.Calls = append(ans.Calls, c)
	if len(value) == 0 || !json.Valid(value) {
		value = json.RawMessage("null")
	}
	return reply{OK: true, Value: value}
}

// done takes the program's end, checking what the sandbox claims.
func (r *Runner) done(req request, lim Limits, ans *Answer) {
	if len(req.Result) > 0 && json.Valid(req.Result) {
		ans.Result = req.Result
	}
	if len(ans.Result) > lim.Output {
		ans.Result = json.RawMessage("null")
		le := lim.limitError(LimitOutput)
		ans.Error = &ProgramError{Kind: KindLimit, Limit: le.Limit, Message: le.Error()}
		return
	}
	kept := 0
	for _, l := range req.Console {
		if kept+len(l) > lim.Console {
			ans.ConsoleDropped++
			continue
		}
		kept += len(l)
		ans.Console = append(ans.Console, l)
	}
	ans.ConsoleDropped += max(req.ConsoleDropped, 0)
	if e := req.Error; e != nil {
		switch e.Kind {
		case KindLimit, KindSyntax, KindRuntime, KindTool:
		default:
			e.Kind = KindRuntime
		}
		e.Message = cut(e.Message, 8<<10)
		e.Tool = cut(e.Tool, 512)
		e.Limit = cut(e.Limit, 64)
		ans.Error = e
		ans.Result = json.RawMessage("null")
	}
}

// died words the end of a process that stopped without answering.
func (r *Runner) died(ctx context.Context, p *proc, lim Limits, ans *Answer, readErr error) *ProgramError {
	if errors.Is(readErr, errLineTooLong) {
		p.kill()
		le := lim.limitError(LimitOutput)
		return &ProgramError{Kind: KindLimit, Limit: le.Limit, Message: le.Error()}
	}
	select {
	case <-p.exited:
	case <-time.After(2 * time.Second):
		p.kill()
		<-p.exited
	case <-ctx.Done():
		p.kill()
		return r.endedBy(ctx, lim, ans)
	}
	tail := p.stderr.String()
	switch {
	case strings.Contains(tail, "out of memory") || strings.Contains(tail, "cannot allocate memory"):
		le := lim.limitError(LimitMemory)
		return &ProgramError{Kind: KindLimit, Limit: le.Limit, Message: le.Error()}
	case strings.Contains(tail, "stack exceeds") || strings.Contains(tail, "stack overflow"):
		return &ProgramError{Kind: KindRuntime, Message: "RangeError: the program's recursion went too deep for the sandbox"}
	}
	if st := p.state(); st != nil && st.UserTime()+st.SystemTime() >= lim.CPU {
		le := lim.limitError(LimitCPU)
		return &ProgramError{Kind: KindLimit, Limit: le.Limit, Message: le.Error()}
	}
	r.log.Warn("code mode: a sandbox process ended without an answer", "status", p.status(), "stderr", cut(tail, 512))
	return &ProgramError{Kind: KindRuntime, Message: "the sandbox process ended without an answer (" + p.status() + ")"}
}

func cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
