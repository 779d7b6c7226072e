package codemode

import (
	"fmt"
	"time"
)

// Limits bound one program. A zero field takes its default (Defaults);
// each limit that ends a program does so with a *LimitError naming it.
type Limits struct {
	// Wall is the program's whole time, tool calls and the wait for a
	// free sandbox included ("time").
	Wall time.Duration `json:"wall_ns"`
	// CPU is the CPU time the program itself may use, tool calls
	// excluded ("cpu").
	CPU time.Duration `json:"cpu_ns"`
	// Memory bounds the program's heap, in bytes ("memory").
	Memory int64 `json:"memory"`
	// Output bounds the result, as JSON, in bytes ("output").
	Output int `json:"output"`
	// Console bounds what console.log and its kin keep, in bytes; lines
	// past it are counted, not kept (it ends nothing).
	Console int `json:"console"`
	// ToolCalls bounds the number of tool calls and searches ("tool_calls").
	ToolCalls int `json:"tool_calls"`
	// ResultBytes bounds the total size of the tool results handed to
	// the program ("result_bytes").
	ResultBytes int64 `json:"result_bytes"`
}

// Defaults are the limits a zero Limits field takes.
var Defaults = Limits{
	Wall:        60 * time.Second,
	CPU:         10 * time.Second,
	Memory:      64 << 20,
	Output:      1 << 20,
	Console:     16 << 10,
	ToolCalls:   100,
	ResultBytes: 16 << 20,
}

// The names of the limits, as LimitError.Limit and the answer's
// error.limit carry them.
const (
	LimitTime        = "time"
	LimitCPU         = "cpu"
	LimitMemory      = "memory"
	LimitOutput      = "output"
	LimitToolCalls   = "tool_calls"
	LimitResultBytes = "result_bytes"
)

// WithDefaults returns l with every zero field set to its default.
func (l Limits) WithDefaults() Limits {
	d := Defaults
	if l.Wall > 0 {
		d.Wall = l.Wall
	}
	if l.CPU > 0 {
		d.CPU = l.CPU
	}
	if l.Memory > 0 {
		d.Memory = l.Memory
	}
	if l.Output > 0 {
		d.Output = l.Output
	}
	if l.Console > 0 {
		d.Console = l.Console
	}
	if l.ToolCalls > 0 {
		d.ToolCalls = l.ToolCalls
	}
	if l.ResultBytes > 0 {
		d.ResultBytes = l.ResultBytes
	}
	return d
}

// LimitError is a program ended by one of its limits.
type LimitError struct {
	Limit string // LimitTime, LimitCPU, ...
	Bound string // the bound, as a person reads it ("10s", "64 MiB")
	// Hint, when set, replaces the limit's own advice (after "; ").
	Hint string
}

func (e *LimitError) Error() string {
	what := map[string]string{
		LimitTime:        "ran past its time limit",
		LimitCPU:         "used up its CPU time",
		LimitMemory:      "ran out of memory",
		LimitOutput:      "returned a result over the output limit",
		LimitToolCalls:   "made more tool calls than allowed",
		LimitResultBytes: "received more tool result bytes than allowed",
	}[e.Limit]
	if what == "" {
		what = "hit the " + e.Limit + " limit"
	}
	hint := map[string]string{
		LimitTime:        "; make fewer or faster calls, or pass a larger timeout_ms",
		LimitCPU:         "; look for a loop that never ends",
		LimitMemory:      "; keep less in memory at once",
		LimitOutput:      "; return less (pick the fields you need)",
		LimitToolCalls:   "; call fewer tools in one program",
		LimitResultBytes: "; ask the tools for less (filters, limits, pages)",
	}[e.Limit]
	if e.Hint != "" {
		hint = e.Hint
	}
	return fmt.Sprintf("the program %s (%s limit %s)%s", what, e.Limit, e.Bound, hint)
}

// bound words limit's bound in l.
func (l Limits) bound(limit string) string {
	switch limit {
	case LimitTime:
		return l.Wall.String()
	case LimitCPU:
		return l.CPU.String()
	case LimitMemory:
		return sizeOf(l.Memory)
	case LimitOutput:
		return sizeOf(int64(l.Output))
	case LimitToolCalls:
		return fmt.Sprint(l.ToolCalls)
	case LimitResultBytes:
		return sizeOf(l.ResultBytes)
	}
	return "?"
}

func (l Limits) limitError(limit string) *LimitError {
	return &LimitError{Limit: limit, Bound: l.bound(limit)}
}

func sizeOf(n int64) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d bytes", n)
}
