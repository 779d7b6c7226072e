package codemode

import "syscall"

// sandboxAttr makes the kernel kill a sandbox process when the gateway
// dies (kill -9, a crash), and puts it in a process group of its own so
// that a terminal's Ctrl-C reaches the gateway only.
func sandboxAttr(attr *syscall.SysProcAttr) {
	attr.Pdeathsig = syscall.SIGKILL
	attr.Setpgid = true
}
