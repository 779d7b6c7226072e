package main

// The docs cannot drift from the program (issue 47): every command, flag
// and config key the program knows is named on some page of README.md or
// docs/*.md, every `toolscout CMD --flag` and config key a page shows
// exists, and the shell blocks marked runnable run.
//
// The pages are Markdown. A fenced block whose info string has the word
// runnable (```sh runnable) is run by TestRunnableExamples: each of its
// lines must be one toolscout command, run against the built binary in
// a temporary folder with --data-dir there and no Ollama
// (OLLAMA_HOST=127.0.0.1:9), so only examples that work offline on the
// built-in catalog can be marked. A line is expected to exit 0 unless
// its comment says otherwise ("# exits 1: a tool is flagged").

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// docPage is one Markdown page: its name (relative to the repository
// root) and its lines.
type docPage struct {
	name  string
	text  string // the whole page
	lines []string
}

// docBlock is a fenced code block of a page: its info string and its
// lines (their indentation up to the fence's removed), each with its
// line number in the page.
type docBlock struct {
	page  string
	line  int // the opening fence's
	info  []string
	lines []docLine
}

type docLine struct {
	n    int
	text string
}

func (b docBlock) lang() string {
	if len(b.info) == 0 {
		return ""
	}
	return b.info[0]
}

// docPages reads README.md and docs/*.md; docs/benchmarks/ is history,
// not reference.
func docPages(t *testing.T) []docPage {
	t.Helper()
	root := filepath.Join("..", "..")
	names, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	names = append([]string{filepath.Join(root, "README.md")}, names...)
	var pages []docPage
	for _, name := range names {
		data, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		rel, _ := filepath.Rel(root, name)
		pages = append(pages, docPage{name: filepath.ToSlash(rel), text: string(data), lines: strings.Split(string(data), "\n")})
	}
	if len(pages) < 2 {
		t.Fatalf("found %d pages under %s: README.md and docs/*.md expected", len(pages), root)
	}
	return pages
}

var fence = regexp.MustCompile("^( *)(```+|~~~+)(.*)$")

// blocks splits a page into its fenced code blocks and, for every other
// line, calls prose with the line number and the line.
func (p docPage) blocks(prose func(n int, line string)) []docBlock {
	var out []docBlock
	var cur *docBlock
	var indent int
	var marker string
	for i, line := range p.lines {
		n := i + 1
		m := fence.FindStringSubmatch(line)
		if cur == nil {
			if m != nil {
				cur = &docBlock{page: p.name, line: n, info: strings.Fields(m[3])}
				indent, marker = len(m[1]), m[2]
				continue
			}
			if prose != nil {
				prose(n, line)
			}
			continue
		}
		if m != nil && strings.HasPrefix(m[2], marker) && strings.TrimSpace(m[3]) == "" {
			out = append(out, *cur)
			cur = nil
			continue
		}
		cut := 0
		for cut < indent && cut < len(line) && line[cut] == ' ' {
			cut++
		}
		cur.lines = append(cur.lines, docLine{n, line[cut:]})
	}
	return out
}

var inlineCode = regexp.MustCompile("`([^`]+)`")

// docCommand is a toolscout command line a page shows.
type docCommand struct {
	where string // page:line
	cmd   string // the word after toolscout
	flags []string
}

var commandLine = regexp.MustCompile(`^(?:\$ +)?(?:\./)?(?:bin/)?toolscout +(.*)$`)

// parseCommand returns the toolscout command of a shell command (one
// segment of a line: no pipes, no &&), or false when it is not one.
func parseCommand(where, s string) (docCommand, bool) {
	m := commandLine.FindStringSubmatch(strings.TrimSpace(s))
	if m == nil {
		return docCommand{}, false
	}
	words := strings.Fields(m[1])
	if len(words) == 0 {
		return docCommand{}, false
	}
	c := docCommand{where: where, cmd: words[0]}
	for _, w := range words[1:] {
		if w == "--" {
			break
		}
		if name, ok := strings.CutPrefix(w, "--"); ok {
			name, _, _ = strings.Cut(name, "=")
			c.flags = append(c.flags, name)
		}
	}
	return c, true
}

