package peertest

import (
	"bufio"
	"bytes"
	"os"
	"strconv"
)

// PeakRSS returns the peak resident set size of this process, in bytes:
// VmHWM of /proc/self/status (ok is false without it, outside Linux). A
// process measured from the inside is the way to measure one started by
// a test: the Maxrss of a child's rusage is at least the RSS its parent
// had when it started it, because Linux carries the high-water mark of
// the memory the child shared with its parent (Go starts children with
// vfork) over the exec.
func PeakRSS() (bytesUsed uint64, ok bool) {
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
