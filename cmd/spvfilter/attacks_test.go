package main

import (
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/btcsuite/btcd/wire"
	"github.com/spvfilter/spvfilter/peer/peertest"
)

// hasWarning reports whether one of ws holds every part.
func hasWarning(ws []string, parts ...string) bool {
	return slices.ContainsFunc(ws, func(w string) bool {
		for _, p := range parts {
			if !strings.Contains(w, p) {
				return false
			}
		}
		return true
	})
}

// TestScanLiarAhead: a liar one block ahead of two honest peers, the only
// one whose chain reaches the tip, hides a payment behind an empty filter
// with a coherent filter-header chain. The scan compares every height the
// honest peers hold, finds the payment, bans the liar and says the tip it
// alone held was not scanned.
func TestScanLiarAhead(t *testing.T) {
	node := peertest.StartBtcd(t, peertest.WithArgs("--nobanning"))
	node.Generate(t, 101)
	alice := peertest.NewKey("alice")
	pay := node.SpendCoinbase(t, wire.NewTxOut(10_000_000, alice.PkScript()))
	node.Confirm(t, pay) // 102
	node.Generate(t, 8)  // tip 110
	ahead := peertest.CopyChain(t, node, peertest.WithArgs("--nobanning"))
	ahead.Generate(t, 1) // 111, on the liar's node only
	liar := peertest.NewLiar(t, ahead.P2PAddr, ahead.Params.Net, peertest.ForgeFilter(t, ahead, 102, peertest.EmptyFilter))
	h1 := peertest.NewLiar(t, node.P2PAddr, node.Params.Net, nil)
	h2 := peertest.NewLiar(t, node.P2PAddr, node.Params.Net, nil)
	stdout, stderr, status := runCLI(t, "", "scan", "--json", "--network", "regtest", "--timeout", "10s",
		"--peer", liar.Addr, "--peer", h1.Addr, "--peer", h2.Addr, "--watch", alice.Address(node.Params).EncodeAddress())
	var out scanOutput
	if status != exitOK || json.Unmarshal([]byte(stdout), &out) != nil {
		t.Fatalf("status %d, stdout %q, stderr %q", status, stdout, stderr)
	}
	if len(out.Matches) != 1 || out.Matches[0].Txid != pay.TxHash().String() || out.Matches[0].Height != 102 {
		t.Errorf("matches %+v, want the payment at 102", out.Matches)
	}
	banned := map[string]bool{}
	for _, p := range out.Peers {
		banned[p.Address] = p.Banned
	}
	if !banned[liar.Addr] || banned[h1.Addr] || banned[h2.Addr] {
		t.Errorf("peers %+v: want the liar banned, the others not", out.Peers)
	}
	if out.To != 110 || !hasWarning(out.Warnings, "held by no connected peer") {
		t.Errorf("scanned to %d, warnings %q: want 110 and the liar's tip named", out.To, out.Warnings)
	}
}

// TestSendTellsTheTruth: a peer that takes a transaction and serves it
// back without relaying it is not believed (acceptance unconfirmed, with
// a warning); a transaction already mined is reported with its block,
// well before the timeout.
func TestSendTellsTheTruth(t *testing.T) {
	node := peertest.StartBtcd(t, peertest.WithArgs("--nobanning"))
	node.Generate(t, 101)
	hexOf := func(tx *wire.MsgTx) string {
		var b strings.Builder
		tx.Serialize(hex.NewEncoder(&b))
		return b.String()
	}
	type sendOutput struct {
		Propagated bool `json:"propagated"`
		Mined      *struct {
			Height int32 `json:"height"`
		} `json:"mined"`
		Warnings []string `json:"warnings"`
	}
	echo := peertest.NewEcho(t, node.P2PAddr, node.Params.Net)
	tx := node.BuildCoinbaseSpend(t, wire.NewTxOut(1_000_000, peertest.NewKey("alice").P2WPKHScript()))
	stdout, stderr, status := runCLI(t, "", "send", "--json", "--network", "regtest", "--timeout", "3s", "--peer", echo.Addr, hexOf(tx))
	var out sendOutput
	if status != exitOK || json.Unmarshal([]byte(stdout), &out) != nil || out.Propagated || !hasWarning(out.Warnings, "unconfirmed") {
		t.Errorf("echo: status %d, stdout %q, stderr %q: want acceptance unconfirmed", status, stdout, stderr)
	}

	mined := node.SpendCoinbase(t, wire.NewTxOut(1_000_000, peertest.NewKey("bob").P2WPKHScript()))
	node.Confirm(t, mined) // 102
	node.Generate(t, 2)
	start := time.Now()
	stdout, stderr, status = runCLI(t, "", "send", "--json", "--network", "regtest", "--timeout", "20s", "--peer", node.P2PAddr, hexOf(mined))
	out = sendOutput{}
	if status != exitOK || json.Unmarshal([]byte(stdout), &out) != nil || out.Mined == nil || out.Mined.Height != 102 || !out.Propagated {
		t.Errorf("mined: status %d, stdout %q, stderr %q: want it reported mined at 102", status, stdout, stderr)
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("mined: took %v against a timeout of 20s", d)
	}
}

