package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/spvfilter/spvfilter/peer/peertest"
)

// scanProcess runs spvfilter scan --json as a process (the binary in
// SPVFILTER_TEST_BINARY, or this test binary as spvfilter) and returns
// its output, its peak resident memory in bytes and its wall time.
func scanProcess(t *testing.T, args ...string) (out scanOutput, stderr string, rss int64, wall time.Duration) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	args = append([]string{"scan", "--json", "--network", "regtest"}, args...)
	rssFile := filepath.Join(t.TempDir(), "rss")
	var cmd *exec.Cmd
	if bin := os.Getenv("SPVFILTER_TEST_BINARY"); bin != "" {
		cmd = exec.CommandContext(ctx, bin, args...)
	} else {
		cmd = exec.CommandContext(ctx, os.Args[0], args...)
		cmd.Env = append(os.Environ(), "SPVFILTER_TEST_AS_MAIN=1", rssFileEnv+"="+rssFile)
	}
	var stdout, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &errb
	start := time.Now()
	if err := cmd.Run(); err != nil {
		t.Fatalf("scan %q: %v: %s", args, err, errb.String())
	}
	wall = time.Since(start)
	if err := json.Unmarshal(stdout.Bytes(), &out); err != nil {
		t.Fatalf("scan output: %v: %s", err, stdout.String())
	}
	// The process's own peak; the Maxrss of its rusage would include the
	// test process's RSS (see peertest.PeakRSS), so it serves only for a
	// binary given from outside, and then overstates the peak.
	if b, err := os.ReadFile(rssFile); err == nil {
		if rss, err = strconv.ParseInt(string(b), 10, 64); err == nil {
			return out, errb.String(), rss, wall
		}
	}
	usage, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage)
	if !ok {
		t.Skip("no rusage on this system")
	}
	return out, errb.String(), usage.Maxrss * 1024, wall // kilobytes on Linux
}

// TestScanUnderFlood runs a scan beside each flooding proxy (and, for the
// baseline, an honest proxy) in front of btcd, with a direct connection to
// the node as the second peer: the scan completes, the flooder is dropped
// for flooding, and the scan's peak memory stays within twice the
// baseline's. Before the connection had a writer of its own and budgets,
// a ping flood took it to 2-3 GB and an inv flood to 0.6-0.8 GB.
func TestScanUnderFlood(t *testing.T) {
	node := peertest.StartBtcd(t, peertest.WithArgs("--nobanning"))
	node.Generate(t, 200)
	watch := peertest.NewKey("alice").Address(node.Params).EncodeAddress()
	scan := func(t *testing.T, first string) (scanOutput, int64, time.Duration) {
		out, stderr, rss, wall := scanProcess(t, "--peer", first, "--peer", node.P2PAddr, "--watch", watch, "--timeout", "10s")
		if out.To != 200 || len(out.Peers) != 2 {
			t.Fatalf("scanned to %d with peers %+v; stderr %q", out.To, out.Peers, stderr)
		}
		return out, rss, wall
	}
	honest := peertest.NewLiar(t, node.P2PAddr, node.Params.Net, nil)
	_, base, baseWall := scan(t, honest.Addr)
	t.Logf("%-28s peak RSS %6.1f MB, %v", "no flood", float64(base)/1e6, baseWall.Round(time.Millisecond))
	tests := []struct {
		name     string
		flood    peertest.Flood
		flooding bool // the flooder is dropped for flooding
	}{
		{"pings while not reading", peertest.Flood{Kind: peertest.FloodPing}, true},
		{"inv of 50,000 entries", peertest.Flood{Kind: peertest.FloodInv}, true},
		{"notfound of 50,000 entries", peertest.Flood{Kind: peertest.FloodNotFound}, true},
		{"addr of 1,000 addresses", peertest.Flood{Kind: peertest.FloodAddr}, true},
		{"unknown commands of 100 kB", peertest.Flood{Kind: peertest.FloodUnknown}, true},
		{"answers held 10 ms", peertest.Flood{Kind: peertest.SlowAnswers, Delay: 10 * time.Millisecond}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := peertest.NewFlooder(t, node.P2PAddr, node.Params.Net, tt.flood)
			out, rss, wall := scan(t, f.Addr)
			t.Logf("%-28s peak RSS %6.1f MB (%.2fx), %v, %d flood messages; %s", tt.name, float64(rss)/1e6,
				float64(rss)/float64(base), wall.Round(time.Millisecond), f.Sent(), out.Peers[0].Reason)
			if flooded := strings.Contains(out.Peers[0].Reason, "flooding"); flooded != tt.flooding {
				t.Errorf("flooder %s: reason %q", f.Addr, out.Peers[0].Reason)
			}
			if rss > 2*base {
				t.Errorf("peak RSS %d MB, more than twice the %d MB without a flood", rss>>20, base>>20)
			}
		})
	}
}
