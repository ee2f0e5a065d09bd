package peertest

import (
	"fmt"
	"runtime"
	"testing"

	"github.com/btcsuite/btcd/chaincfg"
	"github.com/btcsuite/btcd/wire"
)

func TestNodeMinesAndSpends(t *testing.T) {
	n := StartBtcd(t)
	n.Generate(t, 101)
	alice := NewKey("alice")
	fund := n.SpendCoinbase(t, wire.NewTxOut(1_000_000, alice.PkScript()))
	n.Confirm(t, fund)
	spend := n.Spend(t, []Output{OutputOf(fund, 0, alice)}, wire.NewTxOut(1_000_000-Fee, NewKey("bob").PkScript()))
	n.Confirm(t, spend)
	count, err := n.RPC().GetBlockCount()
	if err != nil || count != 103 {
		t.Fatalf("block count %d, %v; want 103", count, err)
	}
	// A second coinbase spend must pick another coinbase.
	again := n.SpendCoinbase(t, wire.NewTxOut(5000, alice.PkScript()))
	if again.TxIn[0].PreviousOutPoint == fund.TxIn[0].PreviousOutPoint {
		t.Fatal("the same coinbase was spent twice")
	}
	n.Confirm(t, again)
	// The node worked: its CPU time is measured and grows.
	if cpu, ok := n.CPU(); runtime.GOOS == "linux" && (!ok || cpu <= 0) {
		t.Errorf("node CPU %v, %v after mining 104 blocks; want a positive time", cpu, ok)
	}
}

func TestStopIsIdempotent(t *testing.T) {
	n, err := Start(WithArgs("--nocfilters"))
	if err != nil {
		t.Fatal(err)
	}
	if err := n.Stop(); err != nil {
		t.Fatal(err)
	}
	if err := n.Stop(); err != nil {
		t.Fatal(err)
	}
	if _, err := n.RPC().GetBlockCount(); err == nil {
		t.Fatal("RPC still answers after Stop")
	}
}

func ExampleNewKey() {
	k := NewKey("alice")
	fmt.Println(k.Address(&chaincfg.RegressionNetParams).EncodeAddress() == NewKey("alice").Address(&chaincfg.RegressionNetParams).EncodeAddress())
	fmt.Printf("%x\n", k.PkScript()[:3])
	// Output:
	// true
	// 76a914
}
