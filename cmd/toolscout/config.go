package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/agnivade/levenshtein"

	"github.com/toolscout/toolscout/index"
	txt "github.com/toolscout/toolscout/internal/text"
	"github.com/toolscout/toolscout/search"
	"github.com/toolscout/toolscout/server"
	"github.com/toolscout/toolscout/server/callers"
	"github.com/toolscout/toolscout/server/gateway"
)

// ConfigError is bad config input: the file, the server and field, the
// reason.
type ConfigError struct {
	File, Path, Reason string
}

// Error reads "file: path: reason".
func (e *ConfigError) Error() string {
	if e.Path == "" {
		return e.File + ": " + e.Reason
	}
	return e.File + ": " + e.Path + ": " + e.Reason
}

// serverEntry is one mcpServers entry: the keys Claude Desktop, Cursor and
// Claude Code use, plus toolscout's own.
type serverEntry struct {
	Command string            `json:"command"`
	Args    []string          `json:"args"`
	Env     map[string]string `json:"env"`
	Cwd     string            `json:"cwd"`
	URL     string            `json:"url"`
	Headers map[string]string `json:"headers"`
	Type    string            `json:"type"`
	// HeaderFiles are headers whose values are read from files (a
	// secret kept out of the config): header name → file.
	HeaderFiles map[string]string `json:"header_files"`
	// CallerHeaderFiles map callers (of toolscout.callers) to the headers
	// their tool calls carry instead of all of headers and header_files,
	// read from files: caller → header → file. ForwardAuthorization
	// sends a caller's own Authorization.
	CallerHeaderFiles    map[string]map[string]string `json:"caller_header_files"`
	ForwardAuthorization bool                         `json:"forward_authorization"`
	// Auth is how toolscout signs in to a remote server: {"type":
	// "oauth", "client_id"?, "scopes"?} (toolscout auth login).
	Auth json.RawMessage `json:"auth"`
	// toolscout's keys.
	Description string            `json:"description"`
	Groups      map[string]string `json:"groups"`
	Disabled    bool              `json:"disabled"`
	// DisabledTools and DeprecatedTools set tools' state (tool names;
	// tool name → what to use instead).
	DisabledTools   []string          `json:"disabled_tools"`
	DeprecatedTools map[string]string `json:"deprecated_tools"`
	Timeout         float64           `json:"timeout"`
	// ConnectTimeout bounds the server's start (seconds).
	ConnectTimeout float64 `json:"connect_timeout"`
}

// gatewayConfig is what the config files say.
type gatewayConfig struct {
	Upstreams []gateway.UpstreamConfig
	Expose    string   // "" when no file sets it
	Pinned    []string // core mode
	Model     string   // Ollama embedding model ("" when no file sets it)
	// Quarantine hides tools with poisoning flags (any file may set it).
	Quarantine bool
	// Fallback is "eager" to list every tool directly when the meta layer
	// cannot serve ("" when no file sets it).
	Fallback string
	// ConnectTimeout is toolscout.connect_timeout: how long a server
	// without its own connect_timeout gets to start (0 when no file sets
	// it).
	ConnectTimeout time.Duration
	// Feedback is toolscout.feedback: "on" or "off" ("" when no file
	// sets it).
	Feedback string
	// StartupWait is toolscout.startup_wait: how long the first tools/list
	// and meta-tool calls wait for the start to settle (0 when no file
	// sets it).
	StartupWait time.Duration
	// InitializeWait is toolscout.initialize_wait: how long, from the
	// server's start, a client's initialize waits for the upstream
	// servers' tools (0 when no file sets it).
	InitializeWait time.Duration
	// Audit is toolscout.audit: the audit trail's file (relative to the
	// config file's folder), or "-" for stderr ("" when no file sets it).
	// AuditArguments is toolscout.audit_arguments (nil when no file sets
	// it).
	Audit          string
	AuditArguments *bool
	// Condense is toolscout.condense: list the tools that eager, core,
	// dynamic and auto mode show directly with condensed descriptions
	// (nil when no file sets it).
	Condense *bool
	// ToolNames is toolscout.tool_names: qualified (domain__tool, the
	// default) or server (the servers' own names, prefixed only where two
	// collide); "" when no file sets it.
	ToolNames string
	// Instructions is toolscout.instructions: text added to the server's
	// instructions (the last file's that has them).
	Instructions string
	// Pin is toolscout.pin: "off" serves each upstream tool as listed,
	// "on" (the default) holds a changed definition back until it is
	// approved (pins.go); "" when no file sets it.
	Pin string
	// Callers is toolscout.callers and toolscout.jwt (nil when no file
	// defines callers; one file may).
	Callers *callersSpec
	// Code is toolscout.code: code mode's limits (nil when no file sets
	// them; the last file's win).
	Code     *codeConfig
	Disabled []string // domains switched off
	Skipped  []string // servers that are toolscout itself
	// OAuth are the remote servers behind OAuth (an "auth" of type
	// oauth), by domain.
	OAuth map[string]oauthUpstream
	// Secrets are the values the config holds that no caller and no log
	// may read (configSecrets): the commands' Redactor learns them.
	Secrets []string
}

