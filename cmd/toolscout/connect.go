package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/pmezard/go-difflib/difflib"

	"github.com/toolscout/toolscout/internal/fileio"
)

// toolscout connect CLIENT: moves a client's MCP servers into toolscout's
// config and points the client at toolscout (issue 47, item 4).

const connectUsage = `connect CLIENT [flags]
       toolscout connect --config-file PATH [flags]
       toolscout connect [CLIENT] --undo [--to FILE]

Imports the MCP servers of a client (` + "claude-desktop, claude-code, cursor or vscode" + `,
or any file in their formats with --config-file) into toolscout's config,
and replaces them in the client's file by one server: this toolscout
(stdio: serve --config with toolscout's config). Every other key of the
client's file stays as it was.

Where the client's file is looked for (--project DIR for a project's):
  claude-desktop  macOS ~/Library/Application Support/Claude/claude_desktop_config.json,
                  Windows %APPDATA%\Claude\claude_desktop_config.json,
                  Linux ~/.config/Claude/claude_desktop_config.json
  claude-code     ~/.claude.json (user scope); DIR/.mcp.json (project scope)
  cursor          ~/.cursor/mcp.json; DIR/.cursor/mcp.json
  vscode          the user profile's mcp.json (macOS ~/Library/Application Support/Code/User,
                  Windows %APPDATA%\Code\User, Linux ~/.config/Code/User); DIR/.vscode/mcp.json

Servers keep their env blocks, headers and disabled state as written
(secrets stay in the files; nothing is printed of them). A server whose
name toolscout's config already has with another definition is refused
unless --replace. Before a file changes it is copied to
FILE.toolscout-backup-TIME; writes are atomic and keep the file's mode;
if the client's file cannot be written, toolscout's config is put back.
Comments inside the client's servers object are not carried over (the
backup keeps them); comments elsewhere in the file stay. --undo restores
the files the last connect changed from their backups, byte for byte.`

// connectOptions is one connect or undo, resolved from the flags.
type connectOptions struct {
	client mcpClient // name "" with --config-file
	file   string    // the client's file
	to     string    // toolscout's config
	self   string    // this executable
	dryRun bool
	// replace takes the client's definition of a server toolscout's
	// config has with another.
	replace bool
	now     time.Time
	// write writes a file atomically keeping its mode
	// (writeKeepingMode; tests make it fail).
	write func(path string, data []byte) error
}

// defaultToolscoutConfig is ~/.config/toolscout/servers.json
// ($XDG_CONFIG_HOME when set), on every system.
func defaultToolscoutConfig(h hostEnv) string {
	return filepath.Join(h.configHome(), "toolscout", "servers.json")
}

func runConnect(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	home, err := os.UserHomeDir()
	if err != nil {
		return fmt.Errorf("connect: %w", err)
	}
	h := hostEnv{home: home, goos: runtime.GOOS, getenv: os.Getenv}
	f, err := parseConnectFlags(h, args, stderr)
	if err != nil {
		return err
	}
	o := connectOptions{dryRun: f.dryRun, replace: f.replace, now: time.Now(), write: writeKeepingMode}
	if o.to, err = f.toFile(); err != nil {
		return err
	}
	if o.client, err = f.client(); err != nil {
		return err
	}
	if f.undo {
		if f.dryRun || f.replace || f.configFile != "" || f.project != "" {
			return usagef("--undo takes only --to (and the client)")
		}
		return undoConnect(o, stdout)
	}
	if o.file, err = f.clientFile(o.client, h); err != nil {
		return err
	}
	if err := resolveConnectPaths(&o); err != nil {
		return err
	}
	return connect(ctx, o, stdout)
}

// connectFlags are connect's flags as given, before they are resolved
// into connectOptions.
type connectFlags struct {
	configs                 []string // --config (one at most is used, as --to)
	configFile, project, to string
	toGiven                 bool // --to given, not its default
	dryRun, undo, replace   bool
	pos                     []string // the client named, if any
}

