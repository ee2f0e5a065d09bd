package main

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/btcsuite/btcd/wire"

	"github.com/spvfilter/spvfilter/peer/client"
	"github.com/spvfilter/spvfilter/peer/peertest"
	"github.com/spvfilter/spvfilter/privacy/attack"
)

// TestPrivacyFetchesBtcd runs the block-download attack end to end against
// a real btcd. The chain holds a wallet of three P2PKH scripts, each paid
// in one block and spent in a later one (two appearances each), and noise:
// three fresh addresses paid in every block, some of them spent later. Our
// light client scans the chain with BIP 157 through the capture relay,
// fetching the blocks its filters match; "privacy universe --index" indexes
// the chain; "privacy fetches" must rank the wallet's three scripts first
// and match exactly the scripts whose every block was fetched (computed
// here from what the test put in the chain), and the noise matched beside
// them is compared with the model's expectation.
func TestPrivacyFetchesBtcd(t *testing.T) {
	if testing.Short() {
		t.Skip("starts btcd")
	}
	alice := peertest.NewKey("fetches-alice")
	node := peertest.StartBtcd(t, peertest.WithMiningKey(alice))
	node.Generate(t, 180)
	height := func() int32 {
		n, err := node.RPC().GetBlockCount()
		if err != nil {
			t.Fatal(err)
		}
		return int32(n)
	}
	// appearances[address] are the heights of the blocks it appears in.
	appearances := map[string][]int32{}
	seen := func(k *peertest.Key, h int32) {
		a := k.Address(node.Params).EncodeAddress()
		if hs := appearances[a]; len(hs) == 0 || hs[len(hs)-1] != h {
			appearances[a] = append(hs, h)
		}
	}
	var wallet []*peertest.Key
	for i := 0; i < 3; i++ {
		wallet = append(wallet, peertest.NewKey(fmt.Sprintf("fetches-wallet-%d", i)))
	}
	receive := map[int]int{3: 0, 8: 1, 14: 2}
	spend := map[int]int{20: 0, 27: 1, 33: 2}
	walletOut := map[int]peertest.Output{}
	var spendable []peertest.Output
	noiseKeys := 0
	fresh := func() *peertest.Key {
		noiseKeys++
		return peertest.NewKey(fmt.Sprintf("fetches-noise-%d", noiseKeys))
	}
	for round := 0; round < 40; round++ {
		h := height() + 1
		var txs []*wire.MsgTx
		var keys []*peertest.Key
		var outs []*wire.TxOut
		for j := 0; j < 3; j++ {
			k := fresh()
			keys = append(keys, k)
			outs = append(outs, wire.NewTxOut(1_000_000, k.PkScript()))
		}
		noise := node.SpendCoinbase(t, outs...)
		txs = append(txs, noise)
		for _, k := range keys {
			seen(k, h)
		}
		_, walletRound := receive[round]
		if _, ok := spend[round]; ok {
			walletRound = true
		}
		if !walletRound {
			// Outputs of blocks the wallet does not fetch may be spent later.
			for j, k := range keys {
				spendable = append(spendable, peertest.OutputOf(noise, uint32(j), k))
			}
			if round%2 == 1 && len(spendable) > 3 {
				in := spendable[0]
				spendable = spendable[1:]
				to := fresh()
				txs = append(txs, node.Spend(t, []peertest.Output{in}, wire.NewTxOut(in.Value-peertest.Fee, to.PkScript())))
				seen(in.Key, h)
				seen(to, h)
			}
		}
		if i, ok := receive[round]; ok {
			tx := node.SpendCoinbase(t, wire.NewTxOut(50_000_000, wallet[i].PkScript()))
			txs = append(txs, tx)
			walletOut[i] = peertest.OutputOf(tx, 0, wallet[i])
			seen(wallet[i], h)
		}
		if i, ok := spend[round]; ok {
			in := walletOut[i]
			txs = append(txs, node.Spend(t, []peertest.Output{in}, wire.NewTxOut(in.Value-peertest.Fee, alice.PkScript())))
			seen(wallet[i], h)
		}
		node.Confirm(t, txs...)
		if got := height(); got != h {
			t.Fatalf("round %d mined height %d, want %d", round, got, h)
		}
	}
	tip := height()
	dir := t.TempDir()

	// The universe and its index.
	ufile, ifile := filepath.Join(dir, "universe.txt"), filepath.Join(dir, "universe.idx")
	if _, stderr, status := runCLI(t, "", "privacy", "universe", "--peer", node.P2PAddr, "--network", "regtest",
		"--out", ufile, "--index", ifile, "--index-memory", "65536"); status != exitOK {
		t.Fatalf("universe --index: status %d: %s", status, stderr)
	}

	// The wallet's BIP 157 scan through the capture relay.
	cfile := filepath.Join(dir, "capture.jsonl")
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	relay, stopRelay := captureRelay(t, ctx, node, cfile)
	c, err := client.Connect(ctx, client.Config{Peers: []string{relay}, Params: node.Params, Timeout: 20 * time.Second})
	if err != nil {
		t.Fatalf("connect through the relay: %v", err)
	}
	if _, err := c.SyncHeaders(ctx); err != nil {
		t.Fatal(err)
	}
	var watch []client.WatchItem
	for _, k := range wallet {
		watch = append(watch, client.ScriptItem(k.PkScript()))
	}
	res, err := c.ScanBIP157(ctx, client.ScanRequest{Watch: watch, To: c.Chain().Height()})
	if err != nil {
		t.Fatal(err)
	}
	c.Close()
	stopRelay()
	if len(res.Matches) < 6 {
		t.Fatalf("the scan found %d wallet transactions, want 6", len(res.Matches))
	}

	// The attack.
	stdout, stderr, status := runCLI(t, "", "privacy", "fetches", "--capture", cfile, "--index", ifile, "--json")
	if status != exitOK {
		t.Fatalf("fetches: status %d: %s", status, stderr)
	}
	var got struct {
		Index struct {
			From, To int32
		} `json:"index"`
		Clients  []attack.FetchReport `json:"clients"`
		Warnings []string             `json:"warnings"`
	}
	decodeJSON(t, stdout, &got)
	if len(got.Clients) != 1 || got.Index.To != tip {
		t.Fatalf("%d sessions, index to %d (tip %d):\n%.2000s", len(got.Clients), got.Index.To, tip, stdout)
	}
	rep := got.Clients[0]
	var walletHeights []int32
	for _, k := range wallet {
		walletHeights = append(walletHeights, appearances[k.Address(node.Params).EncodeAddress()]...)
	}
	slices.Sort(walletHeights)
	// The client fetched the wallet's six blocks and its filters' false
	// positives, nothing else; it scanned the whole chain.
	if int(rep.FetchedBlocks) != len(walletHeights)+res.FalsePositiveBlocks || rep.ScannedBlocks != uint64(tip)+1 {
		t.Fatalf("fetched %v (B = %d), want the wallet's %v and %d false positives", rep.FetchedHeights, rep.ScannedBlocks, walletHeights, res.FalsePositiveBlocks)
	}
	for _, h := range walletHeights {
		if !slices.Contains(rep.FetchedHeights, h) {
			t.Fatalf("wallet block %d not among the fetched %v", h, rep.FetchedHeights)
		}
	}
	// What must match: every script of the test whose blocks were all
	// fetched (the miner's, in every block, cannot).
	want := map[string]bool{}
	for a, hs := range appearances {
		all := true
		for _, h := range hs {
			all = all && slices.Contains(rep.FetchedHeights, h)
		}
		if all {
			want[a] = true
		}
	}
	if len(rep.Matched) != len(want) || int(rep.MatchedCount) != len(want) {
		t.Errorf("%d matched (%d listed), want %d", rep.MatchedCount, len(rep.Matched), len(want))
	}
	for _, m := range rep.Matched {
		if !want[m.Candidate] {
			t.Errorf("%s matched, but not all of its blocks were fetched (heights %v)", m.Candidate, m.Heights)
		}
	}
	// The wallet's scripts rank first, each with two appearances.
	for i, k := range wallet {
		a := k.Address(node.Params).EncodeAddress()
		idx := slices.IndexFunc(rep.Matched, func(m attack.FetchMatch) bool { return m.Candidate == a })
		if idx < 0 || idx >= len(wallet) || rep.Matched[idx].Appearances != 2 {
			t.Fatalf("wallet script %d (%s) at rank %d of %+v", i, a, idx, rep.Matched)
		}
	}
	spurious := int(rep.MatchedCount) - len(wallet)
	t.Logf("B = %d blocks, F = %d fetched (f = %.3g), %d candidates in the index; wallet scripts: chance %.3g each, probability %.3f; %d spurious matches (all of one appearance, in the wallet's own blocks), model expectation for scripts placed at random %.3g",
		rep.ScannedBlocks, rep.FetchedBlocks, rep.FetchedFraction, rep.UniverseSize, rep.Matched[0].ChanceProbability, rep.Matched[0].Probability,
		spurious, rep.ExpectedFalsePositives)
	for _, m := range rep.Matched[len(wallet):] {
		// Three noise scripts share each wallet block: at most 1/3.
		if m.Appearances != 1 || m.Probability > 0.34 {
			t.Errorf("spurious match %s of %d appearances, probability %.3f that it is the wallet's", m.Candidate, m.Appearances, m.Probability)
		}
	}
	// Chance gives a few groups of two appearances too (noise paid in a
	// fetched block and spent in another): the wallet's three hold most,
	// not all, of the class's probability.
	for _, m := range rep.Matched[:len(wallet)] {
		if m.Probability < 0.9 {
			t.Errorf("wallet script %s at probability %.3f", m.Candidate, m.Probability)
		}
	}
	if !slices.ContainsFunc(got.Warnings, func(w string) bool { return strings.Contains(w, "appear in a single block") }) {
		t.Errorf("warnings %q", got.Warnings)
	}
	// The text report names the wallet's first script and a verdict.
	text, _, status := runCLI(t, "", "privacy", "fetches", "--capture", cfile, "--index", ifile)
	if status != exitOK || !strings.Contains(text, rep.Matched[0].Candidate) || !strings.Contains(text, "verdict:") {
		t.Errorf("text report, status %d:\n%s", status, text)
	}
}
