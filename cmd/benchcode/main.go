// Command benchcode measures code mode (issue 44) against the two other
// ways an agent works through toolscout, on multi-step tasks over the
// npm reference servers (memory, filesystem, everything) with the
// built-in catalog beside them:
//
//   - eager: every tool listed in tools/list (serve --expose eager), one
//     model turn per tool call;
//   - meta: the meta-tools step by step (serve --expose meta):
//     discover_tools, get_tool_schema, then execute_tool per step;
//   - code: code mode (serve --expose code): discover_tools,
//     get_tool_schema with format "typescript", then one run_code.
//
// For each task and way it counts the tokens that reach the model
// (tools/list and instructions, each request, each answer; o200k_base),
// the model round trips (tool calls the model makes), and the wall time
// of the calls; it checks each task's reference program against the
// expected answer, and a battery of model mistakes for an error a model
// can act on. Every call is made for real: a toolscout binary with
// fresh servers and a fresh copy of the project folder per way.
//
//	go build -o bin/toolscout ./cmd/toolscout
//	go run ./cmd/benchcode -bin bin/toolscout
//
// `make bench-code` runs it. The tasks are tasks.yaml beside this file,
// the project folder they work on testdata/project.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
)

func main() {
	bin := flag.String("bin", "bin/toolscout", "the toolscout binary to measure")
	tasksFile := flag.String("tasks", "", "the tasks file (default: the tasks.yaml built in)")
	only := flag.String("only", "", "run only the tasks whose id contains this")
	latency := flag.Int("latency", 200, "run_code programs of three fast calls for the latency figures (0: none)")
	format := flag.String("format", "markdown", "markdown or json")
	nodeModules := flag.String("node-modules", "node_modules", "where npm ci installed the reference servers")
	turns := flag.Bool("turns", false, "also write each model turn's tokens (task, way, tool, request, answer) to stderr")
	flag.Usage = func() {
		fmt.Fprintf(os.Stderr, "Usage: benchcode [flags]\n\nRuns the code-mode benchmark: every task three ways (eager, meta, code)\nagainst real reference servers behind toolscout, and prints tokens, round\ntrips, wall time, correctness and the mistakes battery.\n\nFlags:\n")
		flag.PrintDefaults()
	}
	flag.Parse()
	tasks, err := loadTasks(*tasksFile)
	if err != nil {
		fmt.Fprintln(os.Stderr, "benchcode:", err)
		os.Exit(2)
	}
	abs, err := filepath.Abs(*nodeModules)
	if err != nil {
		fmt.Fprintln(os.Stderr, "benchcode:", err)
		os.Exit(2)
	}
	o := options{bin: *bin, nodeModules: abs, only: *only, latency: *latency, progress: os.Stderr}
	if *turns {
		o.turns = os.Stderr
	}
	rep, err := run(context.Background(), o, tasks)
	if err != nil {
		fmt.Fprintln(os.Stderr, "benchcode:", err)
		os.Exit(1)
	}
	if err := rep.write(os.Stdout, *format); err != nil {
		fmt.Fprintln(os.Stderr, "benchcode:", err)
		os.Exit(1)
	}
	if rep.Failed > 0 {
		fmt.Fprintf(os.Stderr, "benchcode: %d checks failed\n", rep.Failed)
		os.Exit(1)
	}
}
