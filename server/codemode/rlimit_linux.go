package codemode

import (
	"bufio"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// prSetNoNewPrivs is PR_SET_NO_NEW_PRIVS (linux/prctl.h).
const prSetNoNewPrivs = 38

// restrictProcess sets the limits that hold whatever the program: no
// core dumps, no files written, few descriptors, and no privileges
// gained by executing anything (were the engine ever escaped).
func restrictProcess() {
	_, _, _ = syscall.RawSyscall(syscall.SYS_PRCTL, prSetNoNewPrivs, 1, 0)
	setLimit(syscall.RLIMIT_CORE, 0)
	setLimit(syscall.RLIMIT_FSIZE, 0)
	setLimit(syscall.RLIMIT_NOFILE, 32)
}

// limitProcess sets the kernel's backstops for lim: CPU time (the
// watchdog ends the program first, with a clear error) and, outside
// race builds, the address space, which a single huge allocation the
// watchdog cannot see coming runs into.
func limitProcess(lim Limits) {
	cpu := uint64((cpuTime()+lim.CPU)/time.Second) + 3
	_ = syscall.Setrlimit(syscall.RLIMIT_CPU, &syscall.Rlimit{Cur: cpu, Max: cpu + 1})
	if raceBuild {
		return
	}
	if vm := vmSize(); vm > 0 {
		setLimit(syscall.RLIMIT_AS, vm+8*uint64(lim.Memory)+512<<20)
	}
}

func setLimit(which int, v uint64) {
	_ = syscall.Setrlimit(which, &syscall.Rlimit{Cur: v, Max: v})
}

// vmSize returns the process's virtual memory size, in bytes (0 when
// unknown).
func vmSize() uint64 {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), "VmSize:"); ok {
			kb, err := strconv.ParseUint(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			if err != nil {
				return 0
			}
			return kb << 10
		}
	}
	return 0
}

// cpuTime is the CPU time this process has used.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
