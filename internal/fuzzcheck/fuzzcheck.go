// Package fuzzcheck holds what the fuzz targets of the data dir's
// decoders share: a check that decoding a small input never allocates
// without bound (a length field trusted from the file).
//
//	f.Fuzz(func(t *testing.T, data []byte) {
//		fuzzcheck.Bounded(t, len(data), func() { decode(data) })
//	})
package fuzzcheck

import (
	"runtime"
	"testing"
)

// PerByte and Slack bound what a decoder may allocate for an input of n
// bytes: PerByte×n + Slack. Decoded values take more memory than their
// bytes (a tool's fields, map entries), so PerByte is generous; a length
// field trusted from a header blows through it at once.
const (
	PerByte = 256
	Slack   = 4 << 20
)

// Bounded runs fn and fails t if it allocated more than PerByte×n +
// Slack bytes. A fuzz worker runs one input at a time, so the process's
// allocations are fn's. fn may run up to three times: it must give the
// same result each time (a decoder of data that does not change).
func Bounded(t testing.TB, n int, fn func()) {
	t.Helper()
	BoundedSlack(t, n, Slack, fn)
}

// BoundedSlack is Bounded with another constant than Slack, for a
// decoder built on one that allocates a fixed amount up front.
func BoundedSlack(t testing.TB, n, slack int, fn func()) {
	t.Helper()
	limit := uint64(PerByte*n + slack)
	var got uint64
	// The counter is the process's: goroutines that other tests of the
	// package left running (a Bleve merger) can add to it when the
	// seeds run as plain tests. A decoder allocates the same each time,
	// so it fails only if every one of three runs is over.
	for range 3 {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		fn()
		runtime.ReadMemStats(&after)
		if got = after.TotalAlloc - before.TotalAlloc; got <= limit {
			return
		}
	}
	t.Fatalf("decoding %d bytes allocated %d bytes, more than %d", n, got, limit)
}
