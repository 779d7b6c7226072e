// Package redact replaces known secret values (the credentials
// toolscout was configured with) in what toolscout writes: answers,
// logs, doctor's lines, the audit trail.
//
// Place in the flow: cmd/toolscout makes one [Redactor], adds every
// secret it reads (header_files, caller_header_files, callers' tokens,
// the single auth token) and passes it down as a plain option: the
// gateway redacts what upstream servers send back, the server its audit
// trail, and the process's logger goes through [Redactor.Handler].
//
// Redaction is defence in depth, not a filter against a server that
// means harm: a value is found as written (and in the few encodings
// [Redactor.Add] lists), not base64'd or split. Values shorter than
// [MinLen] bytes are ignored: they would cut ordinary words.
//
//	r := redact.New()
//	r.Add("Bearer ghp_0123456789abcdef")
//	log := slog.New(r.Handler(slog.NewTextHandler(os.Stderr, nil)))
//	log.Warn(r.String("refused: Bearer ghp_0123456789abcdef")) // refused: [redacted]
package redact
