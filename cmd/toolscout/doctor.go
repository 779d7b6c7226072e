package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/toolscout/toolscout/embed"
	"github.com/toolscout/toolscout/index"
	"github.com/toolscout/toolscout/index/store"
	"github.com/toolscout/toolscout/server"
	"github.com/toolscout/toolscout/server/codemode"

	"github.com/tiktoken-go/tokenizer"
)

// check is one doctor check: what it looked at, and the problem with what
// to do about it, or "" when it works. A note is advice that is not a
// failure (the built-in embedder serves when Ollama cannot).
type check struct {
	name, detail, fix string
	note              bool
}

func runDoctor(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var g globalFlags
	fs := newFlagSet("doctor", "doctor [flags]\n\nChecks the catalog, the config's upstream servers, Ollama and the data dir,\nand prints what to fix. Exits 0 only when every check passes.", stderr)
	g.register(fs, "warn")
	pos, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	if err := noArgs("doctor", pos); err != nil {
		return err
	}
	// Each check is printed as soon as it is known: a slow upstream server
	// does not hold back the lines of the others.
	total, failed := 0, 0
	emit := func(cs ...check) {
		for _, c := range cs {
			// What an upstream server said (its errors, its tools) is
			// redacted of the config's secrets, as everything written.
			c.detail, c.fix = g.redactor().String(c.detail), g.redactor().String(c.fix)
			total++
			switch {
			case c.fix == "":
				fmt.Fprintf(stdout, "ok    %-10s %s\n", c.name, c.detail)
			case c.note:
				fmt.Fprintf(stdout, "note  %-10s %s\n      advice: %s\n", c.name, c.detail, c.fix)
			default:
				failed++
				fmt.Fprintf(stdout, "FAIL  %-10s %s\n      fix: %s\n", c.name, c.detail, c.fix)
			}
		}
	}
	add := func(name, detail string, err error, fix string) {
		if err != nil {
			emit(check{name: name, detail: err.Error(), fix: fix})
			return
		}
		emit(check{name: name, detail: detail})
	}

	cat, err := g.loadCatalog()
	switch {
	case err == nil && len(g.catalogs) == 0 && len(g.configs) > 0:
		add("catalog", "no catalog files: tools come from --config", nil, "")
	case err == nil:
		add("catalog", fmt.Sprintf("%s in %s", plural(cat.Len(), "tool"), plural(len(cat.Domains()), "domain")), nil, "")
	default:
		add("catalog", "", err, catalogAdvice(err))
	}
	if cat != nil && (len(g.catalogs) > 0 || len(g.configs) == 0) {
		emit(lintCheck(cat))
	}
	if cat != nil {
		for _, t := range cat.Tools() {
			if len(t.Warnings()) > 0 {
				emit(check{name: "poisoning", detail: fmt.Sprintf("%s/%s: %s", t.Domain, t.Name, strings.Join(t.Warnings(), "; ")),
					fix: "read its description before trusting the tool; fix or remove it in the catalog file", note: true})
			}
		}
	}
	all, selves := g.checkUpstreams(ctx, emit, cat)
	emit(g.signInChecks()...)
	if cat != nil {
		// What a client's first session gets: the catalog files' tools
		// and those the servers listed just now.
		shown := cat
		if all != nil {
			shown = all
		}
		emit(g.exposureCheck(shown, selves))
	}
	emit(g.sandboxCheck(ctx)...)

	switch g.embedder {
	case "builtin", "builtin-hashed", "builtin-nolexicon":
		add("embedder", "built-in (offline); Ollama not checked", nil, "")
	default:
		emit(g.checkOllama(ctx)...)
	}

	g.dataDirChecks(add)

	if failed > 0 {
		return fmt.Errorf("%d of %d checks failed", failed, total)
	}
	return nil
}

// loadCatalog returns the catalog of the --catalog files, or of the
// built-in catalog (empty with --config alone), as the store builds it
// from them now.
func (g *globalFlags) loadCatalog() (*index.Catalog, error) {
	src, err := g.baseSource()
	if err != nil {
		return nil, err
	}
	return store.InspectCatalog(src)
}

