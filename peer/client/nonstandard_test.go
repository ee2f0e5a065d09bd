package client

import (
	"bytes"
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/btcsuite/btcd/btcutil"
	"github.com/btcsuite/btcd/txscript"
	"github.com/btcsuite/btcd/wire"
	"github.com/spvfilter/spvfilter/gcs"
	"github.com/spvfilter/spvfilter/peer/peertest"
)

// TestNonStandardSpendBansNobody: an output OP_DROP OP_TRUE (no standard
// type), paid and then spent with OP_1 pushed, which btcd relays and
// mines on regtest (a miner may mine it on any network). The spend looks
// like the P2SH spend of the redeem script OP_TRUE, so the block favours,
// if the outputs spent were standard, a liar whose filter holds P2SH(OP_TRUE)
// in place of the true script, against the honest peer's. That is no
// proof: nobody is banned and nothing is written to the data directory;
// the conflict is named, its warning saying which side the block favours
// if the spent output was standard; the block is scanned whole, so the
// spend is found; and the next run with the honest peer alone, the user's
// own, uses it. (Before, the block "proved" the honest filter false: the
// honest node was banned on disk and replaced by the liar, the spend
// missed.)
func TestNonStandardSpendBansNobody(t *testing.T) {
	n := peertest.StartBtcd(t, peertest.WithArgs("--nobanning", "--txindex"))
	n.Generate(t, 110)
	odd := []byte{txscript.OP_DROP, txscript.OP_TRUE}
	pay := n.SpendCoinbase(t, wire.NewTxOut(1_000_000, odd))
	n.Confirm(t, pay)
	sp := wire.NewMsgTx(2)
	sp.AddTxIn(wire.NewTxIn(&wire.OutPoint{Hash: pay.TxHash()}, []byte{txscript.OP_DATA_1, txscript.OP_TRUE}, nil))
	sp.AddTxOut(wire.NewTxOut(1_000_000-peertest.Fee, peertest.NewKey("payee").P2WPKHScript()))
	if _, err := n.RPC().SendRawTransaction(sp, true); err != nil {
		t.Fatalf("btcd refuses the spend of a non-standard output: %v", err)
	}
	hash := n.Confirm(t, sp)
	b, err := n.RPC().GetBlockVerbose(hash)
	if err != nil {
		t.Fatal(err)
	}
	at := int32(b.Height)
	n.Generate(t, 3)
	fake := append(append([]byte{txscript.OP_HASH160, txscript.OP_DATA_20}, btcutil.Hash160([]byte{txscript.OP_TRUE})...), txscript.OP_EQUAL)
	liar := peertest.NewLiar(t, n.P2PAddr, n.Params.Net, spentInstead(t, n, at, odd, fake)).Addr
	honest := peertest.NewLiar(t, n.P2PAddr, n.Params.Net, nil).Addr
	dir, ctx := t.TempDir(), context.Background()
	c, err := Connect(ctx, Config{Peers: []string{honest, liar}, Params: n.Params, DataDir: dir, ConnectOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	res, err := c.ScanBIP157(ctx, ScanRequest{Watch: []WatchItem{ScriptItem(odd)}, To: -1})
	c.Close()
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range []string{honest, liar} {
		if st := status(t, res, a); st.Banned {
			t.Errorf("%s banned on no proof: %s", a, st.Reason)
		}
	}
	if !hasMatch(res, sp.TxHash()) {
		t.Errorf("the spend at %d is missing", at)
	}
	if len(res.Conflicts) != 1 || res.Conflicts[0].Height != at || !slices.Contains(slices.Concat(res.Conflicts[0].Sides...), honest) {
		t.Errorf("conflicts %+v, want one at %d naming both sides", res.Conflicts, at)
	}
	if !hasWarning(res.Warnings, "cannot decide", "if the outputs they spend were standard, the block favours "+liar, "no proof") {
		t.Errorf("no warning says the block favours the liar only if the spent output was standard: %q", res.Warnings)
	}
	t.Logf("conflicts: %v", res.Conflicts)
	stored, err := ReadStoredPeers(dir, n.Params)
	if err != nil {
		t.Fatal(err)
	}
	if len(stored.Bans) != 0 {
		t.Errorf("bans written to the data directory: %+v", stored.Bans)
	}
	c, err = Connect(ctx, Config{Peers: []string{honest}, Params: n.Params, DataDir: dir, ConnectOnly: true})
	if err != nil {
		t.Fatalf("the next run refuses the user's peer: %v", err)
	}
	defer c.Close()
	res, err = c.ScanBIP157(ctx, ScanRequest{Watch: []WatchItem{ScriptItem(odd)}, To: -1})
	if err != nil {
		t.Fatal(err)
	}
	if !hasMatch(res, sp.TxHash()) || status(t, res, honest).Banned || hasWarning(res.Warnings, "banned") {
		t.Errorf("the next run with the honest peer alone: spend found %v, status %+v, warnings %q",
			hasMatch(res, sp.TxHash()), status(t, res, honest), res.Warnings)
	}
	if strings.Contains(strings.Join(res.Warnings, "\n"), liar) {
		t.Errorf("the next run names the liar: %q", res.Warnings)
	}
}

// spentInstead is a liar's filter of block at: built as BIP 158 builds it
// but with the script spent replaced, wherever an input of the block
// spends it, by instead (so the block shows the lie only as far as
// consensus fixes what its inputs spend). The node needs --txindex.
func spentInstead(t *testing.T, n *peertest.Node, at int32, spent, instead []byte) peertest.LieFunc {
	return peertest.ForgeFilter(t, n, at, func(b *wire.MsgBlock) []byte {
		prevs, err := n.PrevOutScripts(b)
		if err != nil {
			t.Error(err)
			return nil
		}
		for i, p := range prevs {
			if bytes.Equal(p, spent) {
				prevs[i] = instead
			}
		}
		f, err := gcs.BuildBasic(b, prevs)
		if err != nil {
			t.Error(err)
			return nil
		}
		return f.NBytes()
	})
}
