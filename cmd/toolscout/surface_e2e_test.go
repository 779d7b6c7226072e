package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestEndToEndPromptsAndResources: behind `toolscout serve`, the
// everything reference server's prompts, resources and templates are
// listed, got, completed, read, subscribed to and followed by the TypeScript SDK
// client (protocol 2025-11-25), over stdio and over HTTP.
func TestEndToEndPromptsAndResources(t *testing.T) {
	t.Parallel()
	nodeClient(t)
	root, _ := filepath.Abs("../..")
	everything := filepath.Join(root, "node_modules", ".bin", "mcp-server-everything")
	bin := buildBinary(t)
	serveArgs := func() []string {
		dir := t.TempDir()
		cfg := filepath.Join(dir, "servers.json")
		if err := os.WriteFile(cfg, []byte(`{"mcpServers": {"everything": {"command": "`+everything+`"}}}`), 0o644); err != nil {
			t.Fatal(err)
		}
		return []string{"--config", cfg, "--embedder", "builtin", "--data-dir", filepath.Join(dir, "data"), "--log-level", "warn"}
	}
	type surface struct {
		Capabilities struct {
			Prompts   *struct{ ListChanged bool }
			Resources *struct{ ListChanged, Subscribe bool }
		}
		Prompts []string
		Prompt  struct {
			Messages []struct {
				Content struct{ Text string }
			}
		}
		UnknownPrompt, UnknownResource *struct {
			Code    int
			Message string
		}
		Resources, Templates, ResourcesAfter []string
		Read, ReadTemplate, ReadRaw          []struct {
			URI   string
			Chars int
		}
		Completion                []string
		GotUpdate, GotListChanged bool
		Updated                   []string
	}
	// One node process (one SDK load) runs both sessions at once: over
	// stdio with a server of its own, and over HTTP with one the test
	// starts; each server has its own everything server and data dir.
	url := startHTTP(t, bin, []string{"OLLAMA_HOST=127.0.0.1:9"}, serveArgs()...)
	var viaStdio, viaHTTP surface
	runScript(t, "e2e_surface.mjs", bin, []string{"HTTP_URL=" + url, "OLLAMA_HOST=127.0.0.1:9"}, serveArgs(), &viaStdio, &viaHTTP)
	for i, transport := range []string{"stdio", "http"} {
		out := []surface{viaStdio, viaHTTP}[i]
		t.Run(transport, func(t *testing.T) {
			if c := out.Capabilities; c.Prompts == nil || !c.Prompts.ListChanged || c.Resources == nil || !c.Resources.Subscribe || !c.Resources.ListChanged {
				t.Errorf("capabilities = %+v, want prompts and resources with listChanged and subscribe", c)
			}
			for _, p := range []string{"everything__simple-prompt", "everything__args-prompt", "everything__completable-prompt", "everything__resource-prompt"} {
				if !slices.Contains(out.Prompts, p) {
					t.Errorf("prompts/list = %v, want %s", out.Prompts, p)
				}
			}
			if len(out.Prompt.Messages) == 0 || !strings.Contains(out.Prompt.Messages[0].Content.Text, "Lyon") {
				t.Errorf("prompts/get everything__args-prompt = %+v, want Lyon in it", out.Prompt)
			}
			if !slices.Equal(out.Completion, []string{"Engineering"}) {
				t.Errorf("completion of completable-prompt's department from \"Eng\" = %v, want Engineering", out.Completion)
			}
			if e := out.UnknownPrompt; e == nil || e.Code != -32602 || !strings.Contains(e.Message, "no-such-prompt") {
				t.Errorf("prompts/get of an unknown prompt: %+v, want -32602 naming it", e)
			}
			doc := "toolscout://everything/demo://resource/static/document/architecture.md"
			if len(out.Resources) < 7 || !slices.Contains(out.Resources, doc) {
				t.Errorf("resources/list = %v, want the 7 documents, %s among them", out.Resources, doc)
			}
			if !slices.Contains(out.Templates, "toolscout://everything/demo://resource/dynamic/text/{resourceId}") || len(out.Templates) != 2 {
				t.Errorf("resources/templates/list = %v", out.Templates)
			}
			for name, read := range map[string][]struct {
				URI   string
				Chars int
			}{"listed": out.Read, "template": out.ReadTemplate, "raw": out.ReadRaw} {
				if len(read) != 1 || read[0].Chars == 0 {
					t.Errorf("resources/read (%s) = %+v, want one text", name, read)
				}
			}
			if out.Read[0].URI != doc || out.ReadRaw[0].URI != "demo://resource/dynamic/text/3" {
				t.Errorf("contents URIs %q, %q: want each as it was asked", out.Read[0].URI, out.ReadRaw[0].URI)
			}
			if e := out.UnknownResource; e == nil || e.Code != -32602 || !strings.Contains(e.Message, "demo://nothing/here") {
				t.Errorf("resources/read of an unknown resource: %+v, want -32602 naming it", e)
			}
			if !out.GotUpdate || !slices.Contains(out.Updated, doc) {
				t.Errorf("after subscribing and toggle-subscriber-updates: updates %v, want %s", out.Updated, doc)
			}
			if !out.GotListChanged || !slices.Contains(out.ResourcesAfter, "toolscout://everything/demo://resource/session/note.gz") {
				t.Errorf("after gzip-file-as-resource: list_changed %v, resources %v; want the new note.gz", out.GotListChanged, out.ResourcesAfter)
			}
		})
	}
}
