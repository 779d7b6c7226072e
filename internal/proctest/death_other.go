//go:build !linux

package proctest

import "os/exec"

// DieWithParent does nothing here: the parent-death signal is Linux's.
func DieWithParent(cmd *exec.Cmd) {}
