//go:build !linux

package codemode

import "time"

// Outside Linux the sandbox sets no kernel limits and its CPU time is
// not measured: the memory watchdog and the parent's wall-time kill
// bound a program there.
func restrictProcess()        {}
func limitProcess(lim Limits) {}
func cpuTime() time.Duration  { return 0 }
