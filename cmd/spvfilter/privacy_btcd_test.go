package main

import (
	"context"
	"encoding/hex"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/btcsuite/btcd/wire"

	"github.com/spvfilter/spvfilter/peer/client"
	"github.com/spvfilter/spvfilter/peer/peertest"
	"github.com/spvfilter/spvfilter/privacy"
)

// TestPrivacyCaptureUniverseAnalyze runs the whole attack against a real
// btcd: "privacy universe" collects the chain's candidates, a light client
// (our peer package) scans for bob's address through "privacy capture",
// and "privacy analyze --capture" finds bob's address in the universe.
func TestPrivacyCaptureUniverseAnalyze(t *testing.T) {
	if testing.Short() {
		t.Skip("starts btcd")
	}
	alice, bob := peertest.NewKey("cli-privacy-alice"), peertest.NewKey("cli-privacy-bob")
	node := peertest.StartBtcd(t, peertest.WithMiningKey(alice))
	node.Generate(t, 101)
	tx := node.SpendCoinbase(t, wire.NewTxOut(100_000_000, bob.PkScript()))
	node.Confirm(t, tx)
	dir := t.TempDir()

	// 1. The universe of the chain.
	ufile := filepath.Join(dir, "universe.txt")
	stdout, stderr, status := runCLI(t, "", "privacy", "universe", "--peer", node.P2PAddr, "--network", "regtest", "--out", ufile)
	if status != exitOK {
		t.Fatalf("universe: status %d: %s", status, stderr)
	}
	ub, err := os.ReadFile(ufile)
	if err != nil {
		t.Fatal(err)
	}
	universe := string(ub)
	aliceAddr, bobAddr := alice.Address(node.Params).EncodeAddress(), bob.Address(node.Params).EncodeAddress()
	alicePub := hex.EncodeToString(alice.Priv.PubKey().SerializeCompressed())
	for _, want := range []string{aliceAddr + " #", bobAddr + " #", alicePub + " # pair " + aliceAddr} {
		if !strings.Contains(universe, want) {
			t.Errorf("universe lacks %q (%s):\n%.2000s", want, stdout, universe)
		}
	}

	// The same to standard output with --json: the lines alone on
	// standard output, the statistics on standard error.
	stdout, stderr, status = runCLI(t, "", "privacy", "universe", "--peer", node.P2PAddr, "--network", "regtest", "--out", "-", "--json")
	if status != exitOK {
		t.Fatalf("universe --out -: status %d: %s", status, stderr)
	}
	if stdout != universe {
		t.Errorf("universe --out - --json: standard output is not the universe file:\n%.500s", stdout)
	}
	var ust privacy.UniverseStats
	if i := strings.Index(stderr, "{"); i < 0 {
		t.Errorf("universe --out - --json: no statistics on standard error: %q", stderr)
	} else if decodeJSON(t, stderr[i:], &ust); ust.Lines == 0 || ust.Lines != strings.Count(universe, "\n")-1 {
		t.Errorf("universe statistics %+v for %d lines", ust, strings.Count(universe, "\n"))
	}

	// 2. A light client scans through the capturing relay.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	relayAddr := ln.Addr().String()
	ln.Close()
	cfile := filepath.Join(dir, "capture.jsonl")
	done := make(chan string, 1)
	go func() {
		_, stderr, status := runCLI(t, "", "privacy", "capture", "--listen", relayAddr, "--upstream", node.P2PAddr,
			"--network", "regtest", "--out", cfile, "--duration", "10s")
		if status != exitOK {
			done <- stderr
			return
		}
		done <- ""
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var c *client.Client
	for i := 0; i < 50; i++ {
		if c, err = client.Connect(ctx, client.Config{Peers: []string{relayAddr}, Params: node.Params, Timeout: 20 * time.Second}); err == nil {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	if err != nil {
		t.Fatalf("connect through the relay: %v", err)
	}
	if _, err := c.SyncHeaders(ctx); err != nil {
		t.Fatal(err)
	}
	// The filter a wallet watching bob's P2PKH output would load.
	tweak := uint32(777)
	res, err := c.ScanBIP37(ctx, client.ScanRequest{Watch: []client.WatchItem{client.ScriptItem(bob.PkScript())}, From: 1, To: c.Chain().Height()},
		client.BIP37Options{FPRate: 0.0001, Flags: wire.BloomUpdateAll, Tweak: &tweak})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Matches) == 0 {
		t.Fatal("the scan through the relay found nothing")
	}
	c.Close()
	if msg := <-done; msg != "" {
		t.Fatalf("capture: %s", msg)
	}

	// 3. The node's view: bob is exposed.
	stdout, stderr, status = runCLI(t, "", "privacy", "analyze", "--capture", cfile, "--client", "127.0.0.1", "--universe", ufile, "--json")
	if status != exitOK {
		t.Fatalf("analyze: status %d: %s", status, stderr)
	}
	var r struct {
		privacy.Report
		Captured []privacy.CapturedFilter `json:"captured"`
	}
	decodeJSON(t, stdout, &r)
	if len(r.Captured) != 1 || !strings.HasPrefix(r.Captured[0].Client, "127.0.0.1:") {
		t.Fatalf("captured %+v", r.Captured)
	}
	found := false
	for _, m := range r.Matched {
		if m.Candidate == bobAddr {
			found = true
		}
		if m.Candidate == aliceAddr {
			t.Errorf("alice's address matched bob's filter")
		}
	}
	if !found {
		t.Fatalf("bob's address %s not among the matches %+v", bobAddr, r.Matched)
	}
}