// The keys of a server entry (serverEntry) and of the toolscout section.
var (
	serverKeys    = []string{"command", "args", "env", "cwd", "url", "headers", "header_files", "caller_header_files", "forward_authorization", "auth", "type", "description", "groups", "disabled", "disabled_tools", "deprecated_tools", "timeout", "connect_timeout"}
	toolscoutKeys = []string{"expose", "pinned", "model", "quarantine", "fallback", "connect_timeout", "startup_wait", "initialize_wait", "feedback", "audit", "audit_arguments", "condense", "instructions", "pin", "callers", "jwt", "oauth", "code", "tool_names"}
)

// checkKeys checks the keys of the object at path in data (the whole
// document when path is ""; the toolscout section for "toolscout"). A key
// one or two edits from a known one is a typo and an error naming both.
// Other unknown keys are errors only when strict: server entries and the
// top level may carry keys of other clients (Claude Desktop, Cursor).
func checkKeys(file, path string, data []byte, known []string, strict bool) error {
	obj := data
	if path == "toolscout" {
		var top map[string]json.RawMessage
		if json.Unmarshal(data, &top) != nil || top["toolscout"] == nil {
			return nil
		}
		obj = top["toolscout"]
	}
	var m map[string]json.RawMessage
	if json.Unmarshal(obj, &m) != nil {
		return nil // the typed decoding says what is wrong
	}
	names := make([]string, 0, len(m))
	for k := range m {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		if slices.Contains(known, k) {
			continue
		}
		at := k
		if path != "" {
			at = path + "." + k
		}
		if s := search.Closest(k, known, 1); len(s) > 0 && levenshtein.ComputeDistance(strings.ToLower(k), s[0]) <= 2 {
			return &ConfigError{File: file, Path: at, Reason: fmt.Sprintf("unknown key (did you mean %q?)", s[0])}
		}
		if strict {
			return &ConfigError{File: file, Path: at, Reason: "unknown key: use " + strings.Join(known, ", ")}
		}
	}
	return nil
}

// varRE is a ${VAR} of a config, or ${VAR:-default} (the value when VAR
// is unset or empty), as Claude Code's .mcp.json writes it.
var varRE = regexp.MustCompile(`\$\{([A-Za-z_][A-Za-z0-9_]*)(:-[^}]*)?\}`)

// configFile is a config file as decoded, before it is checked.
type configFile struct {
	MCPServers map[string]json.RawMessage `json:"mcpServers"`
	Toolscout  *toolscoutSection          `json:"toolscout"`
}

// toolscoutSection is a config file's toolscout section as decoded.
type toolscoutSection struct {
	Expose         string   `json:"expose"`
	Pinned         []string `json:"pinned"`
	Model          string   `json:"model"`
	Quarantine     bool     `json:"quarantine"`
	Fallback       string   `json:"fallback"`
	ConnectTimeout float64  `json:"connect_timeout"`
	StartupWait    float64  `json:"startup_wait"`
	InitializeWait float64  `json:"initialize_wait"`
	Feedback       string   `json:"feedback"`
	Audit          string   `json:"audit"`
	AuditArguments *bool    `json:"audit_arguments"`
	Condense       *bool    `json:"condense"`
	ToolNames      string   `json:"tool_names"`
	Instructions   string   `json:"instructions"`
	Pin            string   `json:"pin"`
	// Callers and JWT: parseCallers.
	Callers json.RawMessage `json:"callers"`
	JWT     json.RawMessage `json:"jwt"`
	OAuth   json.RawMessage `json:"oauth"`
	// Code: parseCodeSpec.
	Code json.RawMessage `json:"code"`
}

