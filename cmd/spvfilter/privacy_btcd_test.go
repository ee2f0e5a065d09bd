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

	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/btcsuite/btcd/wire"

	"github.com/spvfilter/spvfilter/bip37"
	"github.com/spvfilter/spvfilter/peer"
	"github.com/spvfilter/spvfilter/peer/chain"
	"github.com/spvfilter/spvfilter/peer/client"
	"github.com/spvfilter/spvfilter/peer/peertest"
	"github.com/spvfilter/spvfilter/privacy/attack"
	"github.com/spvfilter/spvfilter/privacy/capture"
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
	text := string(ub)
	aliceAddr, bobAddr := alice.Address(node.Params).EncodeAddress(), bob.Address(node.Params).EncodeAddress()
	alicePub := hex.EncodeToString(alice.Priv.PubKey().SerializeCompressed())
	for _, want := range []string{aliceAddr + " #", bobAddr + " #", alicePub + " # pair " + aliceAddr} {
		if !strings.Contains(text, want) {
			t.Errorf("universe lacks %q (%s):\n%.2000s", want, stdout, text)
		}
	}

	// The same to standard output with --json: the lines alone on
	// standard output, the statistics on standard error.
	stdout, stderr, status = runCLI(t, "", "privacy", "universe", "--peer", node.P2PAddr, "--network", "regtest", "--out", "-", "--json")
	if status != exitOK {
		t.Fatalf("universe --out -: status %d: %s", status, stderr)
	}
	if stdout != text {
		t.Errorf("universe --out - --json: standard output is not the universe file:\n%.500s", stdout)
	}
	var ust universeStatsJSON
	if i := strings.Index(stderr, "{"); i < 0 {
		t.Errorf("universe --out - --json: no statistics on standard error: %q", stderr)
	} else if decodeJSON(t, stderr[i:], &ust); ust.LinesWritten == 0 || ust.LinesWritten != strings.Count(text, "\n")-1 {
		t.Errorf("universe statistics %+v for %d lines", ust, strings.Count(text, "\n"))
	} else if !strings.Contains(stderr[i:], `"warnings": [`) || !strings.Contains(stderr[i:], "rests on one peer, --peer "+node.P2PAddr) {
		t.Errorf("universe statistics without their warnings: %s", stderr[i:])
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
	var out struct {
		Clients []struct {
			attack.Report
			Captured []capture.Filter `json:"captured"`
		} `json:"clients"`
	}
	decodeJSON(t, stdout, &out)
	if len(out.Clients) != 1 {
		t.Fatalf("%d sessions, want 1:\n%s", len(out.Clients), stdout)
	}
	r := out.Clients[0]
	if len(r.Captured) != 1 || !strings.HasPrefix(r.Captured[0].Client, "127.0.0.1:") || r.Captured[0].Session == "" {
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

// captureRelay runs a capture relay on 127.0.0.1 in front of node that
// records into file, until stop, which fails the test if the relay failed
// and closes the file.
func captureRelay(t *testing.T, ctx context.Context, node *peertest.Node, file string) (addr string, stop func()) {
	t.Helper()
	out, err := os.Create(file)
	if err != nil {
		t.Fatal(err)
	}
	r, err := capture.NewRelay(capture.RelayConfig{Listen: "127.0.0.1:0", Upstream: node.P2PAddr, Net: node.Params.Net, Out: out})
	if err != nil {
		out.Close()
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(ctx)
	served := make(chan error, 1)
	go func() { served <- r.Serve(ctx) }()
	return r.Addr().String(), func() {
		t.Helper()
		cancel()
		err := <-served
		out.Close()
		if err != nil {
			t.Fatal(err)
		}
	}
}

// scanThroughRelay is one light-client session through the relay at addr:
// connect, sync the headers, scan with filter, disconnect.
func scanThroughRelay(t *testing.T, ctx context.Context, addr string, node *peertest.Node, f *bip37.Filter) {
	t.Helper()
	p, err := peer.Dial(ctx, peer.Config{Addr: addr, Params: node.Params, Timeout: 20 * time.Second})
	if err != nil {
		t.Fatalf("dial through the relay: %v", err)
	}
	defer p.Close()
	c := chain.New(node.Params)
	if _, err := p.SyncHeaders(ctx, c); err != nil {
		t.Fatal(err)
	}
	if err := p.LoadFilter(ctx, f); err != nil {
		t.Fatal(err)
	}
	var hashes []chainhash.Hash
	for h := int32(1); h <= c.Height() && len(hashes) < peer.MaxFilteredBlocksPerRequest; h++ {
		hashes = append(hashes, c.Hash(h))
	}
	blocks, err := p.GetFilteredBlocks(ctx, hashes)
	if err != nil {
		t.Fatal(err)
	}
	matches := 0
	for _, b := range blocks {
		matches += len(b.Txs)
	}
	if matches == 0 {
		t.Fatal("the scan through the relay found nothing")
	}
}

// TestPrivacyAnalyzeTwoWallets captures two wallets through the relay in
// front of a real btcd, both from 127.0.0.1: alice's wallet twice (a
// restart picks a new tweak), bob's once. Analyzing the capture session by
// session exposes each wallet, where intersecting every filter of the
// capture (what analyze did before it knew sessions) finds nothing; --link
// joins alice's two sessions and not bob's.
func TestPrivacyAnalyzeTwoWallets(t *testing.T) {
	if testing.Short() {
		t.Skip("starts btcd")
	}
	alice, bob := peertest.NewKey("cli-two-alice"), peertest.NewKey("cli-two-bob")
	node := peertest.StartBtcd(t, peertest.WithMiningKey(alice))
	node.Generate(t, 101)
	node.Confirm(t, node.SpendCoinbase(t, wire.NewTxOut(100_000_000, bob.PkScript())))
	dir := t.TempDir()
	ufile := filepath.Join(dir, "universe.txt")
	if _, stderr, status := runCLI(t, "", "privacy", "universe", "--peer", node.P2PAddr, "--network", "regtest", "--out", ufile); status != exitOK {
		t.Fatalf("universe: status %d: %s", status, stderr)
	}

	cfile := filepath.Join(dir, "capture.jsonl")
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	relay, stopRelay := captureRelay(t, ctx, node, cfile)
	walletFilter := func(k *peertest.Key, tweak uint32) *bip37.Filter {
		f := bip37.NewFilter(10, 0.0001, tweak, wire.BloomUpdateAll)
		f.Add(k.Address(node.Params).ScriptAddress())
		return f
	}
	scanThroughRelay(t, ctx, relay, node, walletFilter(alice, 1001))
	scanThroughRelay(t, ctx, relay, node, walletFilter(bob, 2002))
	scanThroughRelay(t, ctx, relay, node, walletFilter(alice, 3003)) // alice restarts
	stopRelay()
	aliceAddr, bobAddr := alice.Address(node.Params).EncodeAddress(), bob.Address(node.Params).EncodeAddress()

	type report struct {
		Session      string  `json:"session"`
		Client       string  `json:"client"`
		UniverseSize uint64  `json:"universe_size"`
		Expected     float64 `json:"expected_false_positives"`
		MatchedCount uint64  `json:"matched_count"`
		Matched      []struct {
			Candidate   string  `json:"candidate"`
			Probability float64 `json:"probability"`
		} `json:"matched"`
	}
	var got struct {
		Clients      []report `json:"clients"`
		Intersection *report  `json:"intersection"`
		Links        struct {
			Pairs []struct {
				A, B        string
				Shared      uint64  `json:"shared"`
				Probability float64 `json:"probability"`
				Linked      bool    `json:"linked"`
			} `json:"pairs"`
			Groups []struct {
				Sessions []string `json:"sessions"`
				report
			} `json:"groups"`
		} `json:"link_report"`
	}
	stdout, stderr, status := runCLI(t, "", "privacy", "analyze", "--capture", cfile, "--universe", ufile, "--link", "--intersect", "--json")
	if status != exitOK {
		t.Fatalf("analyze: status %d: %s", status, stderr)
	}
	decodeJSON(t, stdout, &got)
	if len(got.Clients) != 3 {
		t.Fatalf("%d sessions analyzed, want 3:\n%s", len(got.Clients), stdout)
	}
	// Each session alone exposes its wallet's address, and only it.
	for i, want := range []string{aliceAddr, bobAddr, aliceAddr} {
		c := got.Clients[i]
		if !strings.HasPrefix(c.Client, "127.0.0.1:") || c.Session == "" || c.UniverseSize == 0 {
			t.Errorf("session %d: %+v", i+1, c)
		}
		if c.MatchedCount != 1 || len(c.Matched) != 1 || c.Matched[0].Candidate != want || c.Matched[0].Probability < 0.95 {
			t.Errorf("session %d: matched %+v, want %s exposed", i+1, c.Matched, want)
		}
	}
	if got.Clients[0].Session == got.Clients[2].Session || got.Clients[0].Client == got.Clients[2].Client {
		t.Errorf("alice's two connections share a name: %+v, %+v", got.Clients[0], got.Clients[2])
	}
	// Intersected as if one wallet's, the sessions show nothing.
	if got.Intersection == nil || got.Intersection.MatchedCount != 0 {
		t.Errorf("intersection of all sessions: %+v", got.Intersection)
	}
	// With --json the intersection names them (in "sessions"), and
	// standard error holds no text.
	var joined struct {
		Intersection struct {
			Sessions []string `json:"sessions"`
		} `json:"intersection"`
	}
	decodeJSON(t, stdout, &joined)
	if len(joined.Intersection.Sessions) != 3 || stderr != "" {
		t.Errorf("--intersect named the sessions %q, standard error %q: want 3 named, no text", joined.Intersection.Sessions, stderr)
	}
	// Linking: alice's sessions, not bob's.
	if len(got.Links.Pairs) != 3 {
		t.Fatalf("%d pairs, want 3", len(got.Links.Pairs))
	}
	for _, p := range got.Links.Pairs {
		same := p.A == got.Clients[0].Session && p.B == got.Clients[2].Session
		if p.Linked != same {
			t.Errorf("pair %s-%s: linked %v (probability %.3g, %d shared), want %v", p.A, p.B, p.Linked, p.Probability, p.Shared, same)
		}
	}
	if len(got.Links.Groups) != 1 || len(got.Links.Groups[0].Sessions) != 2 || got.Links.Groups[0].MatchedCount != 1 ||
		got.Links.Groups[0].Matched[0].Candidate != aliceAddr {
		t.Errorf("groups %+v, want alice's two sessions exposing her address", got.Links.Groups)
	}
	// The text names each session and its client.
	text, _, status := runCLI(t, "", "privacy", "analyze", "--capture", cfile, "--universe", ufile, "--link")
	if status != exitOK || strings.Count(text, " of 3: ") != 3 || !strings.Contains(text, "linked group of 2 sessions") {
		t.Errorf("text report, status %d:\n%s", status, text)
	}
}
