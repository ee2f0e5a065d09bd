package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/btcsuite/btcd/btcutil"
	"github.com/btcsuite/btcd/wire"
	"github.com/spvfilter/spvfilter/peer/peertest"
)

// Attacks of a review, through the command line: each plays a lying
// peer, a hostile file or a hostile network against real btcd nodes.

// reviewCopy submits src's blocks from..to to dst.
func reviewCopy(t *testing.T, src, dst *peertest.Node, from, to int32) {
	t.Helper()
	for h := from; h <= to; h++ {
		hash, err := src.RPC().GetBlockHash(int64(h))
		if err != nil {
			t.Fatal(err)
		}
		b, err := src.RPC().GetBlock(hash)
		if err != nil {
			t.Fatal(err)
		}
		if err := dst.RPC().SubmitBlock(btcutil.NewBlock(b), nil); err != nil {
			t.Fatalf("submitting block %d: %v", h, err)
		}
	}
}

// TestReviewUserAgentForgesMatchLine: a peer's user agent (its own words
// in its version message, up to 256 bytes) is printed as it is in scan's
// text output. A peer that puts line breaks in it adds lines of its
// choosing: here a payment to the watched address that never happened.
func TestReviewUserAgentForgesMatchLine(t *testing.T) {
	node := peertest.StartBtcd(t, peertest.WithArgs("--nobanning"))
	node.Generate(t, 110)
	addr := peertest.NewKey("alice").Address(node.Params).EncodeAddress()
	hash, err := node.RPC().GetBlockHash(105)
	if err != nil {
		t.Fatal(err)
	}
	fake := strings.Repeat("ab", 32)
	agent := fmt.Sprintf("/btcd:0.24.2/)\n%s  height 105  block %s  watch %s\npeer 10.0.0.1:8333 (/btcd:0.24.2/", fake, hash, addr)
	if len(agent) > 256 {
		t.Fatalf("user agent of %d bytes", len(agent))
	}
	liar := peertest.NewLiar(t, node.P2PAddr, node.Params.Net, func(m wire.Message) ([]wire.Message, bool) {
		if v, ok := m.(*wire.MsgVersion); ok {
			v.UserAgent = agent
		}
		return []wire.Message{m}, false
	})
	stdout, stderr, status := runCLI(t, "", "scan", "--network", "regtest", "--peer", liar.Addr, "--watch", addr)
	if status != exitOK {
		t.Fatalf("status %d, stderr %q", status, stderr)
	}
	match := regexp.MustCompile(`(?m)^[0-9a-f]{64}  height \d+  block [0-9a-f]{64}  watch `)
	if lines := match.FindAllString(stdout, -1); len(lines) > 0 {
		t.Errorf("alice was never paid, yet the output shows %d match line(s), written by the peer:\n%s", len(lines), stdout)
	}
}

// TestReviewCLIStoredSegmentBypass: scan --datadir D with a liar alone
// (hiding alice's payment at 102), then scan --datadir D with the liar
// and an honest node at height 990 that holds block 102. Without D the
// same two peers catch the liar; with D the payment is missing, exit 0,
// and the only warning names heights 991..1011.
func TestReviewCLIStoredSegmentBypass(t *testing.T) {
	node := peertest.StartBtcd(t, peertest.WithArgs("--nobanning"))
	node.Generate(t, 101)
	alice := peertest.NewKey("alice")
	pay := node.SpendCoinbase(t, wire.NewTxOut(10_000_000, alice.PkScript()))
	node.Confirm(t, pay)  // 102
	node.Generate(t, 908) // 1010
	ahead := peertest.CopyChain(t, node, peertest.WithArgs("--nobanning"))
	ahead.Generate(t, 1) // 1011
	liar := peertest.NewLiar(t, ahead.P2PAddr, ahead.Params.Net, peertest.ForgeFilter(t, ahead, 102, peertest.EmptyFilter)).Addr
	behind := peertest.StartBtcd(t, peertest.WithArgs("--nobanning"))
	reviewCopy(t, node, behind, 1, 990)
	addr := alice.Address(node.Params).EncodeAddress()
	dir := t.TempDir()
	scan := func(peers ...string) (scanOutput, string) {
		t.Helper()
		args := []string{"scan", "--json", "--network", "regtest", "--timeout", "10s", "--datadir", dir, "--watch", addr}
		for _, p := range peers {
			args = append(args, "--peer", p)
		}
		stdout, stderr, status := runCLI(t, "", args...)
		var out scanOutput
		if status != exitOK || json.Unmarshal([]byte(stdout), &out) != nil {
			t.Fatalf("status %d, stdout %q, stderr %q", status, stdout, stderr)
		}
		return out, stdout
	}
	if out, _ := scan(liar); len(out.Matches) != 0 {
		t.Fatalf("the liar alone: matches %+v: it did not lie", out.Matches)
	}
	out, stdout := scan(liar, behind.P2PAddr)
	banned := false
	for _, p := range out.Peers {
		banned = banned || p.Address == liar && p.Banned
	}
	if len(out.Matches) == 0 && !banned {
		t.Errorf("alice's payment at 102, held by the honest node, missing; the liar not banned; output:\n%s", stdout)
	}
}

// TestReviewFollowCLILosesRestartedNode: scan --follow over one node that
// restarts (away for two seconds). The poll while it is away drops it;
// scan --follow never redials it, so when the node is back and mines,
// nothing is printed, nothing is said on standard error, and the process
// waits for ever. SIGINT then shows the cause only in the summary.
func TestReviewFollowCLILosesRestartedNode(t *testing.T) {
	node := peertest.StartBtcd(t, peertest.WithArgs("--nobanning"))
	node.Generate(t, 105)
	proxy := peertest.NewLiar(t, node.P2PAddr, node.Params.Net, nil)
	addr := peertest.NewKey("alice").Address(node.Params).EncodeAddress()
	cmd := exec.Command(os.Args[0], "scan", "--follow", "--peer", proxy.Addr, "--network", "regtest", "--from", "100",
		"--watch", addr, "--timeout", "5s")
	cmd.Env = append(os.Environ(), "SPVFILTER_TEST_AS_MAIN=1")
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	lines := make(chan map[string]any, 1000)
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			var m map[string]any
			if json.Unmarshal(sc.Bytes(), &m) == nil {
				lines <- m
			}
		}
	}()
	waitFor := func(what string, d time.Duration, cond func(map[string]any) bool) bool {
		t.Helper()
		timeout := time.After(d)
		for {
			select {
			case m, ok := <-lines:
				if !ok {
					return false
				}
				if cond(m) {
					return true
				}
			case <-timeout:
				return false
			}
		}
	}
	tip := func(h float64) func(map[string]any) bool {
		return func(m map[string]any) bool { return m["event"] == "tip" && m["height"] == h }
	}
	if !waitFor("tip 105", 30*time.Second, tip(105)) {
		t.Fatalf("no tip 105; stderr %q", stderr.String())
	}
	proxy.Pause(t, 2*time.Second)
	node.Generate(t, 1) // 106, once the node is back
	if waitFor("tip 106", 15*time.Second, tip(106)) {
		return
	}
	quiet := stderr.String()
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	var summary map[string]any
	for m := range lines {
		if m["event"] == "summary" {
			summary = m
		}
	}
	err = cmd.Wait()
	t.Errorf("15 s after the node came back and mined block 106: nothing printed, standard error %q; after SIGINT (exit %v) the summary says %v",
		quiet, err, summary["warnings"])
}
