package peer

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/btcsuite/btcd/wire"
	"github.com/spvfilter/spvfilter/peer/peertest"
)

// TestWitnessBroadcast: spends of P2WPKH and P2TR outputs reach the
// node's mempool with their witness and are mined. A client that does not
// advertise NODE_WITNESS is asked for the transaction without it, and the
// node's reject says why at once (before, every Broadcast advertised no
// service and such a spend failed after the timeout, without a reason).
func TestWitnessBroadcast(t *testing.T) {
	needFixture(t)
	alice, bob := fx.alice, peertest.NewKey("bob")
	scripts := [][]byte{alice.P2WPKHScript(), alice.P2TRScript(), alice.P2WPKHScript()}
	var outs []*wire.TxOut
	for _, s := range scripts {
		outs = append(outs, wire.NewTxOut(1_000_000, s))
	}
	fund := fx.node.SpendCoinbase(t, outs...)
	fx.confirm(t, fund)
	const timeout = 10 * time.Second
	tests := []struct {
		name     string
		vout     uint32
		services wire.ServiceFlag
		kind     RejectKind // zero: accepted
	}{
		{"P2WPKH", 0, 0, 0},
		{"P2TR", 1, 0, 0},
		{"P2WPKH without NODE_WITNESS advertised", 2, wire.SFNodeBloom, RejectInvalid},
	}
	var mined []*wire.MsgTx
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			spend := peertest.BuildSpend(t, []peertest.Output{peertest.OutputOf(fund, tt.vout, alice)},
				wire.NewTxOut(1_000_000-peertest.Fee, bob.PkScript()))
			if !spend.HasWitness() {
				t.Fatal("the spend has no witness")
			}
			p, err := Dial(context.Background(), Config{Addr: fx.node.P2PAddr, Params: fx.node.Params, Timeout: timeout, Services: tt.services})
			if err != nil {
				t.Fatal(err)
			}
			defer p.Close()
			start := time.Now()
			err = p.Broadcast(context.Background(), spend)
			elapsed := time.Since(start)
			if tt.kind == 0 {
				if err != nil || !fx.node.InMempool(t, spend.TxHash()) {
					t.Fatalf("broadcast: %v; in the mempool: %t", err, fx.node.InMempool(t, spend.TxHash()))
				}
				mined = append(mined, spend)
				return
			}
			checkPeerError(t, err, fx.node.P2PAddr, ErrRejected)
			var re *RejectError
			if !errors.As(err, &re) || re.Kind != tt.kind || re.Hash != spend.TxHash() || re.Command != wire.CmdTx || re.Peer != fx.node.P2PAddr {
				t.Fatalf("error %v: want a RejectError of kind %v for %v", err, tt.kind, spend.TxHash())
			}
			t.Logf("%v after %v", err, elapsed.Round(time.Millisecond))
			if elapsed > timeout/2 || fx.node.InMempool(t, spend.TxHash()) {
				t.Fatalf("rejected after %v (timeout %v); in the mempool: %t", elapsed, timeout, fx.node.InMempool(t, spend.TxHash()))
			}
		})
	}
	fx.confirm(t, mined...)
}

// TestDoubleSpendRejected: a transaction spending what a mempool
// transaction spends is rejected by btcd (REJECT_DUPLICATE, "output
// already spent in mempool"), and Broadcast says so at once.
func TestDoubleSpendRejected(t *testing.T) {
	needFixture(t)
	alice := fx.alice
	fund := fx.node.SpendCoinbase(t, wire.NewTxOut(2_000_000, alice.P2WPKHScript()))
	fx.confirm(t, fund)
	in := []peertest.Output{peertest.OutputOf(fund, 0, alice)}
	first := peertest.BuildSpend(t, in, wire.NewTxOut(2_000_000-peertest.Fee, peertest.NewKey("bob").PkScript()))
	second := peertest.BuildSpend(t, in, wire.NewTxOut(2_000_000-2*peertest.Fee, peertest.NewKey("carol").PkScript()))
	const timeout = 10 * time.Second
	p := dial(t, fx.node.P2PAddr, timeout)
	if err := p.Broadcast(context.Background(), first); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	err := p.Broadcast(context.Background(), second)
	elapsed := time.Since(start)
	checkPeerError(t, err, fx.node.P2PAddr, ErrRejected)
	var re *RejectError
	if !errors.As(err, &re) || re.Kind != RejectInvalid || re.Code != wire.RejectDuplicate || !strings.Contains(re.Reason, "already spent") {
		t.Fatalf("error %v: want a RejectError, invalid, REJECT_DUPLICATE, already spent", err)
	}
	t.Logf("%v after %v", err, elapsed.Round(time.Millisecond))
	if elapsed > timeout/2 {
		t.Fatalf("rejected after %v with a timeout of %v", elapsed, timeout)
	}
	// The connection is still good.
	if has, err := p.HasTx(context.Background(), first.TxHash()); err != nil || !has {
		t.Fatalf("after the reject: HasTx %v, %v", has, err)
	}
	fx.confirm(t, first)
}