// parseConfig parses one mcpServers file. getenv looks up ${VAR}s.
func parseConfig(file string, data []byte, getenv func(string) (string, bool)) (*gatewayConfig, error) {
	top, err := decodeConfigFile(file, data)
	if err != nil {
		return nil, err
	}
	gc := &gatewayConfig{}
	if top.Toolscout != nil {
		if err := parseToolscoutSection(file, top.Toolscout, gc); err != nil {
			return nil, err
		}
	}
	domains := map[string]string{}
	for _, key := range slices.Sorted(maps.Keys(top.MCPServers)) {
		if err := parseServer(file, key, top.MCPServers[key], getenv, domains, gc); err != nil {
			return nil, err
		}
	}
	return gc, nil
}

// decodeConfigFile decodes data as a config file and checks its keys and
// that it has mcpServers.
func decodeConfigFile(file string, data []byte) (*configFile, error) {
	var top configFile
	if err := json.Unmarshal(data, &top); err != nil {
		return nil, configJSONError(file, data, err)
	}
	if err := checkKeys(file, "", data, []string{"mcpServers", "toolscout"}, false); err != nil {
		return nil, err
	}
	if err := checkKeys(file, "toolscout", data, toolscoutKeys, true); err != nil {
		return nil, err
	}
	if top.MCPServers == nil {
		return nil, &ConfigError{File: file, Path: "mcpServers", Reason: `missing: a config is {"mcpServers": {"name": {"command": ...} or {"url": ...}}}`}
	}
	return &top, nil
}

// configJSONError says where a config file's JSON is wrong: the line of a
// syntax error, the field of a value of the wrong type.
func configJSONError(file string, data []byte, err error) error {
	var syn *json.SyntaxError
	if errors.As(err, &syn) {
		line := bytes.Count(data[:min(int(syn.Offset), len(data))], []byte("\n")) + 1
		return &ConfigError{File: file, Reason: fmt.Sprintf("invalid JSON on line %d: %v", line, err)}
	}
	var typ *json.UnmarshalTypeError
	if errors.As(err, &typ) && typ.Field != "" {
		return &ConfigError{File: file, Path: typ.Field, Reason: fmt.Sprintf("expected %s, found JSON %s", txt.JSONKind(typ.Type), typ.Value)}
	}
	if typ != nil {
		// The whole file is a number, a string, an array: say what a
		// config is rather than name a Go type.
		return &ConfigError{File: file, Reason: fmt.Sprintf(`found JSON %s, not an object: a config is {"mcpServers": {"name": {"command": ...} or {"url": ...}}}`, typ.Value)}
	}
	return &ConfigError{File: file, Reason: err.Error()}
}

// toolscoutChoice is a key of the toolscout section that takes one of a
// few words.
type toolscoutChoice struct {
	key, value string
	allowed    []string
	use        string // the Reason after the value: what to write instead
}

// parseToolscoutSection checks the toolscout section ts of file and sets
// what it says in gc.
func parseToolscoutSection(file string, ts *toolscoutSection, gc *gatewayConfig) error {
	gc.Expose, gc.Pinned, gc.Model = ts.Expose, ts.Pinned, strings.TrimSpace(ts.Model)
	gc.Quarantine = ts.Quarantine
	gc.Feedback, gc.Pin, gc.Fallback, gc.ToolNames = ts.Feedback, ts.Pin, ts.Fallback, ts.ToolNames
	if err := checkToolscoutChoices(file, ts); err != nil {
		return err
	}
	if gc.Expose != "" {
		if _, err := parseExpose(gc.Expose); err != nil {
			return &ConfigError{File: file, Path: "toolscout.expose", Reason: err.Error()}
		}
	}
	if err := parseToolscoutWaits(file, ts, gc); err != nil {
		return err
	}
	gc.Audit, gc.AuditArguments, gc.Condense = ts.Audit, ts.AuditArguments, ts.Condense
	gc.Instructions = strings.TrimSpace(ts.Instructions)
	if n := utf8.RuneCountInString(gc.Instructions); n > server.MaxExtraInstructions {
		return &ConfigError{File: file, Path: "toolscout.instructions", Reason: fmt.Sprintf("%d characters: at most %d (every client reads them before its first request: keep them to what the model must know)", n, server.MaxExtraInstructions)}
	}
	// A relative path is the config file's neighbour: a client that
	// starts toolscout does so from a folder of its own choosing.
	if gc.Audit != "" && gc.Audit != "-" && !filepath.IsAbs(gc.Audit) {
		gc.Audit = filepath.Join(filepath.Dir(file), gc.Audit)
	}
	var err error
	if gc.Callers, err = parseCallers(file, ts.Callers, ts.JWT, ts.OAuth); err != nil {
		return err
	}
	gc.Code, err = parseCodeSpec(file, ts.Code)
	return err
}

