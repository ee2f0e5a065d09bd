package bip37_test

import (
	"encoding/hex"
	"fmt"

	"github.com/btcsuite/btcd/wire"

	"github.com/spvfilter/spvfilter/bip37"
)

// A wallet builds a filter for its elements and sends it in a filterload
// message. This is Bitcoin Core's bloom_create_insert_serialize test.
func ExampleNewFilter() {
	f := bip37.NewFilter(3, 0.01, 0, wire.BloomUpdateAll)
	for _, s := range []string{
		"99108ad8ed9bb6274d3980bab5a85c048f0950c8",
		"b5a2c786d9ef4658287ced5914b37a1b4aa32eee",
		"b9300670b4c5366e95b2699e8b18bc75e5f729c5",
	} {
		e, _ := hex.DecodeString(s)
		f.Add(e)
	}
	payload, _ := f.MarshalBinary()
	fmt.Printf("filterload %x\n", payload)

	other, _ := hex.DecodeString("19108ad8ed9bb6274d3980bab5a85c048f0950c8")
	fmt.Println("contains a one-bit change:", f.Contains(other))
	// Output:
	// filterload 03614e9b050000000000000001
	// contains a one-bit change: false
}

// Sizing follows Core's integer arithmetic, which picks fewer hash
// functions than btcutil for some inputs.
func ExampleOptimalSize() {
	size, k := bip37.OptimalSize(2100, 0.1)
	fmt.Println(size, "bytes,", k, "hash functions")
	// Output: 1258 bytes, 2 hash functions
}

// A node decodes a filterload from a peer and checks its health.
func ExampleDecodeFilterLoad() {
	payload, _ := hex.DecodeString("03614e9b050000000000000001")
	f, err := bip37.DecodeFilterLoad(payload)
	if err != nil {
		fmt.Println(err)
		return
	}
	s := f.Stats()
	fmt.Printf("%d bits, %d hash functions, %d bits set, about %.0f elements\n",
		s.SizeBits, s.HashFuncs, s.BitsSet, s.EstimatedElements)

	_, err = bip37.DecodeFilterLoad(append(payload, 0))
	fmt.Println(err)
	// Output:
	// 24 bits, 5 hash functions, 12 bits set, about 3 elements
	// filterload: trailing data after payload: 1 byte
}

// MatchTxAndUpdate is what a node runs for every transaction: with
// BloomUpdateAll a matching output's outpoint joins the filter, so the
// transaction spending it matches too.
func ExampleFilter_MatchTxAndUpdate() {
	hash160, _ := hex.DecodeString("04943fdd508053c75000106d3bc6e2754dbcff19")
	f := bip37.NewFilter(10, 0.000001, 0, wire.BloomUpdateAll)
	f.Add(hash160)

	tx := wire.NewMsgTx(1)
	tx.AddTxIn(wire.NewTxIn(&wire.OutPoint{Index: 1}, nil, nil))
	script := append(append([]byte{0x76, 0xa9, 0x14}, hash160...), 0x88, 0xac)
	tx.AddTxOut(wire.NewTxOut(50000, script))
	fmt.Println("pays us:", f.MatchTxAndUpdate(tx))

	txid := tx.TxHash()
	spend := wire.NewMsgTx(1)
	spend.AddTxIn(wire.NewTxIn(wire.NewOutPoint(&txid, 0), nil, nil))
	spend.AddTxOut(wire.NewTxOut(40000, []byte{0x51}))
	fmt.Println("spends it:", f.MatchTxAndUpdate(spend))
	// Output:
	// pays us: true
	// spends it: true
}
