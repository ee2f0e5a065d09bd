package btcwallet

import (
	"testing"
	"time"

	"github.com/btcsuite/btcd/btcutil"
	"github.com/btcsuite/btcd/wire"
	"github.com/spvfilter/spvfilter/peer/peertest"
)

// TestForgedRejectKeepsRebroadcast: one peer answers every transaction
// with a forged reject while the honest node holds it. At the next block
// (without it) the transaction is given again: the liar's reject alone
// must not drop it from the rebroadcast, since another peer holds it.
func TestForgedRejectKeepsRebroadcast(t *testing.T) {
	a := peertest.StartBtcd(t, peertest.WithArgs("--nobanning"))
	a.Generate(t, 110)
	other := peertest.CopyChain(t, a, peertest.WithArgs("--nobanning"))
	liar := peertest.NewEcho(t, other.P2PAddr, a.Params.Net, peertest.EchoRejects("bad-txns-forged"))
	_, b, k := startBackendOn(t, a.Params, a.P2PAddr, liar.Addr)
	alice := peertest.NewKey("alice")
	if err := b.NotifyReceived([]btcutil.Address{addressOf(t, alice.PkScript(), a.Params)}); err != nil {
		t.Fatal(err)
	}
	tx := a.BuildCoinbaseSpend(t, wire.NewTxOut(30_000_000, alice.PkScript()))
	if _, err := b.SendRawTransaction(tx, false); err != nil {
		t.Fatal(err)
	}
	if !a.InMempool(t, tx.TxHash()) || len(b.unmined.list()) != 1 {
		t.Fatal("premise: the honest node holds the transaction and the backend keeps it")
	}
	other.Generate(t, 1) // 111, without it
	waitFor(t, "block 111", waitLimit, func() (bool, string) { return k.has(connectedAt(111)), "not connected" })
	time.Sleep(10 * time.Second) // the rebroadcast at 111
	if len(b.unmined.list()) != 1 {
		t.Errorf("one peer's forged reject stopped the rebroadcast of %v, unmined and held by the honest node", tx.TxHash())
	}
}