// TestScanToZero scans the genesis block alone.
func TestScanToZero(t *testing.T) {
	node := peertest.StartBtcd(t, peertest.WithArgs("--nobanning"))
	node.Generate(t, 5)
	stdout, stderr, status := runCLI(t, "", "scan", "--json", "--network", "regtest", "--peer", node.P2PAddr, "--to", "0",
		"--watch", peertest.NewKey("alice").Address(node.Params).EncodeAddress())
	var out scanOutput
	if status != exitOK || json.Unmarshal([]byte(stdout), &out) != nil || out.BlocksScanned != 1 || out.To != 0 {
		t.Fatalf("status %d, stdout %q, stderr %q", status, stdout, stderr)
	}
}

// TestSendWitness: a P2WPKH spend sent to two addresses of a segwit node
// reaches its mempool with its witness, propagation seen through the
// other address, and is mined; a double spend of the same output is
// refused, exit 1, with the node's reason.
func TestSendWitness(t *testing.T) {
	node := peertest.StartBtcd(t, peertest.WithArgs("--nobanning"))
	node.Generate(t, 440) // btcd's regtest enforces segwit from height 432
	alice, bob := peertest.NewKey("alice"), peertest.NewKey("bob")
	fund := node.SpendCoinbase(t, wire.NewTxOut(2_000_000, alice.P2WPKHScript()))
	node.Confirm(t, fund)
	hexOf := func(tx *wire.MsgTx) string {
		var b strings.Builder
		tx.Serialize(hex.NewEncoder(&b))
		return b.String()
	}
	spend := peertest.BuildSpend(t, []peertest.Output{peertest.OutputOf(fund, 0, alice)}, wire.NewTxOut(2_000_000-peertest.Fee, bob.PkScript()))
	other := peertest.NewLiar(t, node.P2PAddr, node.Params.Net, nil)
	stdout, stderr, status := runCLI(t, "", "send", "--json", "--network", "regtest", "--timeout", "5s", "--peer", node.P2PAddr, "--peer", other.Addr, hexOf(spend))
	var out struct {
		Propagated bool     `json:"propagated"`
		RestsOn    *string  `json:"propagation_rests_on"`
		Warnings   []string `json:"warnings"`
	}
	// Two addresses of one node: propagation rests on the word of the
	// one not given it, which the result must say, and nothing else.
	if status != exitOK || json.Unmarshal([]byte(stdout), &out) != nil || !out.Propagated || out.RestsOn == nil ||
		len(out.Warnings) != 1 || !hasWarning(out.Warnings, "propagation rests on one peer's word", *out.RestsOn) {
		t.Fatalf("the witness spend: status %d, stdout %q, stderr %q: want it propagated, resting on one peer's word", status, stdout, stderr)
	}
	block := node.Confirm(t, spend)
	got, err := node.RPC().GetBlock(block)
	if err != nil || len(got.Transactions) != 2 || got.Transactions[1].WitnessHash() != spend.WitnessHash() {
		t.Fatalf("mined: %v, %+v", err, got)
	}

	fund2 := node.SpendCoinbase(t, wire.NewTxOut(2_000_000, alice.P2WPKHScript()))
	node.Confirm(t, fund2)
	first := peertest.BuildSpend(t, []peertest.Output{peertest.OutputOf(fund2, 0, alice)}, wire.NewTxOut(2_000_000-peertest.Fee, bob.PkScript()))
	if _, stderr, status := runCLI(t, "", "send", "--network", "regtest", "--timeout", "5s", "--peer", node.P2PAddr, hexOf(first)); status != exitOK {
		t.Fatalf("the first spend: status %d, stderr %q", status, stderr)
	}
	double := peertest.BuildSpend(t, []peertest.Output{peertest.OutputOf(fund2, 0, alice)}, wire.NewTxOut(2_000_000-2*peertest.Fee, alice.PkScript()))
	start := time.Now()
	_, stderr, status = runCLI(t, "", "send", "--network", "regtest", "--timeout", "5s", "--peer", node.P2PAddr, hexOf(double))
	if status != exitFailure || !strings.Contains(stderr, "already spent") || strings.Count(stderr, "\n") != 1 {
		t.Errorf("the double spend: status %d, stderr %q: want exit 1 with the node's reason", status, stderr)
	}
	t.Logf("the double spend was refused in %v", time.Since(start).Round(time.Millisecond))
}

