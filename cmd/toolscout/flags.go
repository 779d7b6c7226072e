package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/toolscout/toolscout/index"
	"github.com/toolscout/toolscout/internal/redact"
	"github.com/toolscout/toolscout/server/gateway"
)

// stringList is a repeatable string flag.
type stringList []string

func (s *stringList) String() string     { return strings.Join(*s, ",") }
func (s *stringList) Set(v string) error { *s = append(*s, v); return nil }

// durationFlag is a duration flag that knows whether it was given, so
// that a config key can set what the flag does when it was not.
type durationFlag struct {
	d   time.Duration
	set bool
}

func (f *durationFlag) String() string { return f.d.String() }

func (f *durationFlag) Set(v string) error {
	d, err := time.ParseDuration(v)
	if err != nil {
		return fmt.Errorf("%q is not a duration: write it like 90s or 2m", v)
	}
	if d <= 0 {
		return fmt.Errorf("%s: give a duration above zero", v)
	}
	f.d, f.set = d, true
	return nil
}

// or returns the flag's value when it was given, else configured when
// it is set (non-zero), else the flag's default.
func (f *durationFlag) or(configured time.Duration) time.Duration {
	if f.set || configured <= 0 {
		return f.d
	}
	return configured
}

// globalFlags are the flags every command accepts.
type globalFlags struct {
	dataDir   string
	catalogs  stringList
	configs   stringList
	embedder  string
	model     string
	prompts   stringList
	logLevel  string
	logFormat string
	// readOnly opens the data dir without writing (serve --read-only).
	readOnly bool
	// writer says the command's job is to write the data dir's index
	// (toolscout index): a keyword index another process holds is an
	// error, not a reason to keep one in memory.
	writer bool
	// connectTimeout is --connect-timeout: how long an upstream server
	// without its own connect_timeout gets to start.
	connectTimeout durationFlag
	// secrets is the command's Redactor (redactor), not a flag.
	secrets *redact.Redactor
	// log is the logger logger made last (nil before): for what is set
	// up below the command's own calls (the upstreams' token sources).
	log *slog.Logger
}

// redactor returns the command's Redactor, made on first use: every
// secret the command reads is added to it (the config's, by
// gatewayConfig and callers; the callers' tokens; serve's auth token),
// and its logger, gateway, audit trail and doctor's lines redact with
// it.
func (g *globalFlags) redactor() *redact.Redactor {
	if g.secrets == nil {
		g.secrets = redact.New()
	}
	return g.secrets
}

// register adds the global flags to fs; logLevel is the command's default
// --log-level (serve says which embedder it picked and which upstreams
// came up, so it logs at info).
func (g *globalFlags) register(fs *flag.FlagSet, logLevel string) {
	fs.StringVar(&g.dataDir, "data-dir", defaultDataDir(), "where the indexes are kept")
	fs.Var(&g.catalogs, "catalog", "catalog.json `FILE` to load (repeatable; default: the built-in catalog)")
	fs.Var(&g.configs, "config", "mcpServers config `FILE` (repeatable)")
	fs.StringVar(&g.embedder, "embedder", "auto", "embedder: auto (Ollama when it answers, else built-in), ollama or builtin")
	fs.StringVar(&g.model, "model", "", "Ollama embedding `MODEL` (default: the config's toolscout.model, else the best installed embedding model)")
	fs.Var(&g.prompts, "prompt", "query/document prompts of a model: `MODEL=QUERY_PREFIX|DOC_PREFIX` (repeatable)")
	fs.StringVar(&g.logLevel, "log-level", logLevel, "log level on stderr: debug, info, warn or error")
	fs.StringVar(&g.logFormat, "log-format", "text", "log format on stderr: text (key=value) or json (one JSON object a line, for log collectors)")
	g.connectTimeout.d = gateway.DefaultConnectTimeout
	fs.Var(&g.connectTimeout, "connect-timeout", "with --config: how long (`DURATION`, e.g. 90s) each upstream server gets to start, answer initialize and list its tools (a first npx -y downloads its package); a server's \"connect_timeout\" wins, and without this flag the config's toolscout.connect_timeout sets it")
}

func defaultDataDir() string {
	dir, err := os.UserCacheDir()
	if err != nil {
		dir = os.TempDir()
	}
	return filepath.Join(dir, "toolscout")
}

// newFlagSet returns a flag set whose --help prints the command's usage.
func newFlagSet(name, usage string, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet("toolscout "+name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintf(stderr, "Usage: toolscout %s\n\nFlags:\n", usage)
		printFlags(fs, stderr)
	}
	return fs
}

// printFlags is flag.PrintDefaults with the --flag spelling the README
// uses (the flag package accepts both).
func printFlags(fs *flag.FlagSet, w io.Writer) {
	fs.VisitAll(func(f *flag.Flag) {
		name, usage := flag.UnquoteUsage(f)
		line := "  --" + f.Name
		if name != "" {
			line += " " + name
		}
		fmt.Fprintf(w, "%s\n    \t%s", line, strings.ReplaceAll(usage, "\n", "\n    \t"))
		if f.DefValue != "" && f.DefValue != "false" && f.DefValue != "0" {
			if needsQuotes(f) {
				fmt.Fprintf(w, " (default %q)", f.DefValue)
			} else {
				fmt.Fprintf(w, " (default %v)", f.DefValue)
			}
		}
		fmt.Fprintln(w)
	})
}

