package server

import (
	"context"
	"log/slog"
	"strings"
)

// The go-sdk logs through the logger toolscout hands it
// (mcp.ServerOptions.Logger, mcp.StreamableHTTPOptions.Logger) at levels
// chosen for a server of one session: every request of the stateless
// protocol is a session of its own and wrote three info lines ("server
// connecting", "server session connected" and "disconnected", with no
// id), 770 MB a day at 72 requests a second; a list change that a
// 2025-11-25 session cannot be sent, having opened no GET stream (the
// specification makes it optional), was a warning per session and
// change; a stdio session ended by a signal was an error. sdkLogger
// lowers those records to debug, where they stay for whoever looks.
// toolscout says what matters itself: it is shutting down, a session
// was refused.

// sdkLogger returns log for the go-sdk: its routine records at debug.
func sdkLogger(log *slog.Logger) *slog.Logger {
	return slog.New(&sdkHandler{next: log.Handler()})
}

// sdkHandler is the handler of sdkLogger.
type sdkHandler struct{ next slog.Handler }

var _ slog.Handler = (*sdkHandler)(nil)

// Enabled is next's: a record is only ever lowered.
func (h *sdkHandler) Enabled(ctx context.Context, l slog.Level) bool { return h.next.Enabled(ctx, l) }

func (h *sdkHandler) Handle(ctx context.Context, r slog.Record) error {
	if r.Level > slog.LevelDebug && sdkRoutine(r.Message) {
		r.Level = slog.LevelDebug
		if !h.next.Enabled(ctx, r.Level) {
			return nil
		}
	}
	return h.next.Handle(ctx, r)
}

func (h *sdkHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	return &sdkHandler{next: h.next.WithAttrs(attrs)}
}

func (h *sdkHandler) WithGroup(name string) slog.Handler {
	return &sdkHandler{next: h.next.WithGroup(name)}
}

// sdkRoutine reports whether msg, a go-sdk log message, is routine for
// toolscout (go-sdk v1.8.0's messages: mcp/server.go, mcp/shared.go).
func sdkRoutine(msg string) bool {
	switch msg {
	case "server connecting", "server session connected", "server session disconnected",
		"server run start", "server session ended", "server run cancelled":
		return true
	}
	// notifySessions: a notification the transport refused
	// (jsonrpc2.ErrRejected: no stream to carry it, or the session's
	// stream closed). The notification is lost for that session, which
	// relists when it reconnects or asks.
	return strings.HasPrefix(msg, "calling notifications/") && strings.Contains(msg, "rejected by transport")
}
