package client

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/btcsuite/btcd/wire"
	"github.com/spvfilter/spvfilter/peer/peertest"
)

// reorgChain starts a node of its own with alice paid at height 105 of a
// 110-block chain.
func reorgChain(t *testing.T) (*peertest.Node, *peertest.Key, *wire.MsgTx) {
	t.Helper()
	node := peertest.StartBtcd(t, peertest.WithArgs("--nobanning"))
	node.Generate(t, 104)
	alice := peertest.NewKey("alice")
	pay := node.SpendCoinbase(t, wire.NewTxOut(40_000_000, alice.PkScript()))
	node.Confirm(t, pay)
	node.Generate(t, 5)
	return node, alice, pay
}

// reorganize replaces the node's blocks from height 105 with a longer
// branch; the payment returns to the mempool and is mined again in it.
func reorganize(t testing.TB, node *peertest.Node) {
	hash, err := node.RPC().GetBlockHash(105)
	if err == nil {
		err = node.RPC().InvalidateBlock(hash)
	}
	if err == nil {
		_, err = node.GenerateErr(10)
	}
	if err != nil {
		t.Errorf("reorganizing: %v", err)
	}
}

// checkReorgResult checks a scan on the new chain: the payment at its new
// height in a block of the new chain, the old blocks listed, nobody blamed.
func checkReorgResult(t *testing.T, node *peertest.Node, c *Client, res *ScanResult, pay *wire.MsgTx) {
	t.Helper()
	var got []Match
	for _, m := range res.Matches {
		if !m.FalsePositive {
			got = append(got, m)
		}
	}
	if len(got) != 1 || got[0].Txid != pay.TxHash() {
		t.Fatalf("matches %+v, want the payment only", got)
	}
	best, err := node.RPC().GetBlockHash(int64(got[0].Height))
	if err != nil {
		t.Fatal(err)
	}
	if got[0].BlockHash != *best || c.Chain().Height() != 114 {
		t.Fatalf("payment in block %v at height %d, node's block there is %v; chain height %d", got[0].BlockHash, got[0].Height, best, c.Chain().Height())
	}
	// A redialed peer's bytes add up across its connections.
	if res.BytesReceived == 0 || res.BytesReceived > 1<<30 {
		t.Errorf("bytes received %d", res.BytesReceived)
	}
	if len(res.Disconnected) != 6 {
		t.Errorf("disconnected %d blocks, want 6 (heights 105..110)", len(res.Disconnected))
	}
	for _, st := range res.Peers {
		if st.Banned || st.Reason != "" {
			t.Errorf("an honest node that reorganized was blamed: %+v", st)
		}
	}
}

func scanMode(c *Client, mode string, watch []WatchItem, to int32) (*ScanResult, error) {
	req := ScanRequest{Watch: watch, To: to}
	if mode == "bip37" {
		return c.ScanBIP37(context.Background(), req, BIP37Options{FPRate: 0.0001, Flags: wire.BloomUpdateAll})
	}
	return c.ScanBIP157(context.Background(), req)
}

// TestReorgBeforeScan: the node reorganizes between the header sync and
// the scan, which follows the new chain.
func TestReorgBeforeScan(t *testing.T) {
	for _, mode := range []string{"bip157", "bip37"} {
		t.Run(mode, func(t *testing.T) {
			t.Parallel()
			node, alice, pay := reorgChain(t)
			c := connectTo(t, node, 2*time.Second)
			reorganize(t, node)
			res, err := scanMode(c, mode, []WatchItem{ScriptItem(alice.PkScript())}, 110)
			if err != nil {
				t.Fatal(err)
			}
			checkReorgResult(t, node, c, res, pay)
		})
	}
}

// TestReorgDuringScan: the node reorganizes while it answers the scan's
// first request; the scan starts again on the new chain.
func TestReorgDuringScan(t *testing.T) {
	for _, mode := range []string{"bip157", "bip37"} {
		t.Run(mode, func(t *testing.T) {
			t.Parallel()
			node, alice, pay := reorgChain(t)
			var once sync.Once
			l := peertest.NewLiar(t, node.P2PAddr, node.Params.Net, func(m wire.Message) ([]wire.Message, bool) {
				switch m.(type) {
				case *wire.MsgCFHeaders, *wire.MsgMerkleBlock:
					once.Do(func() { reorganize(t, node) })
				}
				return []wire.Message{m}, false
			})
			c := connectTo(t, node, 2*time.Second, l.Addr)
			res, err := scanMode(c, mode, []WatchItem{ScriptItem(alice.PkScript())}, 110)
			if err != nil {
				t.Fatal(err)
			}
			checkReorgResult(t, node, c, res, pay)
			if res.Disconnected[0] == (chainhash.Hash{}) {
				t.Error("zero hash among the disconnected blocks")
			}
		})
	}
}
