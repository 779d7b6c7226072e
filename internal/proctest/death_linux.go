package proctest

import (
	"os/exec"
	"syscall"
)

// DieWithParent has cmd's process killed when the test binary that
// starts it dies, however it dies (a SIGQUIT from go test's timeout, a
// kill): a shared server a package's tests start once and stop in
// TestMain lives on otherwise, with parent 1, when TestMain never gets
// there. Linux's parent-death signal; call it before cmd.Start. Linux
// sends it when the thread that started the process ends: Go ends a
// thread only when a goroutine that locked it (runtime.LockOSThread)
// exits, which nothing in this repository does.
func DieWithParent(cmd *exec.Cmd) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Pdeathsig = syscall.SIGKILL
}
