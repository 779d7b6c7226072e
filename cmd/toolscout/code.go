package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"time"

	"github.com/toolscout/toolscout/server/codemode"
)

// Code mode's limits (serve --expose code): each with a flag and a key
// of the config's toolscout.code, the flag winning; unset, codemode's
// defaults. server/codemode enforces them; the docs' code-mode page
// says what each stops.

// codeSpec is toolscout.code as a config file writes it.
type codeSpec struct {
	Timeout    float64 `json:"timeout"` // seconds
	CPU        float64 `json:"cpu"`     // seconds
	MemoryMB   int     `json:"memory_mb"`
	OutputKB   int     `json:"output_kb"`
	ToolCalls  int     `json:"tool_calls"`
	ResultMB   int     `json:"result_mb"`
	Concurrent int     `json:"concurrent"`
}

// codeKeys are toolscout.code's keys.
var codeKeys = []string{"timeout", "cpu", "memory_mb", "output_kb", "tool_calls", "result_mb", "concurrent"}

// codeConfig is code mode's settings: the limits of each program and
// how many run at once (zero: the defaults).
type codeConfig struct {
	Limits     codemode.Limits
	Concurrent int
}

// The bounds a setting may take: a bound past them is a mistake (a
// timeout of a day holds a sandbox for a day), not a choice.
var codeBounds = []struct {
	key, flag string
	min, max  float64
	unit      string
}{
	{"timeout", "code-timeout", 0.1, 1800, "seconds"},
	{"cpu", "code-cpu", 0.1, 600, "seconds"},
	{"memory_mb", "code-memory", 8, 4096, "MiB"},
	{"output_kb", "code-output", 1, 16384, "KiB"},
	{"tool_calls", "code-tool-calls", 1, 100000, "calls"},
	{"result_mb", "code-result", 1, 1024, "MiB"},
	{"concurrent", "code-concurrent", 1, 256, "programs"},
}

// checkCode returns the name of the first setting of v out of its
// bounds, and why ("" when all are within them); zero is unset.
func checkCode(v codeSpec, flagNames bool) (string, string) {
	vals := []float64{v.Timeout, v.CPU, float64(v.MemoryMB), float64(v.OutputKB), float64(v.ToolCalls), float64(v.ResultMB), float64(v.Concurrent)}
	for i, b := range codeBounds {
		x := vals[i]
		if x == 0 {
			continue
		}
		if x < b.min || x > b.max {
			name := b.key
			if flagNames {
				name = "--" + b.flag
			}
			why := fmt.Sprintf("%v: must be from %v to %v %s", x, b.min, b.max, b.unit)
			if !flagNames {
				why += " (0 or unset: the default)"
			}
			return name, why
		}
	}
	return "", ""
}

// parseCodeSpec reads toolscout.code (nil when the file has none).
func parseCodeSpec(file string, raw json.RawMessage) (*codeConfig, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	var top map[string]json.RawMessage
	if err := json.Unmarshal(raw, &top); err != nil {
		return nil, &ConfigError{File: file, Path: "toolscout.code", Reason: `must be an object, e.g. {"timeout": 60, "memory_mb": 64}`}
	}
	data, _ := json.Marshal(top)
	if err := checkKeys(file, "toolscout.code", data, codeKeys, true); err != nil {
		return nil, err
	}
	var v codeSpec
	if err := json.Unmarshal(raw, &v); err != nil {
		return nil, &ConfigError{File: file, Path: "toolscout.code", Reason: "each value must be a number: " + err.Error()}
	}
	if key, why := checkCode(v, false); key != "" {
		return nil, &ConfigError{File: file, Path: "toolscout.code." + key, Reason: why}
	}
	return v.config(), nil
}

func (v codeSpec) config() *codeConfig {
	return &codeConfig{
		Limits: codemode.Limits{
			Wall:        time.Duration(v.Timeout * float64(time.Second)),
			CPU:         time.Duration(v.CPU * float64(time.Second)),
			Memory:      int64(v.MemoryMB) << 20,
			Output:      v.OutputKB << 10,
			ToolCalls:   v.ToolCalls,
			ResultBytes: int64(v.ResultMB) << 20,
		},
		Concurrent: v.Concurrent,
	}
}

// codeFlags are serve's flags of code mode.
type codeFlags struct {
	timeout, cpu                                  time.Duration
	memory, output, toolCalls, result, concurrent int
}

func (f *codeFlags) register(fs *flag.FlagSet) {
	d := codemode.Defaults
	fs.DurationVar(&f.timeout, "code-timeout", d.Wall, "with --expose code: the longest a run_code program may run, tool calls included (a program's timeout_ms may shorten it); without this flag the config's toolscout.code.timeout (seconds) sets it")
	fs.DurationVar(&f.cpu, "code-cpu", d.CPU, "with --expose code: the CPU time a program may use, tool calls excluded; without this flag toolscout.code.cpu (seconds)")
	fs.IntVar(&f.memory, "code-memory", int(d.Memory>>20), "with --expose code: a program's memory, in `MiB`; without this flag toolscout.code.memory_mb")
	fs.IntVar(&f.output, "code-output", d.Output>>10, "with --expose code: the largest result a program may return, as JSON, in `KiB`; without this flag toolscout.code.output_kb")
	fs.IntVar(&f.toolCalls, "code-tool-calls", d.ToolCalls, "with --expose code: the most tool calls and searches of one program; without this flag toolscout.code.tool_calls")
	fs.IntVar(&f.result, "code-result", int(d.ResultBytes>>20), "with --expose code: the tool results one program may receive in all, in `MiB`; without this flag toolscout.code.result_mb")
	fs.IntVar(&f.concurrent, "code-concurrent", defaultConcurrent, "with --expose code: the programs that run at once, each in a sandbox process of its own (the others wait, within their timeout); without this flag toolscout.code.concurrent")
}

// defaultConcurrent is codemode.Options.MaxConcurrent's default.
const defaultConcurrent = 8

// resolve returns code mode's settings: the config's (gc may be nil),
// then each flag given.
func (f *codeFlags) resolve(fs *flag.FlagSet, gc *gatewayConfig) (codeConfig, error) {
	v := codeSpec{
		Timeout: f.timeout.Seconds(), CPU: f.cpu.Seconds(), MemoryMB: f.memory, OutputKB: f.output,
		ToolCalls: f.toolCalls, ResultMB: f.result, Concurrent: f.concurrent,
	}
	if key, why := checkCode(v, true); key != "" {
		return codeConfig{}, usagef("%s %s", key, why)
	}
	out := codeConfig{}
	if gc != nil && gc.Code != nil {
		out = *gc.Code
	}
	set := v.config()
	fs.Visit(func(fl *flag.Flag) {
		switch fl.Name {
		case "code-timeout":
			out.Limits.Wall = set.Limits.Wall
		case "code-cpu":
			out.Limits.CPU = set.Limits.CPU
		case "code-memory":
			out.Limits.Memory = set.Limits.Memory
		case "code-output":
			out.Limits.Output = set.Limits.Output
		case "code-tool-calls":
			out.Limits.ToolCalls = set.Limits.ToolCalls
		case "code-result":
			out.Limits.ResultBytes = set.Limits.ResultBytes
		case "code-concurrent":
			out.Concurrent = set.Concurrent
		}
	})
	return out, nil
}
