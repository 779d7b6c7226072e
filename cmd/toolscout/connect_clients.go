package main

import (
	"path/filepath"
	"strings"
)

// The MCP clients that connect knows: where each keeps its servers and
// in which format. Sources (checked for issue 47; docs/connect.md cites
// them): Claude Desktop, modelcontextprotocol.io/quickstart/user; Claude
// Code, code.claude.com/docs/en/mcp; Cursor, cursor.com/docs/mcp; VS
// Code, code.visualstudio.com/docs/copilot/reference/mcp-configuration.

// mcpClient is one client's config format.
type mcpClient struct {
	name  string // as connect takes it: "claude-desktop"
	title string // as people call it: "Claude Desktop"
	// key is the member holding the servers: "mcpServers", or VS Code's
	// "servers".
	key string
	// typed: the client's own entries say "type": "stdio" (Claude Code's
	// claude mcp add, VS Code's format), so toolscout's entry does too.
	typed bool
	// project is the file of a project's servers, relative to the
	// project's folder ("" when the client has none).
	project string
}

// mcpClients lists the clients connect knows, in the order help names them.
func mcpClients() []mcpClient {
	return []mcpClient{
		{name: "claude-desktop", title: "Claude Desktop", key: "mcpServers"},
		{name: "claude-code", title: "Claude Code", key: "mcpServers", typed: true, project: ".mcp.json"},
		{name: "cursor", title: "Cursor", key: "mcpServers", project: filepath.Join(".cursor", "mcp.json")},
		{name: "vscode", title: "VS Code", key: "servers", typed: true, project: filepath.Join(".vscode", "mcp.json")},
	}
}

// clientNames is "claude-desktop, claude-code, cursor or vscode".
func clientNames() string {
	var names []string
	for _, c := range mcpClients() {
		names = append(names, c.name)
	}
	return strings.Join(names[:len(names)-1], ", ") + " or " + names[len(names)-1]
}

// findClient returns the client called name.
func findClient(name string) (mcpClient, bool) {
	for _, c := range mcpClients() {
		if c.name == name {
			return c, true
		}
	}
	return mcpClient{}, false
}

// hostEnv is what the location of a user's files depends on.
type hostEnv struct {
	home   string
	goos   string
	getenv func(string) string
}

// configHome is where Linux programs keep their config ($XDG_CONFIG_HOME,
// else ~/.config).
func (h hostEnv) configHome() string {
	if d := h.getenv("XDG_CONFIG_HOME"); d != "" && filepath.IsAbs(d) {
		return d
	}
	return filepath.Join(h.home, ".config")
}

// appData is where macOS and Windows programs keep theirs (Windows'
// %APPDATA%, else its default under the home folder).
func (h hostEnv) appData() string {
	switch h.goos {
	case "darwin":
		return filepath.Join(h.home, "Library", "Application Support")
	case "windows":
		if d := h.getenv("APPDATA"); d != "" {
			return d
		}
		return filepath.Join(h.home, "AppData", "Roaming")
	}
	return h.configHome()
}

// userFile returns the file of the client's servers for the user (in
// every project).
func (c mcpClient) userFile(h hostEnv) string {
	switch c.name {
	case "claude-desktop":
		// Claude Desktop ships for macOS and Windows; Linux builds
		// (community ones) use ~/.config/Claude.
		return filepath.Join(h.appData(), "Claude", "claude_desktop_config.json")
	case "claude-code":
		// User scope: the top-level mcpServers of ~/.claude.json.
		return filepath.Join(h.home, ".claude.json")
	case "cursor":
		return filepath.Join(h.home, ".cursor", "mcp.json")
	case "vscode":
		// The default profile's mcp.json (MCP: Open User Configuration).
		return filepath.Join(h.appData(), "Code", "User", "mcp.json")
	}
	return ""
}