// parseConnectFlags parses connect's command line.
func parseConnectFlags(h hostEnv, args []string, stderr io.Writer) (*connectFlags, error) {
	fs := newFlagSet("connect", connectUsage, stderr)
	// Every command takes the global flags (DESIGN.md); connect uses
	// --config alone: one --config is toolscout's config, as --to.
	var g globalFlags
	g.register(fs, "warn")
	configFile := fs.String("config-file", "", "import from this client config `PATH` (mcpServers, or VS Code's servers) instead of a named client's")
	project := fs.String("project", "", "with claude-code, cursor or vscode: the project folder `DIR` whose file (.mcp.json, .cursor/mcp.json, .vscode/mcp.json) to connect instead of the user's")
	to := fs.String("to", defaultToolscoutConfig(h), "toolscout's config `FILE` that the servers are imported into and that the client's entry serves (one --config FILE is the same)")
	dryRun := fs.Bool("dry-run", false, "print the diff of both files (values of env and headers masked) and change nothing")
	undo := fs.Bool("undo", false, "restore, from their backups, the files the last connect changed (pass the same --to)")
	replace := fs.Bool("replace", false, "when toolscout's config has a server of the same name with another definition, take the client's")
	pos, err := parseFlags(fs, args)
	if err != nil {
		return nil, err
	}
	f := &connectFlags{configs: g.configs, configFile: *configFile, project: *project, to: *to,
		dryRun: *dryRun, undo: *undo, replace: *replace, pos: pos}
	fs.Visit(func(fl *flag.Flag) { f.toGiven = f.toGiven || fl.Name == "to" })
	return f, nil
}

// toFile is the absolute path of toolscout's config: --to, or the one
// --config.
func (f *connectFlags) toFile() (string, error) {
	to := f.to
	switch {
	case len(f.configs) > 1:
		return "", usagef("connect imports into one config: give one --config (or --to)")
	case len(f.configs) == 1 && f.toGiven && f.configs[0] != f.to:
		return "", usagef("--config and --to name two files: give one")
	case len(f.configs) == 1:
		to = f.configs[0]
	}
	abs, err := filepath.Abs(to)
	if err != nil {
		return "", fmt.Errorf("connect: --to: %w", err)
	}
	return abs, nil
}

// client is the client named on the command line (name "" with
// --config-file or a bare --undo).
func (f *connectFlags) client() (mcpClient, error) {
	switch {
	case len(f.pos) > 1:
		return mcpClient{}, usagef("connect takes one client, got %q", f.pos)
	case len(f.pos) == 1 && f.configFile != "":
		return mcpClient{}, usagef("give a client or --config-file, not both")
	case len(f.pos) == 1:
		c, ok := findClient(f.pos[0])
		if !ok {
			return mcpClient{}, usagef("unknown client %q: use %s, or --config-file PATH for another client's file", f.pos[0], clientNames())
		}
		return c, nil
	case f.configFile == "" && !f.undo:
		return mcpClient{}, usagef("connect which client? use %s, or --config-file PATH", clientNames())
	}
	return mcpClient{}, nil
}

// clientFile is the absolute path of the client's file to connect:
// --config-file, the client's project file under --project, or its user
// file.
func (f *connectFlags) clientFile(c mcpClient, h hostEnv) (string, error) {
	var file string
	switch {
	case f.configFile != "":
		if f.project != "" {
			return "", usagef("--project picks a client's project file: not with --config-file")
		}
		file = f.configFile
	case f.project != "":
		if c.project == "" {
			return "", usagef("%s has no project file: connect its user file without --project", c.name)
		}
		file = filepath.Join(f.project, c.project)
	default:
		file = c.userFile(h)
	}
	abs, err := filepath.Abs(file)
	if err != nil {
		return "", fmt.Errorf("connect: %w", err)
	}
	return abs, nil
}

// resolveConnectPaths follows symbolic links to both files and to this
// executable.
func resolveConnectPaths(o *connectOptions) error {
	// A file kept elsewhere behind a symbolic link (dotfiles) is
	// written where it is, and the link stays.
	for _, p := range []*string{&o.file, &o.to} {
		if real, err := filepath.EvalSymlinks(*p); err == nil {
			*p = real
		}
	}
	var err error
	if o.self, err = os.Executable(); err != nil {
		return fmt.Errorf("connect: the path of this toolscout: %w", err)
	}
	if s, err := filepath.EvalSymlinks(o.self); err == nil {
		o.self = s
	}
	return nil
}

// importedServer is a server of the client's file, as it goes into
// toolscout's config.
type importedServer struct {
	name     string
	entry    []byte // compact JSON
	disabled bool
	// existing: toolscout's config has the name (same: with this
	// definition).
	existing, same bool
}

