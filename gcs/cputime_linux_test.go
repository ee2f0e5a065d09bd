//go:build linux

package gcs

import "golang.org/x/sys/unix"

// threadCPUTime returns the CPU time the calling thread has used, in
// nanoseconds. Unlike wall time it does not grow while the thread waits
// for a core, which makes benchmark ratios stable on a busy machine.
func threadCPUTime() (int64, bool) {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_THREAD_CPUTIME_ID, &ts); err != nil {
		return 0, false
	}
	return ts.Nano(), true
}
