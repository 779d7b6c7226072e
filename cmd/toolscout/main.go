// Command toolscout is an MCP server that finds the right tool among
// thousands: it indexes tool catalogs and upstream MCP servers twice (BM25
// and vectors) and exposes discover_tools, get_tool_schema and
// execute_tool.
//
// This package is the composition root (app.go): it turns flags and
// config files into an embedder, a gateway and a search.Live index, then
// hands them to the command: serve (server), search, index, eval, tokens,
// doctor.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime/debug"
	"syscall"

	"github.com/toolscout/toolscout/server/codemode"
)

func main() {
	codemode.ChildMain() // a run_code sandbox is this program started again
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(exitCode(err, os.Stderr))
}

// version is the release this source tree is; buildVersion adds what the
// Go toolchain recorded (module version, VCS revision).
const version = "0.3.0"

// buildVersion returns the version with the module version and VCS
// revision the binary was built from, when the build recorded them.
func buildVersion() string {
	v := version
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return v
	}
	if mv := bi.Main.Version; mv != "" && mv != "(devel)" {
		v += " (module " + mv + ")"
	}
	rev, dirty := "", false
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			dirty = s.Value == "true"
		}
	}
	if rev != "" {
		v += " commit " + rev[:min(12, len(rev))]
		if dirty {
			v += "+changes"
		}
	}
	return v + ", " + bi.GoVersion
}

// plural returns "1 tool" or "2 tools".
func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

// usageError marks errors in how the command was called (exit status 2).
type usageError struct{ err error }

func (e usageError) Error() string { return e.err.Error() }
func (e usageError) Unwrap() error { return e.err }

func usagef(format string, args ...any) error { return usageError{fmt.Errorf(format, args...)} }

func exitCode(err error, stderr io.Writer) int {
	if err == nil || errors.Is(err, flag.ErrHelp) {
		return 0
	}
	fmt.Fprintln(stderr, "toolscout:", err)
	var ue usageError
	if errors.As(err, &ue) {
		return 2
	}
	return 1
}

type command struct {
	name    string
	summary string
	run     func(ctx context.Context, args []string, stdout, stderr io.Writer) error
}

func commands() []command {
	return []command{
		{"serve", "serve the meta-tools over MCP (stdio, or Streamable HTTP with --http)", runServe},
		{"index", "build or refresh the persistent index", runIndex},
		{"search", "rank tools for a request: toolscout search \"open a ticket\"", runSearch},
		{"eval", "measure ranking strategies on labelled queries", runEval},
		{"tokens", "count what a client pays for tools/list, eager against meta", runTokens},
		{"lint", "per-tool token cost; flag long, missing and duplicate descriptions (exit 1)", runLint},
		{"doctor", "check the config, upstream servers, Ollama and the data dir", runDoctor},
		{"approve", "list, or approve, upstream tools whose definition changed since approved", runApprove},
		{"connect", "import a client's MCP servers (claude-desktop, claude-code, cursor, vscode) and point it at toolscout", runConnect},
		{"auth", "sign in to remote servers behind OAuth: auth login SERVER, auth status, auth logout SERVER", runAuth},
		{"feedback", "list what was learned from the tools agents ran after searches; --forget clears it", runFeedback},
	}
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) > 0 && (args[0] == "--version" || args[0] == "-version" || args[0] == "version") {
		fmt.Fprintln(stdout, "toolscout", buildVersion())
		return nil
	}
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		printUsage(stderr)
		if len(args) == 0 {
			return usagef("no command given")
		}
		return nil
	}
	for _, c := range commands() {
		if c.name == args[0] {
			return c.run(ctx, args[1:], stdout, stderr)
		}
	}
	printUsage(stderr)
	return usagef("unknown command %q", args[0])
}

func printUsage(w io.Writer) {
	fmt.Fprintln(w, "Usage: toolscout COMMAND [flags]")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Commands:")
	for _, c := range commands() {
		fmt.Fprintf(w, "  %-8s %s\n", c.name, c.summary)
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Run 'toolscout COMMAND --help' for the flags of a command, 'toolscout --version' for the version.")
}
