package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/btcsuite/btcd/wire"

	"github.com/spvfilter/spvfilter/peer/peertest"
)

// The test binary runs as spvfilter itself when asked: the follow test
// needs a real process to interrupt.
func init() {
	if os.Getenv("SPVFILTER_TEST_AS_MAIN") == "1" {
		os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
	}
}

// TestScanFollow runs scan --follow as a process while the node mines a
// payment to a watched key and then reorganizes it away and back; the
// events arrive as JSON lines, and SIGINT ends the scan with exit 0 and a
// summary line.
func TestScanFollow(t *testing.T) {
	node := peertest.StartBtcd(t, peertest.WithArgs("--nobanning"))
	node.Generate(t, 105)
	alice := peertest.NewKey("alice")
	addr := alice.Address(node.Params).EncodeAddress()
	cmd := exec.Command(os.Args[0], "scan", "--follow", "--peer", node.P2PAddr, "--network", "regtest", "--from", "100",
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
			if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
				m = map[string]any{"event": "bad line", "line": sc.Text()}
			}
			lines <- m
		}
	}()
	var got []map[string]any
	waitFor := func(what string, cond func(map[string]any) bool) {
		t.Helper()
		timeout := time.After(30 * time.Second)
		for {
			select {
			case m, ok := <-lines:
				if !ok {
					t.Fatalf("output ended before %s; stderr %q", what, stderr.String())
				}
				got = append(got, m)
				if cond(m) {
					return
				}
			case <-timeout:
				t.Fatalf("no %s within 30 s", what)
			}
		}
	}
	is := func(event string, height float64) func(map[string]any) bool {
		return func(m map[string]any) bool { return m["event"] == event && m["height"] == height }
	}
	waitFor("tip 105", is("tip", 105))
	pay := node.SpendCoinbase(t, wire.NewTxOut(10_000_000, alice.PkScript()))
	node.Confirm(t, pay) // 106
	waitFor("the payment", func(m map[string]any) bool { return m["event"] == "match" && m["txid"] == pay.TxHash().String() })
	waitFor("block 106", is("connected", 106))
	hash, _ := node.RPC().GetBlockHash(106)
	if err := node.RPC().InvalidateBlock(hash); err != nil {
		t.Fatal(err)
	}
	node.Generate(t, 2) // 106', 107': the payment again in 106'
	waitFor("tip 107", is("tip", 107))
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	for m := range lines {
		got = append(got, m)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("after SIGINT: %v; stderr %q", err, stderr.String())
	}
	var events []string
	for _, m := range got {
		if m["event"] != "connected" || m["height"].(float64) >= 104 {
			e := m["event"].(string)
			if h, ok := m["height"].(float64); ok {
				e = fmt.Sprintf("%s %d", e, int(h))
			}
			events = append(events, e)
		}
	}
	want := []string{"connected 104", "connected 105", "tip 105", "match 106", "connected 106", "tip 106",
		"disconnected 106", "match 106", "connected 106", "connected 107", "tip 107", "summary"}
	if !slices.Equal(events, want) {
		t.Fatalf("events %q\nwant   %q", events, want)
	}
	last := got[len(got)-1]
	if last["event"] != "summary" || last["next_height"] != float64(108) || last["matches_found"] != float64(1) {
		t.Fatalf("summary %v", last)
	}
	if !strings.Contains(stderr.String(), "rests on one peer") {
		t.Errorf("stderr %q lacks the one-peer warning", stderr.String())
	}
}
