package codemode

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"sync"
	"sync/atomic"
	"syscall"
)

// proc is one sandbox process: its stdin for the program and replies,
// its stdout for requests, the tail of its stderr for a crash.
type proc struct {
	cmd    *exec.Cmd
	in     *os.File
	out    *os.File
	stderr *tailBuffer
	exited chan struct{} // closed once it has been waited for
	busy   atomic.Bool   // running a program (not idle)

	mu    sync.Mutex
	ps    *os.ProcessState
	ended bool
}

// start starts a sandbox process. The pipes are made here, not by
// exec, so that reaping the process never closes what is still being
// read.
func (r *Runner) start() (*proc, error) {
	cmd, err := r.opts.Command()
	if err != nil {
		return nil, err
	}
	inR, inW, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("start the sandbox: %w", err)
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		inR.Close()
		inW.Close()
		return nil, fmt.Errorf("start the sandbox: %w", err)
	}
	p := &proc{cmd: cmd, in: inW, out: outR, stderr: &tailBuffer{max: 2 << 10}, exited: make(chan struct{})}
	cmd.Stdin, cmd.Stdout, cmd.Stderr = inR, outW, p.stderr
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	sandboxAttr(cmd.SysProcAttr)
	err = cmd.Start()
	inR.Close()
	outW.Close()
	if err != nil {
		inW.Close()
		outR.Close()
		return nil, fmt.Errorf("start the sandbox: %w", err)
	}
	r.mu.Lock()
	closed := r.closed
	if !closed {
		r.live[p] = struct{}{}
	}
	r.mu.Unlock()
	go func() {
		_ = cmd.Wait()
		p.mu.Lock()
		p.ps = cmd.ProcessState
		p.ended = true
		p.mu.Unlock()
		r.mu.Lock()
		delete(r.live, p)
		r.mu.Unlock()
		close(p.exited)
	}()
	if closed {
		p.kill()
		return nil, ErrClosed
	}
	return p, nil
}

// alive says whether p has not exited.
func (p *proc) alive() bool {
	select {
	case <-p.exited:
		return false
	default:
		return true
	}
}

// kill ends the process (if it runs) and closes the parent's ends of
// its pipes; the goroutine started with it reaps it.
func (p *proc) kill() {
	p.mu.Lock()
	if !p.ended {
		_ = p.cmd.Process.Kill()
	}
	p.mu.Unlock()
	p.in.Close()
	p.out.Close()
}

func (p *proc) state() *os.ProcessState {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.ps
}

// status words how the process ended.
func (p *proc) status() string {
	st := p.state()
	if st == nil {
		return "still running"
	}
	return st.String()
}

type lineOrErr struct {
	line []byte
	err  error
}

// lines reads p's requests until its stdout ends, a line breaks the
// bounds of lim, or stop closes; the last item sent is an error.
func (p *proc) lines(lim Limits, stop <-chan struct{}) <-chan lineOrErr {
	ch := make(chan lineOrErr)
	// The longest line is the program's end: its result and console,
	// escaped (at most 6 bytes a byte), plus the envelope.
	lr := newLineReader(p.out, 6*(lim.Output+lim.Console)+64<<10)
	go func() {
		for {
			line, err := lr.next()
			select {
			case ch <- lineOrErr{line: line, err: err}:
			case <-stop:
				return
			}
			if err != nil {
				return
			}
		}
	}()
	return ch
}

// tailBuffer keeps the first and the last max bytes written to it: a
// Go runtime's fatal error is at the head, a panic's cause at the tail.
type tailBuffer struct {
	mu   sync.Mutex
	max  int
	head []byte
	b    []byte
}

var _ io.Writer = (*tailBuffer)(nil)

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	n := len(p)
	if room := t.max - len(t.head); room > 0 {
		k := min(room, len(p))
		t.head = append(t.head, p[:k]...)
		p = p[k:]
	}
	t.b = append(t.b, p...)
	if len(t.b) > t.max {
		t.b = append(t.b[:0], t.b[len(t.b)-t.max:]...)
	}
	return n, nil
}

func (t *tailBuffer) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return string(t.head) + string(t.b)
}
