package server

import (
	"errors"
	"net/http"
	"testing"

	"github.com/toolscout/toolscout/server/boot"
)

// TestEachStateAnswers: what /readyz, Ready, /healthz and toolscout_ready
// answer at each state of the start's readiness, moved by its owner: the
// server reads that state, not the live index (nothing is loaded here).
func TestEachStateAnswers(t *testing.T) {
	t.Parallel()
	tests := []struct {
		state    boot.State
		draining bool
		want     error
	}{
		{state: boot.Starting, want: ErrIndexLoading},
		{state: boot.Loaded, want: ErrSemanticLoading},
		{state: boot.Settled, want: nil}, // no upstream servers: known at once
		{state: boot.Ready, want: nil},
		{state: boot.Ready, draining: true, want: ErrDraining},
	}
	for _, tt := range tests {
		t.Run(tt.state.String(), func(t *testing.T) {
			rd := boot.NewReadiness()
			m := NewMetrics()
			srv := New(Options{Live: unloadedLive(t), Readiness: rd, Metrics: m})
			rd.Advance(tt.state)
			if tt.draining {
				srv.Drain()
			}
			if err := srv.Ready(); !errors.Is(err, tt.want) || (err == nil) != (tt.want == nil) {
				t.Errorf("Ready() = %v, want %v", err, tt.want)
			}
			code, body := probe(t, srv.ReadyHandler())
			wantCode, wantBody, gauge := http.StatusOK, "ready", 1.0
			if tt.want != nil {
				wantCode, wantBody, gauge = http.StatusServiceUnavailable, "not ready: "+tt.want.Error(), 0
			}
			if code != wantCode || body != wantBody {
				t.Errorf("/readyz = %d %q, want %d %q", code, body, wantCode, wantBody)
			}
			if code, body := probe(t, HealthHandler()); code != http.StatusOK || body != "ok" {
				t.Errorf("/healthz = %d %q, want 200 ok", code, body)
			}
			if v, _ := sample(scrape(t, m), "toolscout_ready", ""); v != gauge {
				t.Errorf("toolscout_ready = %v, want %v", v, gauge)
			}
		})
	}
}