// dataDirChecks are doctor's lines for the data dir: writable, what its
// catalog set's index holds, whether its files read back whole.
func (g *globalFlags) dataDirChecks(add func(name, detail string, err error, fix string)) {
	st, err := g.openStore(g.dataDir, store.Options{Set: g.set(), CheckWritable: true})
	switch {
	case errors.Is(err, store.ErrNotWritable):
		add("data dir", "", err, "choose a writable --data-dir")
	case err == nil && st.MemoryKeyword:
		st.Close()
		add("data dir", fmt.Sprintf("%s writable; its keyword index is in use by another toolscout process (a second one keeps its own in memory)", filepath.Clean(g.dataDir)), nil, "")
	case err == nil:
		n, _ := st.Keyword.Count()
		damage := st.Verify()
		st.Close()
		held := fmt.Sprintf("holds %d tools", n)
		if n == 0 {
			// Nothing indexed in this data dir yet: not the tools above.
			held = "holds no tools yet (serve or toolscout index builds it from the catalog and servers above)"
		}
		add("data dir", fmt.Sprintf("%s writable; this catalog set's keyword index (%s) %s", filepath.Clean(g.dataDir), st.Dir(), held), nil, "")
		if len(damage) == 0 {
			add("data files", "every checked file of this catalog set reads back whole", nil, "")
		} else {
			var list []string
			for _, d := range damage {
				list = append(list, d.String())
			}
			add("data files", "", fmt.Errorf("%d damaged: %s", len(damage), strings.Join(list, "; ")),
				"nothing to do by hand: each is removed and rebuilt, with a warning, when next used (toolscout index rebuilds what it needs now)")
		}
	default:
		add("data dir", "", err, "stop the other toolscout process, or delete the folder to rebuild it")
	}
}

// exposeMode returns the exposure mode serve would use without
// --expose, where it comes from, and the config's instructions.
func (g *globalFlags) exposeMode() (mode, from, extra string) {
	mode, from = string(server.ExposeMeta), "the default"
	if gc, err := g.gatewayConfig(); err == nil && gc != nil {
		extra = gc.Instructions
		if gc.Expose != "" {
			mode, from = gc.Expose, "the config's toolscout.expose"
		}
	}
	if from == "the default" {
		if env := os.Getenv("TOOLSCOUT_EXPOSE"); env != "" {
			mode, from = env, "TOOLSCOUT_EXPOSE"
		}
	}
	return mode, from, extra
}

// sandboxCheck, in code mode, runs a program in a sandbox as serve
// would, with the config's limits: code mode works only if this
// executable can start again as a sandbox.
func (g *globalFlags) sandboxCheck(ctx context.Context) []check {
	mode, _, _ := g.exposeMode()
	if exp, err := parseExpose(mode); err != nil || exp.Mode != server.ExposeCode {
		return nil
	}
	var lim codemode.Limits
	if gc, err := g.gatewayConfig(); err == nil && gc != nil && gc.Code != nil {
		lim = gc.Code.Limits
	}
	r := codemode.New(codemode.Options{Idle: -1})
	defer r.Close()
	t0 := time.Now()
	ans, err := r.Run(ctx, "[1, 2, 3].map(x => x * 14).pop()", lim, noTools{})
	fix := "code mode starts this executable again as a sandbox process: check that it can run (not on a noexec mount, not removed since), and that its limits (toolscout.code) leave room for a small program"
	switch {
	case err != nil:
		return []check{{name: "sandbox", detail: err.Error(), fix: fix}}
	case ans.Error != nil || string(ans.Result) != "42":
		detail := "a test program answered " + string(ans.Result)
		if ans.Error != nil {
			detail = ans.Error.Kind + ": " + ans.Error.Message
		}
		return []check{{name: "sandbox", detail: detail, fix: fix}}
	}
	l := lim.WithDefaults()
	return []check{{name: "sandbox", detail: fmt.Sprintf("a run_code program ran in a sandbox process in %s (limits: %s, %s CPU, %d MiB, %d tool calls)",
		time.Since(t0).Round(time.Millisecond), l.Wall, l.CPU, l.Memory>>20, l.ToolCalls)}}
}

// noTools is the bridge of doctor's test program, which calls none.
type noTools struct{}

func (noTools) Call(context.Context, string, string, json.RawMessage) (string, json.RawMessage, error) {
	return "", nil, errors.New("doctor's test program calls no tool")
}

func (noTools) Search(context.Context, string, int) (json.RawMessage, error) {
	return nil, errors.New("doctor's test program searches nothing")
}

