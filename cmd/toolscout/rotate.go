package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"log/slog"
	"os"
	"slices"
	"time"

	"github.com/toolscout/toolscout/server/callers"
)

// Credentials rotate without a restart: serve --http re-reads the
// callers (the config file that defines them, their token files, the
// JWT key file, the introspection secret) when one of those files
// changes, every callersPoll, or at once on SIGHUP, and swaps the new
// definitions in whole (callers.Set.Replace): a token removed from its
// file stops working at the next request, a new one works. A file that
// becomes unreadable or invalid changes nothing: the last good
// definitions stay, and the log says why (doctor does too, reading the
// same files).

// callersPoll is how often the callers' files are looked at.
const callersPoll = 250 * time.Millisecond

// files are the files sp was read from: the config files (all of them:
// the callers may move from one to another), the token files, the key
// file and the introspection secret.
func (sp *callersSpec) files(g *globalFlags, callersFile string) []string {
	var out []string
	if callersFile != "" {
		out = append(out, callersFile)
	}
	out = append(out, g.configs...)
	for _, name := range sortedKeys(sp.Callers) {
		out = append(out, sp.Callers[name].TokenFiles...)
	}
	if j := sp.JWT; j != nil {
		out = append(out, j.JWKSFile, j.KeyFile)
	}
	if o := sp.OAuth; o != nil && o.Introspection != nil {
		out = append(out, o.Introspection.ClientSecretFile)
	}
	return slices.DeleteFunc(out, func(f string) bool { return f == "" })
}

// fingerprint is a digest of the files' contents (or of why one cannot
// be read): it changes when one of them does.
func fingerprint(files []string) string {
	h := sha256.New()
	for _, f := range files {
		h.Write([]byte(f + "\x00"))
		if data, err := os.ReadFile(f); err != nil {
			h.Write([]byte("error: " + err.Error()))
		} else {
			sum := sha256.Sum256(data)
			h.Write(sum[:])
		}
		h.Write([]byte{0})
	}
	return hex.EncodeToString(h.Sum(nil))
}

// watchCallers re-reads the callers into set when their files change or
// hup delivers, until ctx ends. sp is what set was built from.
func (g *globalFlags) watchCallers(ctx context.Context, callersFile string, sp *callersSpec, set *callers.Set, log *slog.Logger, every time.Duration, hup <-chan os.Signal) {
	files := sp.files(g, callersFile)
	last, refused := fingerprint(files), ""
	tick := time.NewTicker(every)
	defer tick.Stop()
	for {
		trigger := "a file changed"
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		case <-hup:
			trigger = "SIGHUP"
		}
		fp := fingerprint(files)
		if trigger != "SIGHUP" && (fp == last || fp == refused) {
			continue
		}
		next, set2, err := g.reloadCallers(callersFile, sp, log)
		if err != nil {
			if fp != refused || trigger == "SIGHUP" {
				log.Warn("the callers were not re-read: serving with the last good ones", "trigger", trigger, "why", err)
			}
			refused = fp
			continue
		}
		set.Replace(set2)
		// What was read is what fp saw, or newer: a file replaced while
		// it was read, or since, differs from fp and is read at the next
		// look. A fingerprint taken now would take a file replaced after
		// the read for read, and miss the change until the next one.
		nextFiles := next.files(g, callersFile)
		if slices.Equal(nextFiles, files) {
			last = fp
		} else {
			last = fingerprint(nextFiles) // other files: fp did not look at them
		}
		sp, files, refused = next, nextFiles, ""
		log.Info("the callers were re-read", "trigger", trigger, "callers", len(next.Callers))
	}
}

// reloadCallers reads the callers again; the issuer's key set (and its
// cache) is kept when the identity provider is the same.
func (g *globalFlags) reloadCallers(callersFile string, prev *callersSpec, log *slog.Logger) (*callersSpec, *callers.Set, error) {
	sp, err := g.callersSpec(callersFile)
	if err != nil {
		return nil, nil, err
	}
	if sp == nil {
		return nil, nil, &ConfigError{File: prev.File, Path: "toolscout.callers", Reason: "no longer defined: a server that started with callers keeps them; restart it to serve without"}
	}
	if sp.OAuth != nil && prev.OAuth != nil && sp.OAuth.Issuer == prev.OAuth.Issuer && sp.OAuth.JWKSURL == prev.OAuth.JWKSURL {
		sp.keys = prev.keys
	}
	sp.log = log
	set, err := sp.build(g.redactor())
	if err != nil {
		return nil, nil, err
	}
	return sp, set, nil
}
