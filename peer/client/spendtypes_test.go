package client

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/btcsuite/btcd/wire"
	"github.com/spvfilter/spvfilter/peer/peertest"
)

// spendTypes is a chain where alice is paid on four script types at
// height 501 and each output is spent later: P2PKH and P2WPKH at 502
// (the spends reveal her key), P2PK at 503 and P2TR at 504 (they reveal
// nothing); at 505 she is paid and spends the payment in the same block.
type spendTypes struct {
	node    *peertest.Node
	scripts [][]byte // P2PKH, P2WPKH, P2PK, P2TR
	fund    *wire.MsgTx
	spends  []*wire.MsgTx // of output i of fund
	fund2   *wire.MsgTx
	spend2  *wire.MsgTx
	heights map[chainhash.Hash]int32
}

func newSpendTypes(t *testing.T) *spendTypes {
	t.Helper()
	node := peertest.StartBtcd(t, peertest.WithArgs("--nobanning"))
	// Segwit and taproot activate on regtest after three 144-block
	// signalling windows.
	node.Generate(t, 500)
	alice, bob := peertest.NewKey("alice"), peertest.NewKey("bob")
	s := &spendTypes{node: node, heights: map[chainhash.Hash]int32{},
		scripts: [][]byte{alice.PkScript(), alice.P2WPKHScript(), alice.P2PKScript(), alice.P2TRScript()}}
	var outs []*wire.TxOut
	for _, sc := range s.scripts {
		outs = append(outs, wire.NewTxOut(10_000_000, sc))
	}
	s.fund = node.SpendCoinbase(t, outs...)
	confirm := func(txs ...*wire.MsgTx) {
		hash := node.Confirm(t, txs...)
		b, err := node.RPC().GetBlockVerbose(hash)
		if err != nil {
			t.Fatal(err)
		}
		for _, tx := range txs {
			s.heights[tx.TxHash()] = int32(b.Height)
		}
	}
	confirm(s.fund)
	spend := func(i uint32) *wire.MsgTx {
		return node.Spend(t, []peertest.Output{peertest.OutputOf(s.fund, i, alice)}, wire.NewTxOut(10_000_000-peertest.Fee, bob.PkScript()))
	}
	s.spends = []*wire.MsgTx{spend(0), spend(1)}
	confirm(s.spends...)
	s.spends = append(s.spends, spend(2))
	confirm(s.spends[2])
	s.spends = append(s.spends, spend(3))
	confirm(s.spends[3])
	s.fund2 = node.SpendCoinbase(t, wire.NewTxOut(5_000_000, alice.PkScript()))
	s.spend2 = node.Spend(t, []peertest.Output{peertest.OutputOf(s.fund2, 0, alice)}, wire.NewTxOut(5_000_000-peertest.Fee, bob.PkScript()))
	confirm(s.fund2, s.spend2)
	node.Generate(t, 2)
	return s
}

// found maps each transaction that involves a watch item to its items.
func found(res *ScanResult) map[chainhash.Hash][]int {
	m := map[chainhash.Hash][]int{}
	for _, x := range res.Matches {
		if !x.FalsePositive {
			items := slices.Clone(x.WatchItems)
			slices.Sort(items)
			m[x.Txid] = items
		}
	}
	return m
}

func TestSpendTypes(t *testing.T) {
	s := newSpendTypes(t)
	c, err := Connect(context.Background(), Config{Peers: []string{s.node.P2PAddr}, Params: s.node.Params})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.SyncHeaders(context.Background()); err != nil {
		t.Fatal(err)
	}
	tip := c.Chain().Height()
	scriptItems := items(s.scripts)
	// The four outputs as outpoints, with their scripts.
	var outpoints []WatchItem
	for i, sc := range s.scripts {
		outpoints = append(outpoints, OutPointItem(wire.OutPoint{Hash: s.fund.TxHash(), Index: uint32(i)}, sc))
	}
	all := map[chainhash.Hash][]int{
		s.fund.TxHash(): {0, 1, 2, 3}, s.spends[0].TxHash(): {0}, s.spends[1].TxHash(): {1},
		s.spends[2].TxHash(): {2}, s.spends[3].TxHash(): {3}, s.fund2.TxHash(): {0}, s.spend2.TxHash(): {0},
	}
	fromSpends := map[chainhash.Hash][]int{
		s.spends[0].TxHash(): {0}, s.spends[1].TxHash(): {1}, s.fund2.TxHash(): {0}, s.spend2.TxHash(): {0},
	}
	tests := []struct {
		name      string
		mode      string
		flags     wire.BloomUpdateType
		watch     []WatchItem
		from      int32
		want      map[chainhash.Hash][]int
		spendOnly []int32
		fpBlocks  int
	}{
		{"bip157 whole chain", "bip157", 0, scriptItems, 0, all, nil, 0},
		// The P2PK and P2TR spends reveal nothing: their blocks are named,
		// never counted as false positives.
		{"bip157 after the funding", "bip157", 0, scriptItems, 502, fromSpends, []int32{503, 504}, 0},
		// As outpoints they are found, each attributed to its own item.
		// Block 505 pays alice's P2PKH script, which only the outpoint
		// items carry: fetched, and no outpoint of the watch list in it.
		{"bip157 outpoints after the funding", "bip157", 0, outpoints, 502, map[chainhash.Hash][]int{
			s.spends[0].TxHash(): {0}, s.spends[1].TxHash(): {1}, s.spends[2].TxHash(): {2}, s.spends[3].TxHash(): {3},
		}, nil, 1},
		{"bip37 all", "bip37", wire.BloomUpdateAll, scriptItems, 0, all, nil, 0},
		{"bip37 none", "bip37", wire.BloomUpdateNone, scriptItems, 0, all, nil, 0},
		{"bip37 p2pubkey-only", "bip37", wire.BloomUpdateP2PubkeyOnly, scriptItems, 0, all, nil, 0},
		{"bip37 outpoints after the funding", "bip37", wire.BloomUpdateAll, outpoints, 502, map[chainhash.Hash][]int{
			s.spends[0].TxHash(): {0}, s.spends[1].TxHash(): {1}, s.spends[2].TxHash(): {2}, s.spends[3].TxHash(): {3},
		}, nil, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req := ScanRequest{Watch: tt.watch, From: tt.from, To: tip}
			var res *ScanResult
			var err error
			if tt.mode == "bip37" {
				// The filter matches at its rate (see NewWatchFilter): one
				// of a billion, so that no false positive is counted.
				res, err = c.ScanBIP37(context.Background(), req, BIP37Options{FPRate: 1e-9, Flags: tt.flags})
			} else {
				res, err = c.ScanBIP157(context.Background(), req)
			}
			if err != nil {
				t.Fatal(err)
			}
			got := found(res)
			if fmt.Sprint(got) != fmt.Sprint(tt.want) {
				for id, items := range got {
					t.Logf("got %v at %d: %v", id, s.heights[id], items)
				}
				t.Fatalf("found %v, want %v", got, tt.want)
			}
			if !slices.Equal(res.SpendOnlyBlocks, tt.spendOnly) || res.FalsePositiveBlocks != tt.fpBlocks {
				t.Errorf("spend-only blocks %v (want %v), false-positive blocks %d (want %d)",
					res.SpendOnlyBlocks, tt.spendOnly, res.FalsePositiveBlocks, tt.fpBlocks)
			}
		})
	}
}