// checkOllama lists the server's embedding models, names the one the
// embedder would use and measures it. With --embedder auto a missing
// server or model is a note: the built-in embedder serves.
func (g *globalFlags) checkOllama(ctx context.Context) []check {
	host, err := g.ollamaHost()
	if err != nil {
		return []check{{"ollama", err.Error(), "fix OLLAMA_HOST", false}}
	}
	auto := g.embedder != "ollama"
	fallback := ""
	if auto {
		fallback = "; until then --embedder auto ranks with the built-in embedder"
	}
	lctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	installed, err := embed.ListEmbeddingModels(lctx, host, nil)
	cancel()
	if err != nil {
		return []check{{"ollama", err.Error(), "start Ollama with `ollama serve` (or set OLLAMA_HOST)" + fallback, auto}}
	}
	var out []check
	list := "none"
	if len(installed) > 0 {
		list = strings.Join(installed, ", ")
	}
	out = append(out, check{name: "ollama", detail: fmt.Sprintf("%s answers; embedding models: %s", host, list)})
	choice, ok := embed.ChooseOllamaModel(installed, g.model, "")
	if !ok {
		return append(out, check{"model", "no embedding model installed", fmt.Sprintf("run `ollama pull %s` (or another embedding model)%s", embed.DefaultOllamaModel, fallback), auto})
	}
	o, err := g.newOllama(host, choice.Model, nil)
	if err != nil {
		return append(out, check{"model", err.Error(), "fix --prompt", false})
	}
	cctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	start := time.Now()
	err = o.Check(cctx)
	cancel()
	if err != nil {
		fix := "see the message from Ollama"
		if errors.Is(err, embed.ErrModelNotFound) {
			fix = fmt.Sprintf("run `ollama pull %s`, or drop --model to use an installed one", choice.Model)
		}
		// A model the user named must work; a missing one while others
		// are installed is advice in auto mode.
		return append(out, check{"model", err.Error(), fix + fallback, auto && len(installed) > 0 && choice.Reason != "--model"})
	}
	who := map[string]string{"--model": "named by --model", "preferred": "preferred of the installed", "installed": "the only kind installed"}[choice.Reason]
	if choice.Reason == "installed" {
		who = "first installed (not in the preference list: no prompts unless --prompt)"
	}
	return append(out, check{name: "model", detail: fmt.Sprintf("ollama/%s (%s): %d dimensions, %s per query", choice.Model, who, o.Info().Dims, time.Since(start).Round(time.Millisecond))})
}

// catalogAdvice says what to fix in a catalog file that does not load.
func catalogAdvice(err error) string {
	var ce *index.CatalogError
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return "the file does not exist: check the --catalog path"
	case errors.As(err, &ce) && ce.File != "" && ce.Path != "":
		return fmt.Sprintf("edit %s at %s as the message says (the format is in docs/catalog-files.md)", ce.File, ce.Path)
	case errors.As(err, &ce):
		return "fix the catalog as the message says (the format is in docs/catalog-files.md)"
	}
	return "check that the --catalog file is readable"
}

// exposureCheck says which exposure mode serve would use (the config's
// toolscout.expose, else TOOLSCOUT_EXPOSE, else meta) and what a client
// gets first: the instructions at initialize over cat, the upstream
// servers saying s of themselves, in tokens and whole, each line
// indented. serve's own --expose flag, when given, wins over both.
func (g *globalFlags) exposureCheck(cat *index.Catalog, s server.Selves) check {
	mode, from, extra := g.exposeMode()
	exp, err := parseExpose(mode)
	if err != nil {
		return check{name: "exposure", detail: fmt.Sprintf("%s: %v", from, err), fix: "set a valid mode: " + exposeChoices}
	}
	first := map[server.Mode]string{
		server.ExposeMeta:    "the meta-tools discover_tools, get_tool_schema and execute_tool",
		server.ExposeDynamic: "the meta-tools and enable_domain",
		server.ExposeEager:   fmt.Sprintf("all %s with their schemas", plural(cat.Len(), "tool")),
		server.ExposeCompact: fmt.Sprintf("all %s with summaries and short schemas", plural(cat.Len(), "tool")),
		server.ExposeCore:    "the meta-tools and the pinned tools",
		server.ExposeAuto:    "every tool if they fit the token budget, else the meta-tools",
		server.ExposeCode:    "discover_tools, get_tool_schema and run_code",
	}[exp.Mode]
	// A configured server that listed no tools is named as serve names
	// it (Options.Domains).
	var configured []string
	for d := range s.Descriptions {
		configured = append(configured, d)
	}
	slices.Sort(configured)
	text := server.InstructionsFor(cat, exp.Mode, extra, s, server.KnownDomains(configured, nil, s)...)
	n := len(strings.Fields(text))
	if enc, err := tokenizer.Get(tokenizer.O200kBase); err == nil {
		if c, err := enc.Count(text); err == nil {
			n = c
		}
	}
	return check{name: "exposure", detail: fmt.Sprintf("%s (from %s): a client lists %s; its instructions, %d tokens:\n%s", exp.Mode, from, first, n, indentLines(text))}
}

// instructionsIndent starts each line of the instructions doctor prints.
const instructionsIndent = "      "

// indentLines indents every line of text by instructionsIndent.
func indentLines(text string) string {
	return instructionsIndent + strings.ReplaceAll(text, "\n", "\n"+instructionsIndent)
}
