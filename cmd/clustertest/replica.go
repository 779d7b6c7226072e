package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// replica is one `toolscout serve --http --read-only` process.
type replica struct {
	*proc
	name string // the HAProxy server name: r1, r2, ...
	addr string // 127.0.0.1:PORT
}

// urlLine is how `serve --http` says where it listens.
var urlLine = regexp.MustCompile(`over Streamable HTTP at http://(127\.0\.0\.1:\d+)/mcp`)

// startReplica starts `bin serve --http addr --read-only args...` and
// returns once it printed its address (addr 127.0.0.1:0 picks a free
// port).
func startReplica(bin, name, addr string, args []string) (*replica, error) {
	found := make(chan string, 1)
	p, err := startProc(exec.Command(bin, append([]string{"serve", "--http", addr, "--read-only", "--log-level", "warn"}, args...)...), func(line string) {
		if m := urlLine.FindStringSubmatch(line); m != nil {
			select {
			case found <- m[1]:
			default:
			}
		}
	})
	if err != nil {
		return nil, fmt.Errorf("start replica %s: %w", name, err)
	}
	r := &replica{proc: p, name: name}
	select {
	case r.addr = <-found:
		return r, nil
	case <-r.done:
		return nil, fmt.Errorf("replica %s exited before serving (%v):\n%s", name, r.err, r.log)
	case <-time.After(60 * time.Second):
		r.kill()
		return nil, fmt.Errorf("replica %s printed no address within 60 s:\n%s", name, r.log)
	}
}

// waitReady polls GET /readyz until it answers 200.
func (r *replica) waitReady(ctx context.Context, within time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, within)
	defer cancel()
	hc := &http.Client{Timeout: time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
	last := "no answer"
	for {
		if resp, err := hc.Get("http://" + r.addr + "/readyz"); err == nil {
			body, _ := io.ReadAll(io.LimitReader(resp.Body, 200))
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
			last = fmt.Sprintf("%d %s", resp.StatusCode, strings.TrimSpace(string(body)))
		} else {
			last = err.Error()
		}
		select {
		case <-r.done:
			return fmt.Errorf("replica %s exited before it was ready (%v):\n%s", r.name, r.err, r.log)
		case <-ctx.Done():
			return fmt.Errorf("replica %s not ready within %s (/readyz: %s):\n%s", r.name, within, last, r.log)
		case <-time.After(25 * time.Millisecond):
		}
	}
}

// stop sends SIGTERM (a drain) and waits at most within before killing.
// It returns how long the process took to exit and an error when it had
// to be killed or exited with an error.
func (r *replica) stop(within time.Duration) (time.Duration, error) {
	start := time.Now()
	if !r.signal(syscall.SIGTERM, within) {
		return time.Since(start), fmt.Errorf("replica %s still ran %s after SIGTERM: killed:\n%s", r.name, within, r.log)
	}
	if r.err != nil {
		return time.Since(start), fmt.Errorf("replica %s exited with %v after SIGTERM:\n%s", r.name, r.err, r.log)
	}
	return time.Since(start), nil
}

// proc is a child process, killed if this program dies, whose output is
// kept in a bounded log.
type proc struct {
	cmd  *exec.Cmd
	done chan struct{} // closed when the process has exited
	err  error         // of cmd.Wait, once done is closed
	log  *tail         // its stderr and stdout
}

// startProc starts cmd; each line the process writes goes to its log
// and, when onLine is not nil, to onLine.
func startProc(cmd *exec.Cmd, onLine func(string)) (*proc, error) {
	p := &proc{cmd: cmd, done: make(chan struct{}), log: newTail(64 << 10)}
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	out, err := cmd.StderrPipe()
	if err != nil {
		return nil, err
	}
	cmd.Stdout = cmd.Stderr
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	go func() {
		sc := bufio.NewScanner(out)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		for sc.Scan() {
			p.log.WriteString(sc.Text() + "\n")
			if onLine != nil {
				onLine(sc.Text())
			}
		}
		io.Copy(io.Discard, out)
		p.err = cmd.Wait()
		close(p.done)
	}()
	return p, nil
}

// signal sends sig and waits at most within for the process to exit,
// then kills it; it reports whether the process exited by itself.
func (p *proc) signal(sig syscall.Signal, within time.Duration) bool {
	p.cmd.Process.Signal(sig)
	select {
	case <-p.done:
		return true
	case <-time.After(within):
		p.kill()
		return false
	}
}

// kill ends the process with SIGKILL and waits for it.
func (p *proc) kill() {
	p.cmd.Process.Signal(syscall.SIGKILL)
	<-p.done
}

// running reports whether the process has not exited.
func (p *proc) running() bool {
	select {
	case <-p.done:
		return false
	default:
		return true
	}
}

// memory is a process's resident memory, from /proc/PID/smaps_rollup.
type memory struct {
	RSS, PSS int64 // bytes
}

// memoryOf reads a process's RSS and PSS.
func memoryOf(pid int) (memory, error) {
	f, err := os.Open(fmt.Sprintf("/proc/%d/smaps_rollup", pid))
	if err != nil {
		return memory{}, err
	}
	defer f.Close()
	return parseSmapsRollup(f)
}

// parseSmapsRollup reads the Rss and Pss lines (in kB) of smaps_rollup.
func parseSmapsRollup(rd io.Reader) (memory, error) {
	var m memory
	var seen int
	sc := bufio.NewScanner(rd)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) != 3 || f[2] != "kB" {
			continue
		}
		var into *int64
		switch f[0] {
		case "Rss:":
			into = &m.RSS
		case "Pss:":
			into = &m.PSS
		default:
			continue
		}
		kb, err := strconv.ParseInt(f[1], 10, 64)
		if err != nil {
			return m, fmt.Errorf("smaps_rollup: %q: %w", sc.Text(), err)
		}
		*into = kb << 10
		seen++
	}
	if err := sc.Err(); err != nil {
		return m, err
	}
	if seen != 2 {
		return m, errors.New("smaps_rollup: no Rss or no Pss line")
	}
	return m, nil
}

// tail keeps the last bytes written to it: a process's log, bounded.
type tail struct {
	mu  sync.Mutex
	max int
	buf []byte
	cut bool
}

func newTail(max int) *tail { return &tail{max: max} }

// WriteString appends s, dropping the oldest bytes beyond max.
func (t *tail) WriteString(s string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, s...)
	if over := len(t.buf) - t.max; over > 0 {
		t.buf = append(t.buf[:0], t.buf[over:]...)
		t.cut = true
	}
}

// String returns what was kept, marked when older lines were dropped.
func (t *tail) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.cut {
		return "[...]\n" + string(t.buf)
	}
	return string(t.buf)
}