// checkToolscoutChoices checks the keys of the toolscout section that take
// one of a few words ("" is each one's default).
func checkToolscoutChoices(file string, ts *toolscoutSection) error {
	for _, c := range []toolscoutChoice{
		{"feedback", ts.Feedback, []string{"", "on", "off"}, "use on (learn from what agents run) or off"},
		{"pin", ts.Pin, []string{"", "on", "off"}, "use on (hold a tool whose definition changed upstream until toolscout approve) or off (serve tools as listed)"},
		{"fallback", ts.Fallback, []string{"", "none", string(server.ExposeEager)}, "use eager (list every tool directly when the meta layer cannot serve) or none"},
		{"tool_names", ts.ToolNames, []string{"", server.ToolNamesQualified, server.ToolNamesServer}, "use qualified (every tool as domain__tool, the default) or server (each under its server's own name, domain__tool only where two servers have the same name)"},
	} {
		if !slices.Contains(c.allowed, c.value) {
			return &ConfigError{File: file, Path: "toolscout." + c.key, Reason: fmt.Sprintf("%q: %s", c.value, c.use)}
		}
	}
	return nil
}

// parseToolscoutWaits reads the toolscout section's durations.
func parseToolscoutWaits(file string, ts *toolscoutSection, gc *gatewayConfig) error {
	var err error
	if gc.ConnectTimeout, err = seconds(file, "toolscout.connect_timeout", ts.ConnectTimeout); err != nil {
		return err
	}
	if gc.StartupWait, err = seconds(file, "toolscout.startup_wait", ts.StartupWait); err != nil {
		return err
	}
	gc.InitializeWait, err = seconds(file, "toolscout.initialize_wait", ts.InitializeWait)
	return err
}

// parseServer parses the mcpServers entry key of file (raw) into gc: an
// upstream, a disabled domain or a skipped toolscout. domains maps the
// domains taken so far to their entries' names.
func parseServer(file, key string, raw json.RawMessage, getenv func(string) (string, bool), domains map[string]string, gc *gatewayConfig) error {
	path := "mcpServers." + key
	e, err := decodeServerEntry(file, path, raw)
	if err != nil {
		return err
	}
	dom := index.SanitizeDomainName(key)
	if prev, ok := domains[dom]; ok {
		return &ConfigError{File: file, Path: path, Reason: fmt.Sprintf("server names %q and %q both become domain %q: rename one", prev, key, dom)}
	}
	domains[dom] = key
	if e.Disabled {
		gc.Disabled = append(gc.Disabled, dom)
		return nil
	}
	uc, err := upstreamConfig(file, path, dom, e, getenv, gc)
	if err != nil {
		return err
	}
	gc.Secrets = append(gc.Secrets, configSecrets(e, uc)...)
	if isToolscout(uc.Command) {
		// A Claude Desktop config that lists toolscout itself: starting
		// it from here would start toolscout again, and again.
		gc.Skipped = append(gc.Skipped, dom)
		return nil
	}
	gc.Upstreams = append(gc.Upstreams, uc)
	return nil
}

// decodeServerEntry checks the keys of the server entry at path and
// decodes it.
func decodeServerEntry(file, path string, raw json.RawMessage) (serverEntry, error) {
	var e serverEntry
	if err := checkKeys(file, path, raw, serverKeys, false); err != nil {
		return e, err
	}
	if err := json.NewDecoder(bytes.NewReader(raw)).Decode(&e); err != nil {
		var typ *json.UnmarshalTypeError
		if errors.As(err, &typ) {
			return e, &ConfigError{File: file, Path: path + "." + typ.Field, Reason: fmt.Sprintf("expected %s, found JSON %s", txt.JSONKind(typ.Type), typ.Value)}
		}
		return e, &ConfigError{File: file, Path: path, Reason: err.Error()}
	}
	return e, nil
}

