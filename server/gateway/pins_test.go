package gateway

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/toolscout/toolscout/index/pin"
	"github.com/toolscout/toolscout/index/store"
)

// echoDescription returns the description g serves for the test
// server's echo.
func echoDescription(g *Gateway) string {
	for _, s := range g.Specs() {
		for _, ts := range s.Tools {
			if s.Name == "test" && ts.Name == "echo" {
				return ts.Description
			}
		}
	}
	return ""
}

// TestPinsHoldChangedTool: with pins in a data dir, a tool whose
// definition changed across a restart of its server is served as
// approved and refused (ErrHeld), other tools run, and an approval made
// outside the gateway (as toolscout approve does) is picked up: the new
// definition is served and runs.
func TestPinsHoldChangedTool(t *testing.T) {
	t.Parallel()
	dir, data := t.TempDir(), t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "desc"), []byte("Echoes, first version."), 0o644); err != nil {
		t.Fatal(err)
	}
	pins := store.OpenPins(data, nil)
	g := startGateway(t, Options{Upstreams: []UpstreamConfig{testUpstream(t, "test", dir)}, Pins: pin.NewGuard(pins), PinPoll: 20 * time.Millisecond})
	g.WaitReady(context.Background())
	if d := echoDescription(g); d != "Echoes, first version." || g.Upstreams().Held("test", "echo") {
		t.Fatalf("echo = %q, held %v; want the first version, pinned on first sight", d, g.Upstreams().Held("test", "echo"))
	}
	if err := os.WriteFile(filepath.Join(dir, "desc"), []byte("Echoes, and sends your files away."), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := call(g, "test", "crash", nil); !errors.Is(err, ErrStopped) {
		t.Fatalf("crash = %v", err)
	}
	waitUntil(t, g, "the changed echo held", func() bool { return starts(t, dir) >= 2 && g.Upstreams().Held("test", "echo") })
	if d := echoDescription(g); d != "Echoes, first version." {
		t.Errorf("served echo = %q, want the approved first version", d)
	}
	if g.Upstreams().Unchecked("test", "echo") || g.Upstreams().Held("test", "slow") || g.Upstreams().Held("nobody", "echo") {
		t.Error("Unchecked(echo), Held(slow) or Held of an unknown server is true")
	}
	_, err := call(g, "test", "echo", map[string]any{"text": "x"})
	if !errors.Is(err, ErrHeld) || !strings.Contains(err.Error(), "toolscout approve test__echo") {
		t.Fatalf("echo while held = %v, want ErrHeld saying how to approve", err)
	}
	if res, err := call(g, "test", "slow", map[string]any{"ms": 1}); err != nil || resultText(res) != "slept" {
		t.Errorf("slow while echo is held = %q, %v; want it run", resultText(res), err)
	}
	if err := pins.Update(func(b *pin.Book) bool { return b.Approve("test", "echo", time.Now()) == nil }); err != nil {
		t.Fatal(err)
	}
	waitUntil(t, g, "the approval", func() bool { return !g.Upstreams().Held("test", "echo") })
	if d := echoDescription(g); d != "Echoes, and sends your files away." {
		t.Errorf("served echo after the approval = %q, want the new version", d)
	}
	if res, err := call(g, "test", "echo", map[string]any{"text": "x"}); err != nil || !strings.HasPrefix(resultText(res), "echo: x") {
		t.Errorf("echo after the approval = %q, %v", resultText(res), err)
	}
}

// TestPinsDamagedUnchecked: pins found damaged with no good copy (the
// poll of their stamp sees the file change) hold every tool of the
// server as unchecked: served as listed, refused saying the record was
// damaged, until an approval.
func TestPinsDamagedUnchecked(t *testing.T) {
	t.Parallel()
	data := t.TempDir()
	pins := store.OpenPins(data, nil)
	g := startGateway(t, Options{Upstreams: []UpstreamConfig{testUpstream(t, "test", "")}, Pins: pin.NewGuard(pins), PinPoll: 20 * time.Millisecond})
	g.WaitReady(context.Background())
	if g.Upstreams().Held("test", "echo") {
		t.Fatal("echo is held on first sight")
	}
	path := filepath.Join(data, "pins.bin")
	good, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	os.Remove(path + ".prev")
	if err := os.WriteFile(path+".new", good[:len(good)/2], 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(path+".new", path); err != nil {
		t.Fatal(err)
	}
	waitUntil(t, g, "echo held as unchecked", func() bool { return g.Upstreams().Unchecked("test", "echo") })
	if !g.Upstreams().Held("test", "echo") || echoDescription(g) != "Echoes the text it is given." {
		t.Errorf("echo: held %v, served %q; want held, served as listed", g.Upstreams().Held("test", "echo"), echoDescription(g))
	}
	_, err = call(g, "test", "echo", map[string]any{"text": "x"})
	if !errors.Is(err, ErrHeld) || !strings.Contains(err.Error(), "record of the approved tool definitions was damaged") {
		t.Fatalf("echo while unchecked = %v, want ErrHeld saying the record was damaged", err)
	}
	if err := pins.Update(func(b *pin.Book) bool { return b.Approve("test", "echo", time.Now()) == nil }); err != nil {
		t.Fatal(err)
	}
	waitUntil(t, g, "the approval", func() bool { return !g.Upstreams().Held("test", "echo") })
	if res, err := call(g, "test", "echo", map[string]any{"text": "x"}); err != nil || !strings.HasPrefix(resultText(res), "echo: x") {
		t.Errorf("echo after the approval = %q, %v", resultText(res), err)
	}
}
