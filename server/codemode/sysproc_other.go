//go:build !linux

package codemode

import "syscall"

// sandboxAttr sets nothing outside Linux: a sandbox process whose
// gateway died ends when its stdin closes.
func sandboxAttr(attr *syscall.SysProcAttr) {}