// TestClassifyReject holds the reject codes and reasons btcd v0.24.2
// sends for transactions (mempool package) to their kinds.
func TestClassifyReject(t *testing.T) {
	tests := []struct {
		code   wire.RejectCode
		reason string
		want   RejectKind
	}{
		{wire.RejectDuplicate, "already have transaction in mempool 4a5e1e4b", RejectAlreadyInMempool},
		{wire.RejectDuplicate, "transaction already exists in blockchain", RejectAlreadyConfirmed},
		{wire.RejectDuplicate, "output already spent in mempool: output=4a5e:0, tx=9b1c", RejectInvalid},
		{wire.RejectDuplicate, "orphan transaction 4a5e references outputs of unknown or fully-spent transaction 9b1c", RejectInvalid},
		{wire.RejectDuplicate, "txn-mempool-conflict", RejectInvalid},
		{wire.RejectDuplicate, "txn-already-in-mempool", RejectAlreadyInMempool},
		{wire.RejectDuplicate, "something new", RejectOther},
		{wire.RejectInsufficientFee, "transaction 4a5e has 100 fees which is under the required amount of 1000", RejectInsufficientFee},
		{wire.RejectInsufficientFee, "4a5e: replacement transaction has an insufficient fee rate", RejectInsufficientFee},
		{wire.RejectNonstandard, "transaction's sequence locks on inputs not met", RejectNonStandard},
		{wire.RejectDust, "transaction output 0: payment of 1 is dust", RejectNonStandard},
		{wire.RejectInvalid, "transaction is an individual coinbase 4a5e", RejectInvalid},
		{wire.RejectInvalid, "rejected: failed to validate input", RejectInvalid},
		{wire.RejectMalformed, "", RejectInvalid},
		{wire.RejectObsolete, "version 1 blocks are obsolete", RejectOther},
		{wire.RejectCheckpoint, "", RejectOther},
		{wire.RejectCode(0x99), "already have transaction", RejectOther},
	}
	for _, tt := range tests {
		if got := classifyReject(tt.code, tt.reason); got != tt.want {
			t.Errorf("%v %q: %v, want %v", tt.code, tt.reason, got, tt.want)
		}
	}
	e := &RejectError{Command: "tx", Code: wire.RejectDuplicate, Reason: strings.Repeat("\n", 500), Kind: RejectInvalid}
	if msg := e.Error(); strings.Contains(msg, "\n") || len(msg) > 1000 || !errors.Is(e, ErrRejected) {
		t.Fatalf("error %q: want one bounded line wrapping ErrRejected", msg)
	}
}

// TestSilentDropReportedAtOnce: btcd keeps a transaction spending an
// output it does not know as an orphan, with no reject message. Its
// answer to the getdata sent after the transaction was written is its
// verdict, so Broadcast reports the silent drop (ErrRejected, no
// RejectError) at once, not after the timeout (15 s before).
func TestSilentDropReportedAtOnce(t *testing.T) {
	needFixture(t)
	alice := fx.alice
	fund := fx.node.SpendCoinbase(t, wire.NewTxOut(2_000_000, alice.P2WPKHScript()))
	fx.confirm(t, fund)
	parent := peertest.BuildSpend(t, []peertest.Output{peertest.OutputOf(fund, 0, alice)},
		wire.NewTxOut(2_000_000-peertest.Fee, alice.P2WPKHScript()))
	orphan := peertest.BuildSpend(t, []peertest.Output{peertest.OutputOf(parent, 0, alice)},
		wire.NewTxOut(2_000_000-2*peertest.Fee, peertest.NewKey("bob").PkScript()))
	const timeout = 15 * time.Second
	p := dial(t, fx.node.P2PAddr, timeout)
	start := time.Now()
	err := p.Broadcast(context.Background(), orphan)
	elapsed := time.Since(start)
	t.Logf("%v after %v", err, elapsed.Round(time.Millisecond))
	checkPeerError(t, err, fx.node.P2PAddr, ErrRejected)
	var re *RejectError
	var de *DroppedError
	if errors.As(err, &re) || !errors.As(err, &de) || !de.Processed || de.Txid != orphan.TxHash() {
		t.Fatalf("error %v: want a DroppedError of the orphan, processed (btcd sends no reject message for an orphan)", err)
	}
	if elapsed > timeout/3 {
		t.Fatalf("the silent drop reported after %v with a timeout of %v", elapsed, timeout)
	}
	// The parent makes the orphan whole: both are in the mempool then.
	if err := p.Broadcast(context.Background(), parent); err != nil {
		t.Fatal(err)
	}
	fx.confirm(t, parent, orphan)
}