// connectPlan is what a connect writes: both files, before and after.
type connectPlan struct {
	clientOld, clientNew []byte
	toOld, toNew         []byte
	toExists             bool
	servers              []importedServer
	skipped              []string // the client's entries that start toolscout
	notes                []string
	secrets              []string
}

// editorVars are the variables VS Code and Cursor fill in themselves
// (${workspaceFolder}, ${userHome}): toolscout takes them for
// environment variables.
var editorVars = []string{"workspaceFolder", "workspaceFolderBasename", "userHome", "pathSeparator", "cwd", "fileWorkspaceFolder"}

var (
	envRefRE = regexp.MustCompile(`\$\{env:([A-Za-z_][A-Za-z0-9_]*)\}`)
	anyVarRE = regexp.MustCompile(`\$\{[^}"]*\}`)
)

// readClientFile reads the client's file, saying where it looked when
// there is none.
func readClientFile(o connectOptions) ([]byte, error) {
	data, err := os.ReadFile(o.file)
	if errors.Is(err, fs.ErrNotExist) {
		who := "a client config"
		if o.client.name != "" {
			who = o.client.title + "'s config"
		}
		return nil, fmt.Errorf("connect: no %s: looked for %s (pass --config-file PATH if it is elsewhere)", who, o.file)
	}
	if err != nil {
		return nil, fmt.Errorf("connect: %w", err)
	}
	return data, nil
}

// serversKey returns the key of the client's servers in its config and
// whether their entries carry a type: the client's, or with
// --config-file, what the file has (the format says itself).
func serversKey(o connectOptions, ct jsoncText) (key string, typed bool, err error) {
	key, typed = o.client.key, o.client.typed
	if o.client.name != "" {
		return key, typed, nil
	}
	_, hasMCP := findMember(ct.plain, "mcpServers")
	_, hasServers := findMember(ct.plain, "servers")
	switch {
	case hasMCP:
		return "mcpServers", typed, nil
	case hasServers:
		return "servers", true, nil
	}
	return "", false, &ConfigError{File: o.file, Reason: `no "mcpServers" (Claude Desktop, Claude Code, Cursor) nor "servers" (VS Code) object: not an MCP client's config`}
}

// planConnect reads both files and works out what they become.
func planConnect(o connectOptions) (*connectPlan, error) {
	p := &connectPlan{}
	var err error
	if p.clientOld, err = readClientFile(o); err != nil {
		return nil, err
	}
	ct, err := readJSONC(o.file, p.clientOld)
	if err != nil {
		return nil, err
	}
	key, typed, err := serversKey(o, ct)
	if err != nil {
		return nil, err
	}
	sm, hasServers := findMember(ct.plain, key)
	if hasServers && ct.plain[sm.with.start] != '{' {
		return nil, &ConfigError{File: o.file, Path: key, Reason: "not an object of servers"}
	}

	// toolscout's config.
	p.toOld, err = os.ReadFile(o.to)
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		return nil, fmt.Errorf("connect: %w", err)
	default:
		p.toExists = true
	}
	var tt jsoncText
	existing := map[string]jsonMember{}
	var tm jsonMember
	hasTo := false
	if p.toExists {
		if tt, err = readJSONC(o.to, p.toOld); err != nil {
			return nil, err
		}
		if len(tt.comments) > 0 {
			return nil, &ConfigError{File: o.to, Reason: "has comments: toolscout reads its config as plain JSON"}
		}
		if tm, hasTo = findMember(tt.plain, "mcpServers"); hasTo {
			if tt.plain[tm.with.start] != '{' {
				return nil, &ConfigError{File: o.to, Path: "mcpServers", Reason: "not an object of servers"}
			}
			for _, m := range objectMembers(tt.plain, tm.with) {
				existing[m.name] = m
				p.secrets = append(p.secrets, entrySecrets(tt.plain[m.with.start:m.with.end])...)
			}
		}
	}

	// The client's servers, as toolscout's config takes them.
	var conflicts []string
	if hasServers {
		for _, m := range objectMembers(ct.plain, sm.with) {
			raw := ct.plain[m.with.start:m.with.end]
			p.secrets = append(p.secrets, entrySecrets(raw)...)
			var e serverEntry
			if json.Unmarshal(raw, &e) != nil || raw[0] != '{' {
				return nil, &ConfigError{File: o.file, Path: key + "." + m.name, Reason: "not a server object"}
			}
			if isToolscout(e.Command) {
				p.skipped = append(p.skipped, m.name)
				continue
			}
			s, notes, err := importEntry(o.file, key, m.name, raw)
			if err != nil {
				return nil, err
			}
			p.notes = append(p.notes, notes...)
			p.secrets = append(p.secrets, entrySecrets(s.entry)...)
			s.disabled = e.Disabled
			if x, ok := existing[m.name]; ok {
				s.existing = true
				s.same = canonicalJSON(tt.plain[x.with.start:x.with.end]) == canonicalJSON(s.entry)
				if !s.same && !o.replace {
					conflicts = append(conflicts, m.name)
				}
			}
			p.servers = append(p.servers, s)
		}
		if n := ct.commentsIn(sm.with.start, sm.with.end); n > 0 {
			p.notes = append(p.notes, fmt.Sprintf("%s: %s inside %q %s not carried over (toolscout's config is plain JSON); the backup keeps them", o.file, plural(n, "comment"), key, map[bool]string{true: "is", false: "are"}[n == 1]))
		}
	}
	if len(conflicts) > 0 {
		return nil, fmt.Errorf("connect: %s already %s %s with another definition than %s's: rename it in one file, or pass --replace to take %s's",
			o.to, map[bool]string{true: "has server", false: "has servers"}[len(conflicts) == 1], quoteList(conflicts), o.file, o.file)
	}
	p.toNew = newToolscoutConfig(p, tt, tm, hasTo)
	p.clientNew = newClientFile(o, p.clientOld, ct, key, typed, sm, hasServers)
	return p, nil
}

