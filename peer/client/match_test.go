package client

import (
	"context"
	"testing"

	"github.com/btcsuite/btcd/wire"
	"github.com/spvfilter/spvfilter/peer/peertest"
)

// TestMatchPositionAndSpends: in both scan modes, every match names its
// transaction's position in its block, as btcd's block holds it, and the
// inputs that spend a watched output: alice's spend at 108 (found by the
// outpoint of her payment at 102), carol's (found by the outpoint of her
// payment at 109).
func TestMatchPositionAndSpends(t *testing.T) {
	needFixture(t)
	c := connect(t, 0)
	req := ScanRequest{Watch: items(fx.watch), From: 0, To: fx.tip}
	for _, mode := range []string{"bip157", "bip37"} {
		var res *ScanResult
		var err error
		if mode == "bip37" {
			res, err = c.ScanBIP37(context.Background(), req, BIP37Options{FPRate: 0.0001, Flags: wire.BloomUpdateAll})
		} else {
			res, err = c.ScanBIP157(context.Background(), req)
		}
		if err != nil {
			t.Fatal(err)
		}
		spends := map[string]bool{}
		for _, m := range res.Matches {
			if m.FalsePositive {
				continue
			}
			b, err := fx.node.RPC().GetBlock(&m.BlockHash)
			if err != nil {
				t.Fatal(err)
			}
			if m.TxIndex < 0 || m.TxIndex >= len(b.Transactions) || b.Transactions[m.TxIndex].TxHash() != m.Txid {
				t.Errorf("%s: %v at height %d: position %d is not its place in the block", mode, m.Txid, m.Height, m.TxIndex)
			}
			for _, s := range m.Spends {
				if s.Input >= len(m.Tx.TxIn) || m.Tx.TxIn[s.Input].PreviousOutPoint != s.OutPoint || len(s.Items) == 0 {
					t.Errorf("%s: %v: spend %+v is not one of its inputs", mode, m.Txid, s)
				}
				spends[m.Txid.String()+s.OutPoint.String()] = true
			}
		}
		for _, want := range []struct {
			tx *wire.MsgTx
			op wire.OutPoint
		}{
			{fx.spendAlice, wire.OutPoint{Hash: fx.fundAlice.TxHash(), Index: 0}},
			{fx.spendCarol, wire.OutPoint{Hash: fx.fundCarol.TxHash(), Index: 0}},
		} {
			if !spends[want.tx.TxHash().String()+want.op.String()] {
				t.Errorf("%s: the spend of %v by %v is not named", mode, want.op, want.tx.TxHash())
			}
		}
	}
}

// TestGetUtxoTo: GetUtxo searches up to its end height: alice's output
// is unspent up to the block before her spend, spent at it.
func TestGetUtxoTo(t *testing.T) {
	needFixture(t)
	c := connect(t, 0)
	op := wire.OutPoint{Hash: fx.fundAlice.TxHash(), Index: 0}
	spentAt := fx.height[fx.spendAlice.TxHash()]
	for _, tt := range []struct {
		to    int32
		spent bool
	}{{spentAt - 1, false}, {spentAt, true}, {0, true}} {
		rep, err := c.GetUtxo(context.Background(), UtxoRequest{OutPoint: op, Script: peertest.NewKey("alice").PkScript(), From: 100, To: tt.to})
		if err != nil {
			t.Fatal(err)
		}
		want := tt.to
		if want <= 0 {
			want = fx.tip
		}
		if rep.Output == nil || rep.To != want || (rep.SpentBy != nil) != tt.spent || tt.spent && (rep.SpendHeight != spentAt || rep.SpendInput != 0) {
			t.Errorf("to %d: %+v", tt.to, rep)
		}
	}
}
