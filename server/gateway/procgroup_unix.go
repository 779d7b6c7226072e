//go:build unix

package gateway

import (
	"errors"
	"os/exec"
	"syscall"
)

// ownGroup makes cmd start in a process group of its own, led by cmd's
// process, so that what it starts goes with it: npx runs the server as a
// grandchild (npm exec, sh -c, node), and a wrapper script's shell
// leaves its server running when the shell alone is signalled. Neither
// would exit with toolscout otherwise (issue 36: about 60 s after a CLI
// run). A group of its own also keeps a terminal's Ctrl-C from reaching
// the servers before toolscout has closed their sessions.
func ownGroup(cmd *exec.Cmd) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Setpgid = true
	dieWithParent(cmd.SysProcAttr)
}

// signalGroup sends sig to every process in the group that cmd's process
// leads (ownGroup), the leader too if it still runs. It reports whether
// any process was there to signal.
func signalGroup(cmd *exec.Cmd, sig syscall.Signal) bool {
	err := syscall.Kill(-cmd.Process.Pid, sig)
	return !errors.Is(err, syscall.ESRCH)
}

// groupAlive reports whether any process of cmd's group is left.
func groupAlive(cmd *exec.Cmd) bool { return signalGroup(cmd, 0) }