// importEntry returns the client's entry raw as toolscout's config takes
// it: as written, with Cursor's and VS Code's ${env:NAME} written as
// toolscout's ${NAME}; notes name what toolscout will not do as the
// client did.
func importEntry(file, key, name string, raw []byte) (importedServer, []string, error) {
	var b bytes.Buffer
	json.Compact(&b, raw)
	entry := envRefRE.ReplaceAll(b.Bytes(), []byte("$${$1}"))
	var notes []string
	for _, v := range anyVarRE.FindAll(entry, -1) {
		switch sub := varRE.FindSubmatch(v); {
		case sub == nil || len(sub[0]) != len(v):
			notes = append(notes, fmt.Sprintf("server %q: toolscout does not expand %s (the client's own variable): it stays as written; put the value in toolscout's config or an environment variable", name, v))
		case slices.Contains(editorVars, string(sub[1])):
			notes = append(notes, fmt.Sprintf("server %q: %s is the editor's variable; toolscout reads it from the environment it runs in", name, v))
		}
	}
	// toolscout must be able to serve what it imports: the entry on
	// its own, every ${VAR} set (to a value a URL may hold: whether the
	// variables are set is the serving environment's business).
	cfg := []byte(`{"mcpServers": {` + string(mustJSON(name)) + `: ` + string(entry) + `}}`)
	if _, err := parseConfig(file, cfg, func(string) (string, bool) { return "https://set.invalid", true }); err != nil {
		var ce *ConfigError
		if errors.As(err, &ce) {
			ce.Path = strings.Replace(ce.Path, "mcpServers.", key+".", 1)
			return importedServer{}, nil, fmt.Errorf("connect: toolscout cannot take this server: %w", ce)
		}
		return importedServer{}, nil, fmt.Errorf("connect: %s: server %q: %w", file, name, err)
	}
	var known map[string]json.RawMessage
	json.Unmarshal(entry, &known)
	for k := range known {
		if !slices.Contains(serverKeys, k) {
			notes = append(notes, fmt.Sprintf("server %q: key %q is kept as written; toolscout does not use it", name, k))
		}
	}
	return importedServer{name: name, entry: entry}, notes, nil
}

func mustJSON(v any) []byte {
	out, _ := json.Marshal(v)
	return out
}

func quoteList(names []string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = fmt.Sprintf("%q", n)
	}
	return strings.Join(q, ", ")
}