// stripComment cuts a shell comment off a line (a # that starts a word).
func stripComment(line string) string {
	if strings.HasPrefix(strings.TrimSpace(line), "#") {
		return ""
	}
	if i := strings.Index(line, " #"); i >= 0 {
		return line[:i]
	}
	return line
}

var shellSeparator = regexp.MustCompile(`&&|\|\||;|\|`)

// docCommands returns the toolscout commands that the pages' code blocks
// (their lines, continued with \, split at && ; and |) and inline code
// spans (`toolscout CMD ...`, or `CMD --flag ...` of a command of
// commands(), as prose writes `serve --read-only`) show.
func docCommands(pages []docPage) []docCommand {
	var out []docCommand
	for _, p := range pages {
		prose := func(n int, line string) {
			for _, m := range inlineCode.FindAllStringSubmatch(line, -1) {
				span := m[1]
				if word, rest, ok := strings.Cut(span, " "); ok && strings.HasPrefix(rest, "--") && isCommand(word) {
					span = "toolscout " + span
				}
				if c, ok := parseCommand(fmt.Sprintf("%s:%d", p.name, n), span); ok {
					out = append(out, c)
				}
			}
		}
		for _, b := range p.blocks(prose) {
			if b.lang() == "json" {
				continue
			}
			for i := 0; i < len(b.lines); i++ {
				n, line := b.lines[i].n, stripComment(b.lines[i].text)
				for strings.HasSuffix(line, `\`) && i+1 < len(b.lines) {
					i++
					line = strings.TrimSuffix(line, `\`) + " " + stripComment(b.lines[i].text)
				}
				for _, seg := range shellSeparator.Split(line, -1) {
					if c, ok := parseCommand(fmt.Sprintf("%s:%d", p.name, n), seg); ok {
						out = append(out, c)
					}
				}
			}
		}
	}
	return out
}

func isCommand(name string) bool {
	return slices.ContainsFunc(commands(), func(c command) bool { return c.name == name })
}

var flagLine = regexp.MustCompile(`(?m)^  --([a-z0-9][a-z0-9-]*)`)

// commandFlags returns each command's flags, read from what its --help
// prints: the flag set the command builds, without running it.
func commandFlags(t *testing.T) map[string][]string {
	t.Helper()
	out := map[string][]string{}
	for _, c := range commands() {
		_, stderr, code := runCLI(t, c.name, "--help")
		_, list, ok := strings.Cut(stderr, "\nFlags:\n")
		if code != 0 || !ok {
			t.Fatalf("%s --help: exit %d, no Flags: section in %q: build the command's flag set with newFlagSet", c.name, code, stderr)
		}
		out[c.name] = []string{} // a command may have no flags
		for _, m := range flagLine.FindAllStringSubmatch(list, -1) {
			out[c.name] = append(out[c.name], m[1])
		}
		if len(out[c.name]) == 0 && strings.TrimSpace(list) != "" {
			t.Fatalf("%s --help: no flag read from %q: has printFlags changed?", c.name, list)
		}
	}
	return out
}

// documents reports whether some page has a match of re, which holds
// literal wherever it matches. Each page is matched whole, not line by
// line, and only when it holds literal (re run on every line cost
// TestDocsNameEveryConfigKey 2.8 CPU s under -race): the callers'
// patterns cannot span lines (a line break matches only where a line's
// end would).
func documents(pages []docPage, literal string, re *regexp.Regexp) bool {
	for _, p := range pages {
		if strings.Contains(p.text, literal) && re.MatchString(p.text) {
			return true
		}
	}
	return false
}

func TestDocsNameEveryCommandAndFlag(t *testing.T) {
	pages := docPages(t)
	flags := commandFlags(t)
	var missing []string
	seen := map[string]bool{}
	for _, c := range commands() {
		if !documents(pages, "toolscout "+c.name, regexp.MustCompile(`toolscout `+regexp.QuoteMeta(c.name)+`\b`)) {
			missing = append(missing, fmt.Sprintf("command %q: no page names `toolscout %s`", c.name, c.name))
		}
		for _, f := range flags[c.name] {
			if seen[f] {
				continue
			}
			seen[f] = true
			if !documents(pages, "--"+f, regexp.MustCompile(`--`+regexp.QuoteMeta(f)+`([^a-z0-9-]|$)`)) {
				missing = append(missing, fmt.Sprintf("flag --%s (toolscout %s): no page names it", f, c.name))
			}
		}
	}
	if len(missing) > 0 {
		t.Errorf("README.md and docs/*.md do not document:\n\t%s\nadd a line for each to the page of its command (docs/configuration.md for the flags every command takes)", strings.Join(missing, "\n\t"))
	}
}

func TestDocsShowOnlyFlagsThatExist(t *testing.T) {
	pages := docPages(t)
	flags := commandFlags(t)
	var wrong []string
	for _, c := range docCommands(pages) {
		if c.cmd == "--version" || c.cmd == "-version" || c.cmd == "version" || c.cmd == "--help" || c.cmd == "help" {
			continue
		}
		if strings.ToUpper(c.cmd) == c.cmd {
			continue // a placeholder: toolscout COMMAND --help
		}
		known, ok := flags[c.cmd]
		if !ok {
			wrong = append(wrong, fmt.Sprintf("%s: toolscout %s: no such command", c.where, c.cmd))
			continue
		}
		for _, f := range c.flags {
			if !slices.Contains(known, f) && f != "help" {
				wrong = append(wrong, fmt.Sprintf("%s: toolscout %s --%s: no such flag", c.where, c.cmd, f))
			}
		}
	}
	if len(wrong) > 0 {
		t.Errorf("the docs show commands and flags the program does not have:\n\t%s", strings.Join(wrong, "\n\t"))
	}
}

// configSections are the objects of a config file whose keys toolscout
// knows, by their path (* for any name), and those keys.
var configSections = []struct {
	path []string
	keys []string
}{
	{[]string{"toolscout"}, toolscoutKeys},
	{[]string{"toolscout", "code"}, codeKeys},
	{[]string{"toolscout", "callers", "*"}, callerKeys},
	{[]string{"toolscout", "jwt"}, jwtKeys},
	{[]string{"mcpServers", "*"}, serverKeys},
	{[]string{"mcpServers", "*", "auth"}, upstreamAuthKeys},
}

func TestDocsNameEveryConfigKey(t *testing.T) {
	t.Parallel()
	pages := docPages(t)
	var missing []string
	for _, s := range configSections {
		for _, k := range s.keys {
			q := regexp.QuoteMeta(k)
			// "key", `key` or a dotted path ending in it: `toolscout.key`.
			re := regexp.MustCompile(`"` + q + `"|` + "`" + `([a-z_.]+\.)?` + q + "`")
			if !documents(pages, k, re) {
				missing = append(missing, fmt.Sprintf("%s: %q", strings.Join(s.path, "."), k))
			}
		}
	}
	if len(missing) > 0 {
		t.Errorf("README.md and docs/*.md do not document the config keys:\n\t%s\nadd each to docs/configuration.md (or the page of its feature), as `key` or \"key\"", strings.Join(missing, "\n\t"))
	}
}

func TestDocsShowOnlyConfigKeysThatExist(t *testing.T) {
	var wrong []string
	for _, p := range docPages(t) {
		prose := func(n int, line string) {
			for _, m := range inlineCode.FindAllStringSubmatch(line, -1) {
				if strings.Contains(m[1], "{") {
					wrong = append(wrong, unknownConfigKeys([]docLine{{n, m[1]}}, p.name)...)
				}
			}
		}
		for _, b := range p.blocks(prose) {
			if b.lang() == "json" {
				wrong = append(wrong, unknownConfigKeys(b.lines, p.name)...)
			}
		}
	}
	if len(wrong) > 0 {
		t.Errorf("the docs show config keys toolscout does not know:\n\t%s", strings.Join(wrong, "\n\t"))
	}
}

// unknownConfigKeys scans JSON, or what pages write for it (fragments
// such as "toolscout": {...}, placeholders such as ...), for the keys of
// configSections that toolscout does not know.
func unknownConfigKeys(lines []docLine, page string) []string {
	type frame struct {
		name    string // its key in the parent; "[]" in an array
		array   bool
		lastKey string
	}
	root := &frame{}
	stack := []*frame{root}
	var wrong []string
	path := func() []string {
		var p []string
		for _, f := range stack[1:] {
			if f.name != "" {
				p = append(p, f.name)
			}
		}
		return p
	}
	pending := "" // a string that may be a key
	pendingLine := 0
	for _, l := range lines {
		s := l.text
		for i := 0; i < len(s); i++ {
			top := stack[len(stack)-1]
			c := s[i]
			switch c {
			case '"':
				j := i + 1
				for j < len(s) && s[j] != '"' {
					if s[j] == '\\' {
						j++
					}
					j++
				}
				if j > len(s) {
					j = len(s)
				}
				pending, pendingLine = s[i+1:min(j, len(s))], l.n
				i = j
				continue
			case ':':
				if pending != "" && !top.array {
					top.lastKey = pending
					if bad := checkConfigKey(path(), pending); bad != "" {
						wrong = append(wrong, fmt.Sprintf("%s:%d: %s", page, pendingLine, bad))
					}
				}
			case '{', '[':
				name := top.lastKey
				if top.array {
					name = "[]"
				}
				stack = append(stack, &frame{name: name, array: c == '['})
			case '}', ']':
				if len(stack) > 1 {
					stack = stack[:len(stack)-1]
				}
			}
			if c != ' ' && c != '\t' {
				pending = ""
			}
		}
	}
	return wrong
}

// checkConfigKey says what is wrong with key in the object at path, or
// "" when nothing is (or toolscout does not check that object).
func checkConfigKey(path []string, key string) string {
	for _, s := range configSections {
		if len(s.path) != len(path) {
			continue
		}
		match := true
		for i := range path {
			if s.path[i] != "*" && s.path[i] != path[i] {
				match = false
			}
		}
		if match && !slices.Contains(s.keys, key) {
			return fmt.Sprintf("%s: unknown key %q (known: %s)", strings.Join(path, "."), key, strings.Join(s.keys, ", "))
		}
	}
	return ""
}

var exitComment = regexp.MustCompile(`#.*\bexits? (\d+)\b`)

func TestRunnableExamples(t *testing.T) {
	t.Parallel()
	if runtime.GOOS == "windows" {
		t.Skip("the examples are sh command lines")
	}
	var blocks []docBlock
	for _, p := range docPages(t) {
		for _, b := range p.blocks(nil) {
			if slices.Contains(b.info, "runnable") {
				blocks = append(blocks, b)
			}
		}
	}
	if len(blocks) == 0 {
		t.Fatal("no block of README.md or docs/*.md is marked runnable (```sh runnable)")
	}
	bin := buildBinary(t)
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "TOOLSCOUT_") && !strings.HasPrefix(kv, "OLLAMA_") && !strings.HasPrefix(kv, "HOME=") && !strings.HasPrefix(kv, "XDG_") {
			env = append(env, kv)
		}
	}
	for _, b := range blocks {
		t.Run(fmt.Sprintf("%s:%d", b.page, b.line), func(t *testing.T) {
			dir := t.TempDir()
			benv := append(slices.Clip(env), "OLLAMA_HOST=127.0.0.1:9", "HOME="+dir, "XDG_CACHE_HOME="+filepath.Join(dir, "cache"), "XDG_CONFIG_HOME="+filepath.Join(dir, "config"))
			ran := 0
			for _, l := range b.lines {
				where := fmt.Sprintf("%s:%d", b.page, l.n)
				code := stripComment(l.text)
				if strings.TrimSpace(code) == "" {
					continue
				}
				c, ok := parseCommand(where, code)
				if !ok || shellSeparator.MatchString(code) || strings.HasSuffix(strings.TrimSpace(code), `\`) {
					t.Errorf("%s: %q: a runnable block holds one toolscout command a line", where, l.text)
					continue
				}
				want := 0
				if m := exitComment.FindStringSubmatch(l.text); m != nil {
					want, _ = strconv.Atoi(m[1])
				}
				// The binary for bin/toolscout, and --data-dir right after
				// the command word.
				_, args, _ := strings.Cut(commandLine.FindStringSubmatch(strings.TrimSpace(code))[1], c.cmd)
				line := fmt.Sprintf("%s %s --data-dir %s%s", strconv.Quote(bin), c.cmd, strconv.Quote(filepath.Join(dir, "data")), args)
				ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
				cmd := exec.CommandContext(ctx, "sh", "-c", line)
				cmd.Dir, cmd.Env = dir, benv
				out, err := cmd.CombinedOutput()
				cancel()
				got := 0
				if err != nil {
					got = -1
					if ee, ok := err.(*exec.ExitError); ok {
						got = ee.ExitCode()
					}
				}
				ran++
				if got != want {
					t.Errorf("%s: %s: exit %d (%v), want %d; output:\n%s", where, l.text, got, err, want, out)
				}
			}
			if ran == 0 {
				t.Errorf("%s:%d: a runnable block without a toolscout command", b.page, b.line)
			}
		})
	}
}

// The scanner's paths, on the shapes the pages write.
func TestUnknownConfigKeys(t *testing.T) {
	for _, tc := range []struct {
		name, text string
		want       []string // what each error starts with, after page:line:
	}{
		{"known keys", `{"mcpServers": {"gh": {"command": "npx", "env": {"ANY": "x"}}}, "toolscout": {"expose": "core", "code": {"timeout": "5s"}}}`, nil},
		{"fragment with placeholders", `"toolscout": {"pinned": ["a", "b"], ...}`, nil},
		{"unknown toolscout key", `{"toolscout": {"expsoe": "core"}}`, []string{`toolscout: unknown key "expsoe"`}},
		{"unknown code key", `{"toolscout": {"code": {"timeout": "5s",` + "\n" + `"cpus": 2}}}`, []string{`toolscout.code: unknown key "cpus"`}},
		{"unknown caller key", `{"toolscout": {"callers": {"ops": {"allow": ["*"], "tokens": []}}}}`, []string{`toolscout.callers.ops: unknown key "tokens"`}},
		{"unknown server key", `{"mcpServers": {"gh": {"comand": "npx", "args": [{"x": 1}]}}}`, []string{`mcpServers.gh: unknown key "comand"`}},
		{"values are not keys", `{"toolscout": {"instructions": "a: b", "pinned": ["x:y"]}, "command": "toolscout"}`, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var lines []docLine
			for i, l := range strings.Split(tc.text, "\n") {
				lines = append(lines, docLine{i + 1, l})
			}
			got := unknownConfigKeys(lines, "p.md")
			ok := len(got) == len(tc.want)
			for i := range got {
				_, msg, _ := strings.Cut(got[i], ": ") // after p.md:1
				ok = ok && strings.HasPrefix(msg, tc.want[i])
			}
			if !ok {
				t.Errorf("unknownConfigKeys(%q) = %q, want %q", tc.text, got, tc.want)
			}
		})
	}
}