// TestBIP37NamesTheFilteringPeer: with several peers, a BIP 37 scan's
// "peer" is the node that filtered, the one its warning names.
func TestBIP37NamesTheFilteringPeer(t *testing.T) {
	node := peertest.StartBtcd(t, peertest.WithArgs("--nobanning"))
	node.Generate(t, 20)
	peers := []string{peertest.NewLiar(t, node.P2PAddr, node.Params.Net, nil).Addr, peertest.NewLiar(t, node.P2PAddr, node.Params.Net, nil).Addr, node.P2PAddr}
	seen := map[string]bool{}
	for i := 0; i < 6; i++ {
		args := []string{"scan", "--json", "--network", "regtest", "--mode", "bip37", "--watch", peertest.NewKey("alice").Address(node.Params).EncodeAddress()}
		for _, p := range peers {
			args = append(args, "--peer", p)
		}
		stdout, stderr, status := runCLI(t, "", args...)
		var out struct {
			Peer     string   `json:"filtering_peer"`
			Warnings []string `json:"warnings"`
		}
		if status != exitOK || json.Unmarshal([]byte(stdout), &out) != nil {
			t.Fatalf("status %d, stdout %q, stderr %q", status, stdout, stderr)
		}
		if !slices.Contains(peers, out.Peer) || !hasWarning(out.Warnings, "rests on one peer, --peer "+out.Peer+",") {
			t.Fatalf("peer %q, warnings %q", out.Peer, out.Warnings)
		}
		seen[out.Peer] = true
	}
	t.Logf("%d different filtering peers in 6 scans", len(seen))
}

// TestScanDamagedCache: a filter cache truncated to half (which crashed
// the process with SIGBUS before) is set aside with a warning naming it,
// and the scan finds the same transactions, every later run too.
func TestScanDamagedCache(t *testing.T) {
	node := peertest.StartBtcd(t, peertest.WithArgs("--nobanning"))
	node.Generate(t, 101)
	alice := peertest.NewKey("alice")
	pay := node.SpendCoinbase(t, wire.NewTxOut(10_000_000, alice.PkScript()))
	node.Confirm(t, pay)
	node.Generate(t, 5)
	dir := t.TempDir()
	scan := func() scanOutput {
		t.Helper()
		stdout, stderr, status := runCLI(t, "", "scan", "--json", "--network", "regtest", "--datadir", dir, "--peer", node.P2PAddr,
			"--watch", alice.Address(node.Params).EncodeAddress())
		var out scanOutput
		if status != exitOK || json.Unmarshal([]byte(stdout), &out) != nil {
			t.Fatalf("status %d, stdout %q, stderr %q", status, stdout, stderr)
		}
		if len(out.Matches) != 1 || out.Matches[0].Txid != pay.TxHash().String() {
			t.Fatalf("matches %+v, want the payment", out.Matches)
		}
		return out
	}
	scan()
	cache := filepath.Join(dir, "regtest", "filters", "cache.db")
	st, err := os.Stat(cache)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(cache, st.Size()/2); err != nil {
		t.Fatal(err)
	}
	out := scan()
	if !hasWarning(out.Warnings, "cache.db") {
		t.Errorf("warnings %q do not name the damaged cache", out.Warnings)
	}
	scan()
}

// TestPeersCommand: the liar a scan banned is listed among the bans of the
// data directory, with its reason, in a later peers run; --peer and
// --connect are exclusive, and regtest, with no DNS seeds, needs one.
func TestPeersCommand(t *testing.T) {
	dir, liar, honest, alice := liarBannedDir(t, "--connect")
	stdout, stderr, status := runCLI(t, "", "peers", "--json", "--network", "regtest", "--datadir", dir, "--connect", honest.Addr, "--connect", liar.Addr)
	var out struct {
		Peers []struct {
			Address string `json:"address"`
			Banned  bool   `json:"banned"`
			Tip     int32  `json:"tip"`
		} `json:"peers"`
		Bans []struct {
			Host   string `json:"host"`
			Reason string `json:"reason"`
		} `json:"bans"`
	}
	if status != exitOK || json.Unmarshal([]byte(stdout), &out) != nil {
		t.Fatalf("peers: status %d, stdout %q, stderr %q", status, stdout, stderr)
	}
	if len(out.Bans) != 1 || out.Bans[0].Host != liar.Addr || !strings.Contains(out.Bans[0].Reason, "proves it false") {
		t.Errorf("bans %+v, want the liar's", out.Bans)
	}
	if len(out.Peers) != 2 || out.Peers[0].Banned || out.Peers[0].Tip != 105 || !out.Peers[1].Banned {
		t.Errorf("peers %+v", out.Peers)
	}
	for _, args := range [][]string{
		{"peers", "--network", "regtest"},
		{"peers", "--network", "regtest", "--peer", honest.Addr, "--connect", honest.Addr},
		{"scan", "--network", "regtest", "--watch", alice},
		{"peers", "--network", "regtest", "--connect", honest.Addr, "--proxy", "http://127.0.0.1:1"},
	} {
		if _, stderr, status := runCLI(t, "", args...); status != exitBadInput || strings.Count(stderr, "\n") != 1 {
			t.Errorf("%q: status %d, stderr %q", args, status, stderr)
		}
	}
}