// newToolscoutConfig returns toolscout's config with the client's servers
// in: new ones after the servers it has, replaced ones in place, the rest
// of the file as it was.
func newToolscoutConfig(p *connectPlan, tt jsoncText, tm jsonMember, hasTo bool) []byte {
	var names []string
	var values [][]byte
	var edits []edit
	existing := map[string]jsonMember{}
	if hasTo {
		for _, m := range objectMembers(tt.plain, tm.with) {
			existing[m.name] = m
		}
	}
	for _, s := range p.servers {
		switch {
		case s.same:
		case s.existing: // --replace
			m := existing[s.name]
			edits = append(edits, edit{m.with, indented(s.entry, lineIndent(p.toOld, m.member.start), indentUnit(p.toOld, tm.member.start))})
		default:
			names, values = append(names, s.name), append(values, s.entry)
		}
	}
	switch {
	case !p.toExists:
		return append(objectText([]string{"mcpServers"}, [][]byte{objectText(names, values, "  ", "  ")}, "", "  "), '\n')
	case len(names) == 0:
		return applyEdits(p.toOld, edits)
	case hasTo:
		unit := indentUnit(p.toOld, tm.member.start)
		prefix := lineIndent(p.toOld, tm.member.start)
		members := objectMembers(tt.plain, tm.with)
		if len(members) == 0 {
			edits = append(edits, edit{tm.with, objectText(names, values, prefix, unit)})
			break
		}
		last := members[len(members)-1]
		inner := lineIndent(p.toOld, last.member.start)
		var b bytes.Buffer
		for i, name := range names {
			b.WriteString(",\n" + inner)
			b.Write(mustJSON(name))
			b.WriteString(": ")
			b.Write(indented(values[i], inner, unit))
		}
		edits = append(edits, edit{span{last.member.end, last.member.end}, b.Bytes()})
	default: // a config without mcpServers: the member goes first
		top := topObject(tt.plain)
		members := objectMembers(tt.plain, top)
		if len(members) == 0 {
			return append(objectText([]string{"mcpServers"}, [][]byte{objectText(names, values, "  ", "  ")}, "", "  "), '\n')
		}
		first := members[0]
		unit := indentUnit(p.toOld, first.member.start)
		prefix := lineIndent(p.toOld, first.member.start)
		text := slicesConcat([]byte(`"mcpServers": `), objectText(names, values, prefix, unit), []byte(",\n"+prefix))
		if bytes.LastIndexByte(p.toOld[:first.member.start], '\n') < top.start {
			text = slicesConcat([]byte(`"mcpServers": `), objectText(names, values, "", "  "), []byte(", "))
		}
		edits = append(edits, edit{span{first.member.start, first.member.start}, text})
	}
	return applyEdits(p.toOld, edits)
}

func slicesConcat(parts ...[]byte) []byte { return bytes.Join(parts, nil) }

// toolscoutEntry is the client's entry that starts this toolscout.
func toolscoutEntry(o connectOptions, typed bool) []byte {
	type entry struct {
		Type    string   `json:"type,omitempty"`
		Command string   `json:"command"`
		Args    []string `json:"args"`
	}
	e := entry{Command: o.self, Args: []string{"serve", "--config", o.to}}
	if typed {
		e.Type = "stdio"
	}
	return mustJSON(e)
}

// newClientFile returns the client's file with its servers replaced by
// toolscout's entry.
func newClientFile(o connectOptions, old []byte, ct jsoncText, key string, typed bool, sm jsonMember, hasServers bool) []byte {
	entry := toolscoutEntry(o, typed)
	if hasServers {
		prefix := lineIndent(old, sm.member.start)
		unit := indentUnit(old, sm.member.start)
		if bytes.LastIndexByte(old[:sm.member.start], '\n') < 0 { // all on one line
			return applyEdits(old, []edit{{sm.with, []byte(`{"toolscout": ` + string(entry) + `}`)}})
		}
		return applyEdits(old, []edit{{sm.with, objectText([]string{"toolscout"}, [][]byte{entry}, prefix, unit)}})
	}
	top := topObject(ct.plain)
	members := objectMembers(ct.plain, top)
	if len(members) == 0 {
		return append(objectText([]string{key}, [][]byte{objectText([]string{"toolscout"}, [][]byte{entry}, "  ", "  ")}, "", "  "), '\n')
	}
	// After the last member: ~/.claude.json's first keys are Claude
	// Code's own.
	last := members[len(members)-1]
	prefix := lineIndent(old, last.member.start)
	unit := indentUnit(old, last.member.start)
	text := slicesConcat([]byte(",\n"+prefix), mustJSON(key), []byte(": "), objectText([]string{"toolscout"}, [][]byte{entry}, prefix, unit))
	return applyEdits(old, []edit{{span{last.member.end, last.member.end}, text}})
}

