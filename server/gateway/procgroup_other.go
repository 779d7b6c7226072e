//go:build !unix

package gateway

import (
	"os/exec"
	"syscall"
)

// ownGroup does nothing where there are no process groups: only the
// server's own process is stopped (by signalGroup).
func ownGroup(*exec.Cmd) {}

// signalGroup sends sig to cmd's process, or kills it where sig cannot be
// sent (Windows knows only Kill). It reports whether the process was
// signalled.
func signalGroup(cmd *exec.Cmd, sig syscall.Signal) bool {
	return cmd.Process.Signal(sig) == nil || cmd.Process.Kill() == nil
}

// groupAlive reports false: the process's own exit is what is waited for.
func groupAlive(*exec.Cmd) bool { return false }
