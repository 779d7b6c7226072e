package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"sync"
	"syscall"
)

// The audit trail of serve (server/audit.go writes its lines): where it
// goes (--audit, toolscout.audit), whether it holds the calls' arguments
// (--audit-arguments, toolscout.audit_arguments), and its file.
//
// It is off by default: a stdio server started by a desktop client has
// nowhere obvious to write a file, and stderr there is the client's log
// of the server, not an audit store. Whoever needs a trail names where
// it goes.
//
// Rotation is the log collector's: the file is opened with O_APPEND, so
// logrotate's copytruncate works as is (each line lands at the end of
// the file as it then is), and SIGHUP reopens the file at its path, for
// rotations that move the file away (logrotate's create, then
// postrotate kill -HUP). With a file, SIGHUP therefore no longer ends
// the process.

// auditFlags are serve's flags of the audit trail.
type auditFlags struct {
	dest string // a file, "-" for stderr, "" off
	args bool
}

func (f *auditFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&f.dest, "audit", "", "write an audit trail, one JSON line per tool run (execute_tool, or a tool listed directly): who ran which tool on which upstream, how it ended, how long it took, how large the result was; to `FILE` (appended, created readable by its owner only, reopened on SIGHUP for log rotation), or - for stderr. Without this flag the config's toolscout.audit sets it; default off")
	fs.BoolVar(&f.args, "audit-arguments", false, "with --audit: record each call's arguments too, shortened past 2 KiB (they may hold secrets); without this flag the config's toolscout.audit_arguments sets it")
}

// resolve returns where the trail goes ("" when off) and whether it
// holds arguments: each flag when given, else the config's key (gc may
// be nil).
func (f *auditFlags) resolve(fs *flag.FlagSet, gc *gatewayConfig) (dest string, args bool, err error) {
	destGiven, argsGiven := false, false
	fs.Visit(func(fl *flag.Flag) {
		destGiven = destGiven || fl.Name == "audit"
		argsGiven = argsGiven || fl.Name == "audit-arguments"
	})
	dest, args = f.dest, f.args
	if gc != nil && !destGiven {
		dest = gc.Audit
	}
	if gc != nil && !argsGiven && gc.AuditArguments != nil {
		args = *gc.AuditArguments
	}
	if args && dest == "" {
		return "", false, usagef("--audit-arguments needs an audit trail: --audit FILE (or -), or toolscout.audit in the config")
	}
	return dest, args, nil
}

// openAudit opens the trail dest: stderr for "-", else the file,
// reopened on SIGHUP until ctx ends. stop ends that and closes the
// file.
//
// On stderr, lines and log records are each one Write to os.Stderr,
// which the runtime never interleaves.
func openAudit(ctx context.Context, dest string, stderr io.Writer, log *slog.Logger) (w io.Writer, stop func(), err error) {
	if dest == "-" {
		return stderr, func() {}, nil
	}
	af, err := newAuditFile(dest)
	if err != nil {
		return nil, nil, err
	}
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		af.reopenOn(ctx, hup, log)
	}()
	return af, func() {
		signal.Stop(hup)
		cancel()
		<-done
		af.Close()
	}, nil
}

// auditFile is the trail's file, reopened at its path on demand.
type auditFile struct {
	path string
	mu   sync.Mutex // guards f: a Write never meets a reopen half-done
	f    *os.File
}

func newAuditFile(path string) (*auditFile, error) {
	f, err := openAuditFile(path)
	if err != nil {
		return nil, err
	}
	return &auditFile{path: path, f: f}, nil
}

// openAuditFile opens path for appending, creating it readable by its
// owner only: a trail says who ran what, and may hold arguments.
func openAuditFile(path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("audit trail: %w", err)
	}
	return f, nil
}

// Write appends p (one line) to the file, whole or not at all: a write
// cut short (a full disk: part of p landed) is taken back, the file
// truncated to its size before it, and Write reports 0 bytes written.
// When the file grew otherwise meanwhile (another process appending to
// it), the part stays and is reported, and the server starts its next
// line with a newline. (Another process appending between the check and
// the truncation would lose its line: a window of one system call, on a
// disk already full.)
func (a *auditFile) Write(p []byte) (int, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	before, statErr := a.f.Stat()
	n, err := a.f.Write(p)
	if err == nil || n == 0 || statErr != nil {
		return n, err
	}
	if after, e := a.f.Stat(); e == nil && after.Size() == before.Size()+int64(n) && a.f.Truncate(before.Size()) == nil {
		return 0, err
	}
	return n, err
}

// reopen opens the file at its path again (a rotation moved the old
// one away) and closes the old one; when that fails, the old one stays.
func (a *auditFile) reopen() error {
	f, err := openAuditFile(a.path)
	if err != nil {
		return err
	}
	a.mu.Lock()
	old := a.f
	a.f = f
	a.mu.Unlock()
	return old.Close()
}

// reopenOn reopens the file for each signal on sigs until ctx ends.
func (a *auditFile) reopenOn(ctx context.Context, sigs <-chan os.Signal, log *slog.Logger) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-sigs:
			if err := a.reopen(); err != nil {
				log.Error("audit: could not reopen the trail; writing on to the file open before", "err", err)
				continue
			}
			log.Info("audit: trail reopened", "file", a.path)
		}
	}
}

// Close closes the file.
func (a *auditFile) Close() error {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.f.Close()
}