// upstreamConfig turns the enabled server entry e at path into the
// upstream of domain dom, its ${VAR}s expanded; an OAuth sign-in goes
// into gc.OAuth.
func upstreamConfig(file, path, dom string, e serverEntry, getenv func(string) (string, bool), gc *gatewayConfig) (gateway.UpstreamConfig, error) {
	for _, name := range slices.Sorted(maps.Keys(e.DeprecatedTools)) {
		if n := len(e.DeprecatedTools[name]); n > index.MaxDeprecatedBytes {
			return gateway.UpstreamConfig{}, &ConfigError{File: file, Path: path + ".deprecated_tools." + name, Reason: fmt.Sprintf("%d bytes: say in at most %d what to use instead", n, index.MaxDeprecatedBytes)}
		}
	}
	uc := gateway.UpstreamConfig{Domain: dom, Command: e.Command, Args: e.Args, Cwd: e.Cwd, Description: e.Description, Groups: e.Groups,
		DisabledTools: e.DisabledTools, DeprecatedTools: e.DeprecatedTools}
	var err error
	if uc.Transport, err = serverTransport(file, path, e); err != nil {
		return uc, err
	}
	if uc.Timeout, err = seconds(file, path+".timeout", e.Timeout); err != nil {
		return uc, err
	}
	if uc.ConnectTimeout, err = seconds(file, path+".connect_timeout", e.ConnectTimeout); err != nil {
		return uc, err
	}
	x := &expander{file: file, path: path, getenv: getenv}
	expandRemote(x, e, &uc)
	x.then(func() error { return serverAuth(file, path, dom, e, &uc, gc) })
	expandStdio(x, e, &uc)
	return uc, x.err
}

// serverTransport checks that e is either started (command) or reached
// (url) and returns its transport: "" (stdio), "http" or "sse".
func serverTransport(file, path string, e serverEntry) (string, error) {
	switch {
	case e.Command != "" && e.URL != "":
		return "", &ConfigError{File: file, Path: path, Reason: `has both "command" and "url": a server is either started (command) or reached (url)`}
	case e.Command == "" && e.URL == "":
		return "", &ConfigError{File: file, Path: path, Reason: `needs "command" (a stdio server) or "url" (a remote server)`}
	}
	switch e.Type {
	case "", "stdio":
		if e.Type == "stdio" && e.Command == "" {
			return "", &ConfigError{File: file, Path: path + ".type", Reason: `"stdio" needs "command"`}
		}
		return "", nil
	case "sse":
		return "sse", nil
	case "http", "streamable-http", "streamableHttp":
		return "http", nil
	}
	return "", &ConfigError{File: file, Path: path + ".type", Reason: fmt.Sprintf("%q: use stdio, http or sse", e.Type)}
}

// expander expands the ${VAR}s of one server entry's values and keeps the
// entry's first error: once there is one, values stay as written and no
// further step runs.
type expander struct {
	file, path string
	getenv     func(string) (string, bool)
	err        error
}

// expand returns s with its ${VAR}s (and ${VAR:-default}s) filled in; an
// unset VAR without a default is the error of field.
func (x *expander) expand(field, s string) string {
	if x.err != nil {
		return s
	}
	return varRE.ReplaceAllStringFunc(s, func(m string) string {
		sub := varRE.FindStringSubmatch(m)
		name := sub[1]
		v, ok := x.getenv(name)
		if def, hasDef := strings.CutPrefix(sub[2], ":-"); hasDef && v == "" {
			return def
		}
		if !ok && x.err == nil {
			x.err = &ConfigError{File: x.file, Path: x.path + "." + field, Reason: fmt.Sprintf("${%s} is not set in the environment", name)}
		}
		return v
	})
}

// expandMap returns m with every value expanded (nil when m is empty).
func (x *expander) expandMap(field string, m map[string]string) map[string]string {
	if len(m) == 0 {
		return nil
	}
	out := map[string]string{}
	for k, v := range m {
		out[k] = x.expand(field+"."+k, v)
	}
	return out
}

// then runs step unless there is an error already, and keeps its error.
func (x *expander) then(step func() error) {
	if x.err == nil {
		x.err = step()
	}
}

