// Package racetest splits make unit's tests between its two builds: the
// race build that runs every test, and a plain one (no race detector)
// for the tests listed in the Makefile's PLAIN_TESTS.
//
// A test belongs in the plain build when its subject is arithmetic on
// one goroutine: scores equal to the bit, a ranking as recorded, a
// recall, bytes as written, a heap or an allocation count. Under -race
// such a test takes five to ten times its CPU and finds no race the
// tests beside it do not: the concurrent paths it passes through (a
// divided query, a sync's workers, a live index's background) are each
// raced by tests of their own that stay in the race build. Measured on
// 2 cores, the race build of index/keyword took 57 CPU s and its plain
// one 12 (docs/benchmarks/2026-12-07-build-modes.md).
//
// internal/srccheck's TestPlainTestsListed fails when a test calls
// Plain and is not in PLAIN_TESTS (it would run nowhere) or the list
// names a test that does not call Plain.
package racetest

import "testing"

// Plain skips t in a race build: make unit runs it in its plain build.
func Plain(t testing.TB) {
	t.Helper()
	if Enabled {
		t.Skip("runs without -race: make unit's plain pass (the Makefile's PLAIN_TESTS)")
	}
}
