package gateway

import "syscall"

// dieWithParent asks the kernel to send the upstream's process SIGTERM
// when toolscout dies without closing it (kill -9, a crash): its stdin
// closes then, but a server with timers of its own (the everything
// reference server) keeps running for good. SIGTERM, not SIGKILL, so
// that npx and npm exec pass it on to the server they started. (Linux
// sends it when the thread that started the process exits; Go threads
// outlive their goroutines, and none of toolscout's are locked.)
func dieWithParent(attr *syscall.SysProcAttr) { attr.Pdeathsig = syscall.SIGTERM }