// expandRemote fills in a remote server's URL (checked to be http(s)) and
// headers.
func expandRemote(x *expander, e serverEntry, uc *gateway.UpstreamConfig) {
	if e.URL != "" {
		uc.URL = x.expand("url", e.URL)
		x.then(func() error {
			if u, perr := url.Parse(uc.URL); perr != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
				return &ConfigError{File: x.file, Path: x.path + ".url", Reason: fmt.Sprintf("%q is not an http(s) URL", uc.URL)}
			}
			return nil
		})
	}
	uc.Headers = x.expandMap("headers", e.Headers)
}

// serverAuth reads a server's header files, its OAuth sign-in (into
// gc.OAuth) and its callers' header files.
func serverAuth(file, path, dom string, e serverEntry, uc *gateway.UpstreamConfig, gc *gatewayConfig) error {
	if len(e.HeaderFiles) > 0 {
		if err := headerFiles(file, path, e, uc); err != nil {
			return err
		}
	}
	if e.Auth != nil {
		o, err := parseUpstreamAuth(file, path, e, *uc)
		if err != nil {
			return err
		}
		if gc.OAuth == nil {
			gc.OAuth = map[string]oauthUpstream{}
		}
		gc.OAuth[dom] = *o
	}
	if len(e.CallerHeaderFiles) > 0 || e.ForwardAuthorization {
		return callerHeaderFiles(file, path, e, uc)
	}
	return nil
}

// expandStdio fills in a started server's env, command and args (Claude
// Code expands ${VAR} in command and args as well) and checks that the
// command is not empty once expanded.
func expandStdio(x *expander, e serverEntry, uc *gateway.UpstreamConfig) {
	uc.Env = x.expandMap("env", e.Env)
	if e.Command == "" {
		return
	}
	uc.Command = x.expand("command", e.Command)
	uc.Args = make([]string, len(e.Args))
	for i, a := range e.Args {
		uc.Args[i] = x.expand(fmt.Sprintf("args[%d]", i), a)
	}
	x.then(func() error {
		if strings.TrimSpace(uc.Command) == "" {
			return &ConfigError{File: x.file, Path: x.path + ".command", Reason: fmt.Sprintf("%q is empty once ${VAR}s are expanded", e.Command)}
		}
		return nil
	})
}

// maxSeconds bounds a config's durations: a day is more than any server
// needs to start, and far from time.Duration's overflow.
const maxSeconds = 24 * 60 * 60

// seconds converts a config's number of seconds at path (0: the default)
// into a duration.
func seconds(file, path string, v float64) (time.Duration, error) {
	if v < 0 || v > maxSeconds {
		return 0, &ConfigError{File: file, Path: path, Reason: fmt.Sprintf("%v: must be a number of seconds from 0 (the default) to %d", v, maxSeconds)}
	}
	return time.Duration(v * float64(time.Second)), nil
}

// isToolscout reports whether command starts toolscout itself.
func isToolscout(command string) bool {
	if command == "" {
		return false
	}
	base := filepath.Base(command)
	if base == "toolscout" || base == "toolscout.exe" {
		return true
	}
	self, err := os.Executable()
	if err != nil {
		return false
	}
	path, err := exec.LookPath(command)
	if err != nil {
		return false
	}
	a, err1 := filepath.EvalSymlinks(self)
	b, err2 := filepath.EvalSymlinks(path)
	return err1 == nil && err2 == nil && a == b
}

// exposeChoices names the values --expose takes.
const exposeChoices = "meta, eager, core, dynamic, auto[:TOKENS], compact or code"

// maxAutoBudget bounds auto mode's budget: a million tokens is more than
// any client's context.
const maxAutoBudget = 1_000_000

// parseExpose reads an exposure mode: one of server.ExposeModes, or
// auto:TOKENS with auto mode's token budget.
func parseExpose(s string) (server.Exposure, error) {
	name, budget, hasBudget := strings.Cut(s, ":")
	mode, err := server.ParseMode(name)
	if err != nil {
		return server.Exposure{}, fmt.Errorf("%q: use %s", s, exposeChoices)
	}
	exp := server.Exposure{Mode: mode}
	if !hasBudget {
		return exp, nil
	}
	if mode != server.ExposeAuto {
		return exp, fmt.Errorf("%q: only auto takes a token budget (auto:TOKENS)", s)
	}
	n, err := strconv.Atoi(budget)
	if err != nil || n < 1 || n > maxAutoBudget {
		return exp, fmt.Errorf("%q: auto:TOKENS takes a whole number of tokens from 1 to %d, e.g. auto:%d", s, maxAutoBudget, server.DefaultAutoBudget)
	}
	exp.Budget = n
	return exp, nil
}

