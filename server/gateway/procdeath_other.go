//go:build unix && !linux

package gateway

import "syscall"

// dieWithParent has no equivalent outside Linux: an upstream outlives a
// toolscout killed with SIGKILL there.
func dieWithParent(*syscall.SysProcAttr) {}
