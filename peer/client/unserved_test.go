package client

import (
	"context"
	"slices"
	"sync"
	"testing"

	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/btcsuite/btcd/wire"
	"github.com/spvfilter/spvfilter/peer/peertest"
)

// TestSideUnservedInDisputeIsConflict: a liar's filter of block 112
// leaves out the P2PKH script that block's input spends (the block cannot
// prove that false: consensus does not fix the script a P2PKH-shaped
// input spends), and the honest node's connection drops once, when the
// dispute asks it for that filter. The side that did not serve is still a
// side: the block is a conflict, scanned whole, so the spend is found and
// nobody is banned. (Before, the honest node was dropped and the scan
// took the liar's filter at 112: the spend was missed, with one line
// saying the heights rested on one peer.)
func TestSideUnservedInDisputeIsConflict(t *testing.T) {
	n := peertest.StartBtcd(t, peertest.WithArgs("--nobanning", "--txindex"))
	n.Generate(t, 110)
	alice, bob := peertest.NewKey("alice"), peertest.NewKey("bob")
	pay := n.SpendCoinbase(t, wire.NewTxOut(10_000_000, alice.PkScript()))
	n.Confirm(t, pay) // 111
	spend := n.Spend(t, []peertest.Output{peertest.OutputOf(pay, 0, alice)},
		wire.NewTxOut(10_000_000-peertest.Fee, bob.P2WPKHScript()))
	hash := n.Confirm(t, spend) // 112
	const at = 112
	n.Generate(t, 3)
	liar := peertest.NewLiar(t, n.P2PAddr, n.Params.Net, spentInstead(t, n, at, alice.PkScript(), bob.PkScript())).Addr
	drop := &dropOnce{block: *hash}
	honest := peertest.NewLiar(t, n.P2PAddr, n.Params.Net, drop.lie).Addr
	ctx := context.Background()
	c, err := Connect(ctx, Config{Peers: []string{honest, liar}, Params: n.Params, ConnectOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	res, err := c.ScanBIP157(ctx, ScanRequest{Watch: []WatchItem{ScriptItem(alice.PkScript())}, From: 100, To: -1})
	if err != nil {
		t.Fatal(err)
	}
	if !drop.dropped() {
		t.Fatal("the honest node was never asked for the disputed filter: no dispute took place")
	}
	if !hasMatch(res, spend.TxHash()) {
		t.Errorf("the spend at %d is missing: matches %+v, warnings %q", at, res.Matches, res.Warnings)
	}
	if len(res.Conflicts) != 1 || res.Conflicts[0].Height != at || !slices.Contains(slices.Concat(res.Conflicts[0].Sides...), honest) {
		t.Errorf("conflicts %+v, want one at %d naming the side that did not serve", res.Conflicts, at)
	}
	for _, a := range []string{honest, liar} {
		if st := status(t, res, a); st.Banned {
			t.Errorf("%s banned on no proof: %s", a, st.Reason)
		}
	}
}

// dropOnce hangs up the first time it is asked for the filter of block.
type dropOnce struct {
	block chainhash.Hash
	mu    sync.Mutex
	done  bool
}

func (d *dropOnce) lie(m wire.Message) ([]wire.Message, bool) {
	if f, ok := m.(*wire.MsgCFilter); ok && f.BlockHash == d.block {
		d.mu.Lock()
		defer d.mu.Unlock()
		if !d.done {
			d.done = true
			return nil, true
		}
	}
	return []wire.Message{m}, false
}

func (d *dropOnce) dropped() bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.done
}
