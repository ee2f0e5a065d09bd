package gcs_test

import (
	"encoding/hex"
	"fmt"

	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/spvfilter/spvfilter/gcs"
)

// A wallet receives a block's basic filter from a peer, checks it against
// the filter header chain, and asks whether the block may pay one of its
// scripts.
func Example() {
	// Testnet3 block 2 and its filter, from the BIP 158 test vectors.
	blockHash, _ := chainhash.NewHashFromStr("000000006c02c8ea6e4ff69651f7fcde348fb9d557a06e6957b65552002a7820")
	prevHeader, _ := chainhash.NewHashFromStr("d7bdac13a59d745b1add0d2ce852f1a0442e8945fc1bf3848d3cbffd88c24fe1")
	raw, _ := hex.DecodeString("0174a170")

	f, err := gcs.DecodeBasic(raw)
	if err != nil {
		fmt.Println("bad filter:", err)
		return
	}
	fmt.Println("N:", f.N())
	fmt.Println("header:", f.Header(prevHeader))

	// The block's coinbase pays this script.
	script, _ := hex.DecodeString("21038a7f6ef1c8ca0c588aa53fa860128077c9e6c11e6830f4d7ee4e763a56b7718fac")
	other, _ := hex.DecodeString("76a914000000000000000000000000000000000000000088ac")
	key := gcs.BasicKey(blockHash)
	fmt.Println("pays script:", f.Match(key, script))
	fmt.Println("pays other:", f.Match(key, other))
	fmt.Println("pays either:", f.MatchAny(key, [][]byte{other, script}))
	// Output:
	// N: 1
	// header: 186afd11ef2b5e7e3504f2e8cbf8df28a1fd251fe53d60dff8b1467d1b386cf0
	// pays script: true
	// pays other: false
	// pays either: true
}

// A Matcher keeps a fixed watch list and checks it against filter after
// filter without allocating.
func ExampleMatcher() {
	watch := [][]byte{[]byte("script A"), []byte("script B")}
	m := gcs.NewMatcher(watch)

	var key1, key2 [16]byte
	key2[0] = 1
	f1, _ := gcs.Build(key1, gcs.BasicP, gcs.BasicM, [][]byte{[]byte("script B"), []byte("script C")})
	f2, _ := gcs.Build(key2, gcs.BasicP, gcs.BasicM, [][]byte{[]byte("script C")})
	fmt.Println(m.Match(f1, key1), m.Match(f2, key2))
	// Output: true false
}

func ExampleFilter_Stats() {
	var key [16]byte
	elems := make([][]byte, 1000)
	for i := range elems {
		elems[i] = []byte(fmt.Sprintf("element %d", i))
	}
	f, _ := gcs.Build(key, gcs.BasicP, gcs.BasicM, elems)
	s := f.Stats()
	fmt.Printf("N=%d bytes=%d bits/element=%.1f fp=1/%d\n", s.N, s.Bytes, s.BitsPerElement, s.M)
	// Output: N=1000 bytes=2634 bits/element=21.0 fp=1/784931
}

// A light client asks of each block's cfilter payload, as received,
// whether it may pay one of the wallet's scripts: one pass over the bytes,
// no Filter built, nothing allocated.
func ExampleMatcher_MatchBytes() {
	// Testnet3 block 2 and its filter, from the BIP 158 test vectors.
	blockHash, _ := chainhash.NewHashFromStr("000000006c02c8ea6e4ff69651f7fcde348fb9d557a06e6957b65552002a7820")
	payload, _ := hex.DecodeString("0174a170")
	script, _ := hex.DecodeString("21038a7f6ef1c8ca0c588aa53fa860128077c9e6c11e6830f4d7ee4e763a56b7718fac")
	m := gcs.NewMatcher([][]byte{script})
	key := gcs.BasicKey(blockHash)

	// Strict: a malformed filter is an error, as from DecodeBasic.
	ok, err := m.MatchBytes(payload, key)
	fmt.Println(ok, err)
	_, err = m.MatchBytes(append(payload, 0), key)
	fmt.Println(err)

	// Once the payload's hash has been checked against the block's filter
	// header, the answer may stop at the first match.
	ok, err = m.MatchVerifiedBytes(payload, key)
	fmt.Println(ok, err)
	// Output:
	// true <nil>
	// gcs: trailing data after filter: 1 byte after the last value
	// true <nil>
}
