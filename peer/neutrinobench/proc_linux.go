package neutrinobench

import (
	"bytes"
	"os"
	"strconv"
	"syscall"
	"time"

	"github.com/spvfilter/spvfilter/peer/peertest"
)

// processCPU returns the user plus system CPU time the process has used.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// resetPeakRSS sets the kernel's peak resident set size of the process
// (VmHWM) to its current size (writing 5 to /proc/self/clear_refs, Linux
// 4.0 and later) and returns that size; ok is false if it cannot.
func resetPeakRSS() (rss uint64, ok bool) {
	if err := os.WriteFile("/proc/self/clear_refs", []byte("5"), 0); err != nil {
		return 0, false
	}
	return peertest.PeakRSS()
}

// pidWithArg returns the process whose command line holds arg, such as a
// node's --datadir flag.
func pidWithArg(arg string) (int, bool) {
	dirs, err := os.ReadDir("/proc")
	if err != nil {
		return 0, false
	}
	for _, d := range dirs {
		pid, err := strconv.Atoi(d.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + d.Name() + "/cmdline")
		if err != nil {
			continue
		}
		for _, a := range bytes.Split(b, []byte{0}) {
			if string(a) == arg {
				return pid, true
			}
		}
	}
	return 0, false
}
