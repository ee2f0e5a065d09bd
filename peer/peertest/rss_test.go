package peertest

import (
	"os"
	"os/exec"
	"strconv"
	"syscall"
	"testing"
)

// rssChildEnv makes the test binary, started by TestPeakRSSOfChild, report
// its own peak RSS and exit.
const rssChildEnv = "PEERTEST_RSS_CHILD"

func init() {
	if os.Getenv(rssChildEnv) == "1" {
		rss, ok := PeakRSS()
		if !ok {
			os.Exit(3)
		}
		os.Stdout.WriteString(strconv.FormatUint(rss, 10))
		os.Exit(0)
	}
}

// TestPeakRSSOfChild: a child started by a process holding 200 MB reports
// its own peak, far below what its rusage says (the parent's 200 MB).
func TestPeakRSSOfChild(t *testing.T) {
	if _, ok := PeakRSS(); !ok {
		t.Skip("no /proc/self/status on this system")
	}
	ballast := make([]byte, 200<<20)
	for i := range ballast {
		ballast[i] = 1
	}
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), rssChildEnv+"=1")
	out, err := cmd.Output()
	if err != nil {
		t.Fatal(err)
	}
	own, err := strconv.ParseUint(string(out), 10, 64)
	if err != nil {
		t.Fatalf("child said %q", out)
	}
	ru := cmd.ProcessState.SysUsage().(*syscall.Rusage)
	rusage := uint64(ru.Maxrss) * 1024
	t.Logf("child's own peak RSS %d MB, its rusage's %d MB", own>>20, rusage>>20)
	if own >= 100<<20 || own == 0 {
		t.Errorf("child's own peak RSS %d MB: it should not hold the parent's 200 MB", own>>20)
	}
	if ballast[len(ballast)-1] != 1 {
		t.Fatal("ballast lost")
	}
}