// needsQuotes reports whether a flag's default reads better quoted (a
// string flag, as flag.PrintDefaults prints it).
func needsQuotes(f *flag.Flag) bool {
	g, ok := f.Value.(flag.Getter)
	if !ok {
		return false
	}
	_, isString := g.Get().(string)
	return isString
}

// parseFlags parses args, turning flag errors into usage errors of one
// line (what was wrong, and where the flags are listed): the flag
// package's own message ("invalid value ... : parse error") and the whole
// usage it prints after it say less in more lines. --help prints the
// usage. It accepts flags after positional arguments too ("search QUERY
// --json").
func parseFlags(fs *flag.FlagSet, args []string) ([]string, error) {
	usage, out := fs.Usage, fs.Output()
	fs.Usage = func() {}
	fs.SetOutput(io.Discard)
	defer func() { fs.Usage = usage; fs.SetOutput(out) }()
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				usage()
				return nil, err
			}
			return nil, usageError{flagError(fs, err)}
		}
		rest := fs.Args()
		if len(rest) == 0 {
			return pos, nil
		}
		pos = append(pos, rest[0])
		args = rest[1:]
	}
}

func (g *globalFlags) logger(stderr io.Writer) (*slog.Logger, error) {
	var lvl slog.Level
	if err := lvl.UnmarshalText([]byte(g.logLevel)); err != nil {
		return nil, usagef("--log-level %q: use debug, info, warn or error", g.logLevel)
	}
	opts := &slog.HandlerOptions{Level: lvl}
	// Every record is redacted of the secrets the command reads, at
	// every level: those read after this call too.
	secrets := g.redactor()
	switch g.logFormat {
	case "text", "":
		g.log = slog.New(secrets.Handler(slog.NewTextHandler(stderr, opts)))
		return g.log, nil
	case "json":
		// Durations as text ("1.5s"), as the text format writes them,
		// not as integer nanoseconds.
		opts.ReplaceAttr = func(_ []string, a slog.Attr) slog.Attr {
			if a.Value.Kind() == slog.KindDuration {
				a.Value = slog.StringValue(a.Value.Duration().String())
			}
			return a
		}
		g.log = slog.New(secrets.Handler(slog.NewJSONHandler(stderr, opts)))
		return g.log, nil
	}
	return nil, usagef("--log-format %q: use text or json", g.logFormat)
}

// baseSource reads the --catalog files; with neither --catalog nor
// --config, it is the built-in catalog (nil with --config alone).
func (g *globalFlags) baseSource() (*index.CatalogSource, error) {
	if len(g.catalogs) > 0 {
		return index.ReadCatalogSource(g.catalogs)
	}
	if len(g.configs) > 0 {
		return nil, nil
	}
	return index.BuiltinSource(), nil
}

// baseSpecs returns the domains of --catalog files; with neither --catalog
// nor --config, the built-in catalog's. They are checked when a catalog is
// built from them.
func (g *globalFlags) baseSpecs() ([]index.DomainSpec, error) {
	src, err := g.baseSource()
	if err != nil || src == nil {
		return nil, err
	}
	return src.Specs()
}

// noArgs rejects positional arguments for commands that take none.
func noArgs(cmd string, pos []string) error {
	if len(pos) > 0 {
		return usagef("%s takes no arguments, got %q", cmd, pos)
	}
	return nil
}

var (
	flagUnknown  = regexp.MustCompile(`^flag provided but not defined: -+(.*)$`)
	flagNoValue  = regexp.MustCompile(`^flag needs an argument: -+(.*)$`)
	flagBadValue = regexp.MustCompile(`^invalid (?:boolean )?value "(.*)" for (?:flag )?-+([^:]+): (.*)$`)
)

// flagError rewrites an error of fs.Parse in the --flag spelling, saying
// what kind of value a flag takes when the value did not parse.
func flagError(fs *flag.FlagSet, err error) error {
	help := fmt.Sprintf("(%s --help lists the flags)", fs.Name())
	msg := err.Error()
	if m := flagUnknown.FindStringSubmatch(msg); m != nil {
		return fmt.Errorf("unknown flag --%s %s", m[1], help)
	}
	if m := flagNoValue.FindStringSubmatch(msg); m != nil {
		return fmt.Errorf("--%s needs a value %s", m[1], help)
	}
	m := flagBadValue.FindStringSubmatch(msg)
	if m == nil {
		return fmt.Errorf("%s %s", msg, help)
	}
	value, name, why := m[1], m[2], m[3]
	if v, err := strconv.Unquote(`"` + value + `"`); err == nil {
		value = v // the flag package quoted it: quoted once below
	}
	if f := fs.Lookup(name); f != nil && (why == "parse error" || why == "value out of range") {
		if g, ok := f.Value.(flag.Getter); ok {
			switch g.Get().(type) {
			case time.Duration:
				why = "not a duration: use a number with a unit, e.g. 30s, 2m or 1h"
			case int, int64, uint, uint64:
				why = "not a whole number"
				if strings.HasSuffix(msg, "value out of range") {
					why = "out of range"
				}
			case float64:
				why = "not a number"
			case bool:
				why = "use true or false"
			}
		}
	}
	return fmt.Errorf("--%s %q: %s", name, value, why)
}