// loadConfigs reads every --config file into one gateway config.
func loadConfigs(paths []string) (*gatewayConfig, error) {
	all := &gatewayConfig{}
	seen := map[string]string{}
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			return nil, fmt.Errorf("config: %w", err)
		}
		gc, err := parseConfig(p, data, os.LookupEnv)
		if err != nil {
			return nil, err
		}
		for _, u := range gc.Upstreams {
			if prev, ok := seen[u.Domain]; ok {
				return nil, &ConfigError{File: p, Path: "mcpServers." + u.Domain, Reason: "also defined in " + prev}
			}
			seen[u.Domain] = p
		}
		all.Upstreams = append(all.Upstreams, gc.Upstreams...)
		for d, o := range gc.OAuth {
			if all.OAuth == nil {
				all.OAuth = map[string]oauthUpstream{}
			}
			all.OAuth[d] = o
		}
		all.Disabled = append(all.Disabled, gc.Disabled...)
		all.Skipped = append(all.Skipped, gc.Skipped...)
		if gc.Expose != "" {
			all.Expose = gc.Expose
		}
		if gc.Model != "" {
			all.Model = gc.Model
		}
		if gc.Fallback != "" {
			all.Fallback = gc.Fallback
		}
		if gc.ConnectTimeout > 0 {
			all.ConnectTimeout = gc.ConnectTimeout
		}
		if gc.StartupWait > 0 {
			all.StartupWait = gc.StartupWait
		}
		if gc.InitializeWait > 0 {
			all.InitializeWait = gc.InitializeWait
		}
		if gc.Feedback != "" {
			all.Feedback = gc.Feedback
		}
		if gc.Audit != "" {
			all.Audit = gc.Audit
		}
		if gc.AuditArguments != nil {
			all.AuditArguments = gc.AuditArguments
		}
		if gc.Condense != nil {
			all.Condense = gc.Condense
		}
		if gc.ToolNames != "" {
			all.ToolNames = gc.ToolNames
		}
		if gc.Instructions != "" {
			all.Instructions = gc.Instructions
		}
		if gc.Pin != "" {
			all.Pin = gc.Pin
		}
		if gc.Code != nil {
			all.Code = gc.Code
		}
		if gc.Callers != nil {
			if all.Callers != nil {
				return nil, &ConfigError{File: p, Path: "toolscout.callers", Reason: "also defined in " + all.Callers.File + ": define the callers in one file"}
			}
			all.Callers = gc.Callers
		}
		all.Quarantine = all.Quarantine || gc.Quarantine
		all.Secrets = append(all.Secrets, gc.Secrets...)
		all.Pinned = append(all.Pinned, gc.Pinned...)
	}
	return all, nil
}

// configSecrets returns the secret values of a server entry e, read
// into uc: every header of header_files and caller_header_files (kept in
// files for being secret), and the headers and env variables (after
// ${VAR} expansion) whose names say they hold a credential
// (secretName).
func configSecrets(e serverEntry, uc gateway.UpstreamConfig) []string {
	var out []string
	for name, v := range uc.Headers {
		if _, fromFile := e.HeaderFiles[name]; fromFile || secretName(name) {
			out = append(out, v)
		}
	}
	for _, h := range uc.CallerHeaders {
		for _, v := range h {
			out = append(out, v)
		}
	}
	for name, v := range uc.Env {
		if secretName(name) {
			out = append(out, v)
		}
	}
	return out
}

// secretNameWords are what the name of a header or environment variable
// holding a credential says (Authorization, X-Api-Key,
// GITHUB_PERSONAL_ACCESS_TOKEN, DB_PASSWORD).
var secretNameWords = []string{"auth", "token", "key", "secret", "passw", "cookie", "session", "credential", "signature", "private"}

// secretName reports whether the name of a header or environment
// variable says it holds a credential.
func secretName(name string) bool {
	name = strings.ToLower(name)
	return slices.ContainsFunc(secretNameWords, func(w string) bool { return strings.Contains(name, w) })
}