// connect imports the client's servers and points the client at
// toolscout (or, dry, prints what it would do).
func connect(ctx context.Context, o connectOptions, stdout io.Writer) error {
	if o.file == o.to {
		return usagef("the client's file and toolscout's config (--to) are the same file: %s", o.file)
	}
	p, err := planConnect(o)
	if err != nil {
		return err
	}
	if o.dryRun {
		fmt.Fprintf(stdout, "dry run: nothing is written (values of env and headers are masked)\n\n")
		writeDiff(stdout, o.to, p.toOld, p.toNew, p.secrets)
		writeDiff(stdout, o.file, p.clientOld, p.clientNew, p.secrets)
		printConnectSummary(stdout, o, p)
		return nil
	}
	if ctx.Err() != nil {
		return ctx.Err()
	}
	run, err := commitConnect(o, p)
	if err != nil {
		return err
	}
	printConnectSummary(stdout, o, p)
	for _, f := range run.Files {
		if f.Backup != "" {
			fmt.Fprintf(stdout, "backup: %s\n", f.Backup)
		}
	}
	who, name := o.client.title, o.client.name
	if name == "" {
		who = "the client"
		name = "--config-file " + o.file
	}
	fmt.Fprintf(stdout, "restart %s to use toolscout; toolscout connect %s --undo puts both files back\n", who, name)
	return nil
}

// printConnectSummary says what was (or would be) imported and noted.
func printConnectSummary(w io.Writer, o connectOptions, p *connectPlan) {
	var added, replaced, same, disabled []string
	for _, s := range p.servers {
		switch {
		case s.same:
			same = append(same, s.name)
		case s.existing:
			replaced = append(replaced, s.name)
		default:
			added = append(added, s.name)
		}
		if s.disabled {
			disabled = append(disabled, s.name)
		}
	}
	verb := "imported"
	if o.dryRun {
		verb = "would import"
	}
	fmt.Fprintf(w, "%s %s from %s into %s", verb, plural(len(added), "server"), o.file, o.to)
	if len(added) > 0 {
		fmt.Fprintf(w, ": %s", strings.Join(added, ", "))
	}
	fmt.Fprintln(w)
	if len(replaced) > 0 {
		fmt.Fprintf(w, "replaced (--replace): %s\n", strings.Join(replaced, ", "))
	}
	if len(same) > 0 {
		fmt.Fprintf(w, "already in toolscout's config as defined: %s\n", strings.Join(same, ", "))
	}
	if len(disabled) > 0 {
		fmt.Fprintf(w, "disabled, and still disabled in toolscout's config: %s\n", strings.Join(disabled, ", "))
	}
	if len(p.skipped) > 0 {
		fmt.Fprintf(w, "not imported (they start toolscout itself): %s\n", strings.Join(p.skipped, ", "))
	}
	for _, n := range p.notes {
		fmt.Fprintln(w, "note:", n)
	}
	verb = "now starts"
	if o.dryRun {
		verb = "would start"
	}
	fmt.Fprintf(w, "%s %s toolscout (%s serve --config %s) in place of its servers\n", o.file, verb, o.self, o.to)
}

// writeDiff prints the unified diff of a file, secrets masked.
func writeDiff(w io.Writer, path string, old, new []byte, secrets []string) {
	if bytes.Equal(old, new) {
		fmt.Fprintf(w, "%s: unchanged\n\n", path)
		return
	}
	from, a := path, difflib.SplitLines(maskSecrets(string(old), secrets))
	if old == nil {
		from, a = "/dev/null", nil
	}
	d, _ := difflib.GetUnifiedDiffString(difflib.UnifiedDiff{
		A: a, B: difflib.SplitLines(maskSecrets(string(new), secrets)),
		FromFile: from, ToFile: path, Context: 3,
	})
	fmt.Fprintln(w, strings.TrimRight(d, "\n"))
	fmt.Fprintln(w)
}

