package peertest

import (
	"slices"
	"testing"

	"github.com/btcsuite/btcd/txscript"
	"github.com/btcsuite/btcd/wire"
)

// TestWalletChainSpec: each shape's wallet has its scripts, half of them
// change, and acts in WalletBlocks distinct rounds of the chain, never
// spending more than it was paid.
func TestWalletChainSpec(t *testing.T) {
	for _, shape := range []WalletChain{ShortWalletChain, LongWalletChain, {Blocks: 170, WalletBlocks: 6, Scripts: 4}} {
		mature, spec := shape.Spec("spec")
		if mature+spec.Rounds != shape.Blocks {
			t.Errorf("%+v: %d blocks mined", shape, mature+spec.Rounds)
		}
		w := spec.Wallets[0]
		distinct := map[*Key]bool{}
		for _, k := range slices.Concat(w.Receive, w.Change) {
			distinct[k] = true
		}
		if len(distinct) != shape.Scripts || len(w.Change) != shape.Scripts/2 {
			t.Errorf("%+v: %d keys, %d change", shape, len(distinct), len(w.Change))
		}
		events, held := 0, 0
		for r := range spec.Rounds {
			es := spec.Events[r]
			if len(es) > 1 {
				t.Errorf("%+v: round %d holds %d events", shape, r, len(es))
			}
			for _, e := range es {
				events++
				if held += map[bool]int{true: -1, false: 1}[e.Spend]; held < 0 {
					t.Fatalf("%+v: round %d spends what the wallet was not paid", shape, r)
				}
			}
		}
		if events != shape.WalletBlocks || len(spec.Events) != shape.WalletBlocks {
			t.Errorf("%+v: %d events in %d rounds", shape, events, len(spec.Events))
		}
	}
}

// TestBuildLabelledChain: on a real node, the wallet's scripts are the
// ones the shape asks for, they appear in exactly WalletBlocks blocks,
// and each of those blocks pays one of them.
func TestBuildLabelledChain(t *testing.T) {
	shape := WalletChain{Blocks: 170, WalletBlocks: 6, Scripts: 4}
	n := StartBtcd(t)
	mature, spec := shape.Spec("labelled test")
	n.Generate(t, mature)
	chain := BuildLabelledChain(t, n, spec)
	if chain.Tip != int32(shape.Blocks) || chain.Start != int32(mature+1) {
		t.Fatalf("rounds %d..%d, want %d..%d", chain.Start, chain.Tip, mature+1, shape.Blocks)
	}
	w := chain.Wallets[0]
	if len(w.Scripts) != shape.Scripts || w.Birth != chain.Start {
		t.Fatalf("%d scripts, birth %d", len(w.Scripts), w.Birth)
	}
	heights := map[int32]bool{}
	for _, a := range w.Scripts {
		for _, h := range chain.Heights[a] {
			heights[h] = true
		}
	}
	if len(heights) != shape.WalletBlocks {
		t.Fatalf("the wallet's scripts appear in %d blocks, want %d", len(heights), shape.WalletBlocks)
	}
	for h := range heights {
		hash, err := n.RPC().GetBlockHash(int64(h))
		if err != nil {
			t.Fatal(err)
		}
		b, err := n.RPC().GetBlock(hash)
		if err != nil {
			t.Fatal(err)
		}
		pays := false
		for _, tx := range b.Transactions {
			for _, out := range tx.TxOut {
				_, addrs, _, _ := txscript.ExtractPkScriptAddrs(out.PkScript, n.Params)
				pays = pays || len(addrs) == 1 && slices.Contains(w.Scripts, addrs[0].EncodeAddress())
			}
		}
		if !pays {
			t.Errorf("block %d pays none of the wallet's scripts", h)
		}
	}
}

// TestFundFromBank: once no coinbase can pay a round, the bank pays it,
// its change funding the next round; the outputs asked for keep their
// indexes.
func TestFundFromBank(t *testing.T) {
	n := StartBtcd(t)
	n.Generate(t, 101)
	bank := NewKey("bank test")
	fill := n.SpendCoinbase(t, wire.NewTxOut(3*payeeValue+2*Fee, bank.PkScript()))
	n.Confirm(t, fill)
	n.mu.Lock()
	for h := range int64(200) { // every coinbase spent
		n.spent[h] = true
	}
	n.mu.Unlock()
	payee := NewKey("bank test payee")
	if _, err := n.SpendCoinbaseErr(wire.NewTxOut(payeeValue, payee.PkScript())); err == nil {
		t.Fatal("a coinbase was left to spend")
	}
	b := &labelledBuilder{t: t, node: n, bank: []Output{OutputOf(fill, 0, bank)}}
	prev := fill.TxHash()
	for round := range 2 {
		tx := b.fund(wire.NewTxOut(payeeValue, payee.PkScript()))
		if tx.TxIn[0].PreviousOutPoint.Hash != prev || string(tx.TxOut[0].PkScript) != string(payee.PkScript()) {
			t.Fatalf("round %d: not paid from the bank's last output to the payee first", round)
		}
		n.Confirm(t, tx)
		prev = tx.TxHash()
	}
	if got := b.bank[0].Value; got != payeeValue {
		t.Fatalf("the bank holds %d after two rounds, want %d", got, payeeValue)
	}
}