// headerFiles adds to uc the headers e reads from files (relative to the
// config file's folder): each file holds one value, trimmed, on one line.
func headerFiles(file, path string, e serverEntry, uc *gateway.UpstreamConfig) error {
	if e.URL == "" {
		return &ConfigError{File: file, Path: path + ".header_files", Reason: "headers are sent to remote servers (url), not to a command"}
	}
	if uc.Headers == nil {
		uc.Headers = map[string]string{}
	}
	for _, name := range slices.Sorted(maps.Keys(e.HeaderFiles)) {
		if _, dup := e.Headers[name]; dup {
			return &ConfigError{File: file, Path: path + ".header_files." + name, Reason: "also in headers: give the header once"}
		}
	}
	return readHeaderFiles(file, path+".header_files", e.HeaderFiles, uc.Headers)
}

// callerHeaderFiles reads e's per-caller headers into uc (their caller
// names are checked against toolscout.callers by checkCallerHeaders).
func callerHeaderFiles(file, path string, e serverEntry, uc *gateway.UpstreamConfig) error {
	if e.URL == "" {
		key := "caller_header_files"
		if e.ForwardAuthorization {
			key = "forward_authorization"
		}
		return &ConfigError{File: file, Path: path + "." + key, Reason: "headers are sent to remote servers (url), not to a command"}
	}
	uc.ForwardAuthorization = e.ForwardAuthorization
	for _, caller := range slices.Sorted(maps.Keys(e.CallerHeaderFiles)) {
		if len(e.CallerHeaderFiles[caller]) == 0 {
			return &ConfigError{File: file, Path: path + ".caller_header_files." + caller, Reason: `empty: map header names to files ({"Authorization": "ops-github.auth"})`}
		}
		h := map[string]string{}
		if err := readHeaderFiles(file, path+".caller_header_files."+caller, e.CallerHeaderFiles[caller], h); err != nil {
			return err
		}
		if uc.CallerHeaders == nil {
			uc.CallerHeaders = map[string]map[string]string{}
		}
		uc.CallerHeaders[caller] = h
	}
	return nil
}

// checkCallerHeaders refuses per-caller headers of callers that set does
// not define (nil: none is defined).
func checkCallerHeaders(gc *gatewayConfig, set *callers.Set) error {
	if gc == nil {
		return nil
	}
	for _, u := range gc.Upstreams {
		for _, name := range slices.Sorted(maps.Keys(u.CallerHeaders)) {
			if set == nil || set.Caller(name) == nil {
				defined := "no callers are defined (toolscout.callers)"
				if set != nil {
					defined = "the callers are " + strings.Join(set.Names(), ", ")
				}
				return fmt.Errorf("config: mcpServers.%s.caller_header_files.%s: no such caller: %s", u.Domain, name, defined)
			}
		}
	}
	return nil
}

// readHeaderFiles reads each header's value from its file (relative to
// the config file's folder) into out: one line, trimmed.
func readHeaderFiles(file, path string, files, out map[string]string) error {
	for _, name := range slices.Sorted(maps.Keys(files)) {
		at := path + "." + name
		if !validHeaderName(name) {
			return &ConfigError{File: file, Path: at, Reason: fmt.Sprintf("%q is no HTTP header name", name)}
		}
		f := files[name]
		if f != "" && !filepath.IsAbs(f) {
			f = filepath.Join(filepath.Dir(file), f)
		}
		data, err := os.ReadFile(f)
		if err != nil {
			return &ConfigError{File: file, Path: at, Reason: fmt.Sprintf("%v: the file holds the header's value (\"Bearer TOKEN\" for Authorization)", err)}
		}
		v := strings.TrimSpace(string(data))
		switch {
		case v == "":
			return &ConfigError{File: file, Path: at, Reason: fmt.Sprintf("%s is empty: put the header's value in it", f)}
		case strings.ContainsAny(v, "\r\n\x00"):
			return &ConfigError{File: file, Path: at, Reason: fmt.Sprintf("%s holds several lines: a header's value is one line", f)}
		}
		out[name] = v
	}
	return nil
}

// validHeaderName reports whether name is an HTTP header name (RFC 9110
// token).
func validHeaderName(name string) bool {
	if name == "" {
		return false
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0) {
			return false
		}
	}
	return true
}