// commitConnect backs up and writes both files, toolscout's config first,
// and records the run. On any failure it puts back every file it
// changed and removes the backups it made.
func commitConnect(o connectOptions, p *connectPlan) (run connectRun, err error) {
	run = connectRun{Client: o.client.name, Time: o.now.UTC()}
	if run.Client == "" {
		run.Client = "config-file"
	}
	stPath := statePath(o.to)
	st, err := readConnectState(stPath)
	if err != nil {
		return run, err
	}
	type step struct {
		path     string
		old, new []byte
		existed  bool
	}
	steps := []step{{o.to, p.toOld, p.toNew, p.toExists}, {o.file, p.clientOld, p.clientNew, true}}
	var done []changedFile
	defer func() {
		if err == nil {
			return
		}
		for _, f := range done {
			if f.SHA256 != "" { // written: put back
				if f.Created {
					os.Remove(f.Path)
				} else if data, rerr := os.ReadFile(f.Backup); rerr == nil {
					if werr := writeKeepingMode(f.Path, data); werr != nil {
						err = fmt.Errorf("%w; and %s could not be put back (its backup is %s): %v", err, f.Path, f.Backup, werr)
						continue
					}
				}
			}
			if f.Backup != "" {
				os.Remove(f.Backup)
			}
		}
	}()
	// Backups first: a file that cannot be backed up is not written.
	for _, s := range steps {
		f := changedFile{Path: s.path, Created: !s.existed}
		if s.existed {
			fi, serr := os.Stat(s.path)
			if serr != nil {
				return run, fmt.Errorf("connect: %w", serr)
			}
			if f.Backup, err = backupFile(s.path, s.old, fi.Mode(), o.now); err != nil {
				return run, fmt.Errorf("connect: %w (nothing was changed)", err)
			}
		}
		done = append(done, f)
	}
	if !p.toExists {
		if err = os.MkdirAll(filepath.Dir(o.to), 0o700); err != nil {
			return run, fmt.Errorf("connect: %w", err)
		}
	}
	for i, s := range steps {
		if err = o.write(s.path, s.new); err != nil {
			return run, fmt.Errorf("connect: %w (%s)", err, map[bool]string{true: "nothing was changed", false: "every file was put back as it was"}[i == 0])
		}
		done[i].SHA256 = sha(s.new)
	}
	run.Files = done
	st.Runs = append(st.Runs, run)
	if err = st.write(stPath); err != nil {
		return run, fmt.Errorf("connect: %w (every file was put back as it was)", err)
	}
	return run, nil
}

// undoConnect restores the files of the last connect from their backups.
func undoConnect(o connectOptions, stdout io.Writer) error {
	stPath := statePath(o.to)
	st, err := readConnectState(stPath)
	if err != nil {
		return err
	}
	if len(st.Runs) == 0 {
		return fmt.Errorf("connect --undo: nothing to undo: no connect is recorded in %s (pass the --to the connect had)", stPath)
	}
	run := st.Runs[len(st.Runs)-1]
	if o.client.name != "" && o.client.name != run.Client {
		return fmt.Errorf("connect --undo: the last connect was %s's, not %s's: undo it first (toolscout connect %s --undo)", run.Client, o.client.name, run.Client)
	}
	// The client's file first, then toolscout's config.
	for i := len(run.Files) - 1; i >= 0; i-- {
		f := run.Files[i]
		cur, rerr := os.ReadFile(f.Path)
		if rerr == nil && sha(cur) != f.SHA256 {
			fi, serr := os.Stat(f.Path)
			if serr != nil {
				return fmt.Errorf("connect --undo: %w", serr)
			}
			kept, berr := backupFile(f.Path, cur, fi.Mode(), o.now)
			if berr != nil {
				return fmt.Errorf("connect --undo: %s changed since connect and could not be kept: %w", f.Path, berr)
			}
			fmt.Fprintf(stdout, "%s changed since connect: what it held is kept in %s\n", f.Path, kept)
		}
		if f.Created {
			if err := os.Remove(f.Path); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return fmt.Errorf("connect --undo: %w", err)
			}
			fmt.Fprintf(stdout, "removed %s (connect created it)\n", f.Path)
			continue
		}
		data, err := os.ReadFile(f.Backup)
		if err != nil {
			return fmt.Errorf("connect --undo: the backup of %s: %w", f.Path, err)
		}
		if fi, err := os.Stat(f.Backup); err == nil && rerr != nil {
			// The file is gone: it comes back with the backup's mode.
			if err := fileio.WriteFile(f.Path, data, fi.Mode().Perm()); err != nil {
				return fmt.Errorf("connect --undo: %w", err)
			}
		} else if err := writeKeepingMode(f.Path, data); err != nil {
			return fmt.Errorf("connect --undo: %w", err)
		}
		fmt.Fprintf(stdout, "restored %s from %s\n", f.Path, f.Backup)
	}
	st.Runs = st.Runs[:len(st.Runs)-1]
	return st.write(stPath)
}
