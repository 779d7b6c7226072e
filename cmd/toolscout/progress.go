package main

import (
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"
)

// progress draws a progress bar on a terminal, or prints a line every 10%
// elsewhere. It only ever writes to stderr.
type progress struct {
	w       io.Writer
	label   string
	tty     bool
	mu      sync.Mutex
	start   time.Time
	last    int // last decile printed (non-tty)
	drawn   bool
	total   int
	current int
}

func newProgress(w io.Writer, label string) *progress {
	tty := false
	if f, ok := w.(*os.File); ok {
		if st, err := f.Stat(); err == nil && st.Mode()&os.ModeCharDevice != 0 {
			tty = true
		}
	}
	return &progress{w: w, label: label, tty: tty, start: time.Now(), last: -1}
}

func (p *progress) update(done, total int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.current, p.total = done, total
	if total <= 0 {
		return
	}
	if p.tty {
		const width = 30
		fill := done * width / total
		rate := float64(done) / time.Since(p.start).Seconds()
		fmt.Fprintf(p.w, "\r%s [%s%s] %d/%d (%.0f/s)", p.label, strings.Repeat("=", fill), strings.Repeat(" ", width-fill), done, total, rate)
		p.drawn = true
		return
	}
	// Off a terminal, stay quiet for short jobs: report every 10% only once
	// the job has run for two seconds.
	if time.Since(p.start) < 2*time.Second && done < total {
		return
	}
	if d := done * 10 / total; d > p.last && time.Since(p.start) >= 2*time.Second {
		p.last = d
		fmt.Fprintf(p.w, "%s: %d/%d\n", p.label, done, total)
	}
}

func (p *progress) finish() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.drawn {
		fmt.Fprintf(p.w, "\r%s: %d/%d in %s\n", p.label, p.current, p.total, time.Since(p.start).Round(time.Millisecond))
	}
}
