package neutrinobench

import (
	"bufio"
	"bytes"
	"os"
	"strconv"
	"syscall"
	"time"
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
	return peakRSS()
}

// peakRSS returns VmHWM from /proc/self/status, in bytes: the peak
// resident set size since the last reset.
func peakRSS() (uint64, bool) {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0, false
	}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		f := bytes.Fields(sc.Bytes())
		if len(f) == 3 && string(f[0]) == "VmHWM:" && string(f[2]) == "kB" {
			v, err := strconv.ParseUint(string(f[1]), 10, 64)
			return v * 1024, err == nil
		}
	}
	return 0, false
}
