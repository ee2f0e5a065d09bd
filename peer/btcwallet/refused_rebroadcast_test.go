package btcwallet

import (
	"context"
	"testing"
	"time"

	"github.com/btcsuite/btcd/btcutil"
	"github.com/btcsuite/btcd/wire"
	"github.com/spvfilter/spvfilter/peer/peertest"
)

// refusedWait is how long a test gives the rebroadcast at a new block to
// drop a transaction.
const refusedWait = 30 * time.Second

// TestRefusedRebroadcastDropped: the wallet's transaction is taken by its
// node, then the client's only peer is a btcd that holds a conflicting
// spend of the same coinbase in its mempool. At the next block (without
// either) the rebroadcast is refused with a reject ("output already spent
// in mempool") and no peer holds the transaction: it is no longer sent.
func TestRefusedRebroadcastDropped(t *testing.T) {
	a := peertest.StartBtcd(t, peertest.WithArgs("--nobanning"))
	a.Generate(t, 110)
	other := peertest.CopyChain(t, a, peertest.WithArgs("--nobanning"))
	miner := peertest.CopyChain(t, a)
	c, b, k := startBackendOn(t, a.Params, a.P2PAddr)
	alice, bob := peertest.NewKey("alice"), peertest.NewKey("bob")
	if err := b.NotifyReceived([]btcutil.Address{addressOf(t, alice.PkScript(), a.Params)}); err != nil {
		t.Fatal(err)
	}
	tx := a.BuildCoinbaseSpend(t, wire.NewTxOut(30_000_000, alice.PkScript()))
	if _, err := b.SendRawTransaction(tx, false); err != nil {
		t.Fatal(err)
	}
	conflict := peertest.BuildSpend(t, []peertest.Output{coinbaseSpent(tx, a.MinerKey)},
		wire.NewTxOut(20_000_000, bob.PkScript()))
	if _, err := other.RPC().SendRawTransaction(conflict, true); err != nil {
		t.Fatalf("premise: the other node takes the conflicting spend: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
	defer cancel()
	if err := c.AddPeer(ctx, other.P2PAddr, true); err != nil {
		t.Fatal(err)
	}
	if err := c.RemovePeer(a.P2PAddr); err != nil {
		t.Fatal(err)
	}
	miner.Generate(t, 1) // 111, empty
	other.CopyBlocks(t, miner, 111)
	if !other.InMempool(t, conflict.TxHash()) || other.InMempool(t, tx.TxHash()) {
		t.Fatal("premise: the peer holds the conflicting spend, not the wallet's transaction")
	}
	waitFor(t, "block 111", waitLimit, func() (bool, string) { return k.has(connectedAt(111)), "not connected" })
	waitFor(t, "the refused transaction dropped", refusedWait, func() (bool, string) {
		return len(b.unmined.list()) == 0, "still sent again at each block"
	})
	if other.InMempool(t, tx.TxHash()) {
		t.Error("the peer took the wallet's transaction beside its conflict")
	}
}

// TestConflictMinedDropsRebroadcast: a block holds another spend of the
// output the wallet's unmined transaction spends (the wallet's outpoint,
// watched by its rescan). btcd sends no reject for the transaction sent
// again (it keeps it as an orphan), and it can never be mined: it is no
// longer sent, from the block that spends its input.
func TestConflictMinedDropsRebroadcast(t *testing.T) {
	a := peertest.StartBtcd(t, peertest.WithArgs("--nobanning"))
	a.Generate(t, 110)
	alice, bob, carol := peertest.NewKey("alice"), peertest.NewKey("bob"), peertest.NewKey("carol")
	const paid = 30_000_000
	pay := a.SpendCoinbase(t, wire.NewTxOut(paid, alice.PkScript()))
	payBlock := a.Confirm(t, pay) // 111
	miner := peertest.CopyChain(t, a)
	_, b, k := startBackendOn(t, a.Params, a.P2PAddr)
	aliceAddr := addressOf(t, alice.PkScript(), a.Params)
	coin := peertest.OutputOf(pay, 0, alice)
	if err := b.Rescan(payBlock, []btcutil.Address{aliceAddr}, map[wire.OutPoint]btcutil.Address{coin.OutPoint: aliceAddr}); err != nil {
		t.Fatal(err)
	}
	tx := peertest.BuildSpend(t, []peertest.Output{coin}, wire.NewTxOut(paid-peertest.Fee, bob.PkScript()))
	if _, err := b.SendRawTransaction(tx, false); err != nil {
		t.Fatal(err)
	}
	conflict := peertest.BuildSpend(t, []peertest.Output{coin}, wire.NewTxOut(paid-2*peertest.Fee, carol.PkScript()))
	if _, err := miner.RPC().SendRawTransaction(conflict, true); err != nil {
		t.Fatalf("premise: the miner takes the conflicting spend: %v", err)
	}
	miner.Confirm(t, conflict) // 112
	a.CopyBlocks(t, miner, 112)
	if a.InMempool(t, tx.TxHash()) {
		t.Fatal("premise: the node dropped the wallet's transaction, its input spent by block 112")
	}
	waitFor(t, "block 112", waitLimit, func() (bool, string) { return k.has(connectedAt(112)), "not connected" })
	waitFor(t, "the double-spent transaction dropped", refusedWait, func() (bool, string) {
		return len(b.unmined.list()) == 0, "still sent again at each block"
	})
}

// coinbaseSpent is the coinbase output tx (made by BuildCoinbaseSpend)
// spends: its outputs and the fee add up to the coinbase's value.
func coinbaseSpent(tx *wire.MsgTx, key *peertest.Key) peertest.Output {
	value := int64(peertest.Fee)
	for _, o := range tx.TxOut {
		value += o.Value
	}
	return peertest.Output{OutPoint: tx.TxIn[0].PreviousOutPoint, Value: value, Key: key}
}
