package redact

import (
	"context"
	"fmt"
	"log/slog"
)

// Handler returns next with every record redacted before it is written:
// the message, and each attribute's key and value, in groups too, an
// error or fmt.Stringer by its text, any other value by its %v
// formatting (written as that redacted text when it holds a value r
// knows). Attributes given to Logger.With are redacted then, with the
// values r knew at that time. With a nil r, Handler returns next.
func (r *Redactor) Handler(next slog.Handler) slog.Handler {
	if r == nil {
		return next
	}
	return &handler{r: r, next: next}
}

type handler struct {
	r    *Redactor
	next slog.Handler
}

var _ slog.Handler = (*handler)(nil)

func (h *handler) Enabled(ctx context.Context, l slog.Level) bool { return h.next.Enabled(ctx, l) }

func (h *handler) Handle(ctx context.Context, rec slog.Record) error {
	if !h.r.Active() {
		return h.next.Handle(ctx, rec)
	}
	out := slog.NewRecord(rec.Time, rec.Level, h.r.String(rec.Message), rec.PC)
	rec.Attrs(func(a slog.Attr) bool {
		out.AddAttrs(h.r.attr(a))
		return true
	})
	return h.next.Handle(ctx, out)
}

func (h *handler) WithAttrs(attrs []slog.Attr) slog.Handler {
	red := make([]slog.Attr, len(attrs))
	for i, a := range attrs {
		red[i] = h.r.attr(a)
	}
	return &handler{r: h.r, next: h.next.WithAttrs(red)}
}

func (h *handler) WithGroup(name string) slog.Handler {
	return &handler{r: h.r, next: h.next.WithGroup(h.r.String(name))}
}

// attr returns a with its key and value redacted.
func (r *Redactor) attr(a slog.Attr) slog.Attr {
	return slog.Attr{Key: r.String(a.Key), Value: r.value(a.Value)}
}

func (r *Redactor) value(v slog.Value) slog.Value {
	v = v.Resolve()
	switch v.Kind() {
	case slog.KindString:
		if s := v.String(); r.Contains(s) {
			return slog.StringValue(r.String(s))
		}
	case slog.KindGroup:
		group := v.Group()
		out := make([]slog.Attr, len(group))
		for i, a := range group {
			out[i] = r.attr(a)
		}
		return slog.GroupValue(out...)
	case slog.KindAny:
		var s string
		switch x := v.Any().(type) {
		case nil:
			return v
		case []byte:
			s = string(x) // as the handlers write it
		default:
			s = fmt.Sprint(x) // an error's Error, a Stringer's String, recovering from their panics
		}
		if r.Contains(s) {
			return slog.StringValue(r.String(s))
		}
	}
	return v
}
