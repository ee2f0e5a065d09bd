//go:build linux

package client

import (
	"bytes"
	"os"
	"strconv"
	"time"
)

// nodeCPU returns the user plus system CPU time used so far by the
// process whose command line holds arg (a node's --datadir flag), from
// /proc/PID/stat; ok is false if there is none.
func nodeCPU(arg string) (time.Duration, bool) {
	dirs, err := os.ReadDir("/proc")
	if err != nil {
		return 0, false
	}
	for _, d := range dirs {
		if _, err := strconv.Atoi(d.Name()); err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + d.Name() + "/cmdline")
		if err != nil || !bytes.Contains(append(b, 0), append([]byte(arg), 0)) {
			continue
		}
		return procCPU(d.Name())
	}
	return 0, false
}

// procCPU returns the utime plus stime of process pid, in USER_HZ (100
// a second on every Linux architecture Go supports).
func procCPU(pid string) (time.Duration, bool) {
	b, err := os.ReadFile("/proc/" + pid + "/stat")
	if err != nil {
		return 0, false
	}
	// The command name, in parentheses, may hold spaces: fields count
	// from the last ')'; utime and stime are the 12th and 13th after it.
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, false
	}
	f := bytes.Fields(b[i+1:])
	if len(f) < 13 {
		return 0, false
	}
	u, err1 := strconv.ParseUint(string(f[11]), 10, 64)
	s, err2 := strconv.ParseUint(string(f[12]), 10, 64)
	if err1 != nil || err2 != nil {
		return 0, false
	}
	return time.Duration(u+s) * time.Second / 100, true
}
