package bip37_test

import (
	"bytes"
	"encoding/hex"
	"fmt"

	"github.com/btcsuite/btcd/wire"

	"github.com/spvfilter/spvfilter/bip37"
)

// A light client checks a merkleblock message received from a peer: the
// proof must commit to the header's merkle root, and it tells which
// transactions of the block matched the client's filter. The payload is
// Bitcoin Core's merkle_block_3_and_serialize test vector.
func ExampleVerifyMerkleBlock() {
	payload, _ := hex.DecodeString("0100000079cda856b143d9db2c1caff01d1aecc8630d30625d10e8b4b8b0000000000000" +
		"b50cc069d6a3e33e3ff84a5c41d9d3febe7c770fdcc96b2c3ff60abe184f196367291b4d4c86041b8fa45d63" +
		"0100000001b50cc069d6a3e33e3ff84a5c41d9d3febe7c770fdcc96b2c3ff60abe184f19630101")
	mb, err := bip37.DecodeMerkleBlock(payload)
	if err != nil {
		fmt.Println("malformed:", err)
		return
	}
	matches, err := bip37.VerifyMerkleBlock(mb)
	if err != nil {
		fmt.Println("invalid proof:", err)
		return
	}
	fmt.Println("block", mb.Header.BlockHash())
	for _, m := range matches {
		fmt.Printf("tx %d of %d: %v\n", m.Index, mb.Transactions, m.Txid)
	}
	// Output:
	// block 000000000000dab0130bbcc991d3d7ae6b81aa6f50a798888dfe62337458dc45
	// tx 0 of 1: 63194f18be0af63f2c6bc9dc0f777cbefed3d9415c4af83f3ee3a3d669c00cb5
}

// Building the proof a BIP 37 node sends for a block: the filter is
// updated as the node's would be (BloomUpdateAll adds the outpoints of
// matched outputs). The block is the one of Core's
// merkle_block_3_and_serialize test, with its only transaction matched.
func ExampleNewMerkleBlock() {
	raw, _ := hex.DecodeString("0100000079cda856b143d9db2c1caff01d1aecc8630d30625d10e8b4b8b0000000000000b50cc069d6a3e33e" +
		"3ff84a5c41d9d3febe7c770fdcc96b2c3ff60abe184f196367291b4d4c86041b8fa45d630101000000010000" +
		"000000000000000000000000000000000000000000000000000000000000ffffffff08044c86041b020a02ff" +
		"ffffff0100f2052a01000000434104ecd3229b0571c3be876feaac0442a9f13c5a572742927af1dc623353ec" +
		"f8c202225f64868137a18cdd85cbbb4c74fbccfd4f49639cf1bdc94a5672bb15ad5d4cac00000000")
	var block wire.MsgBlock
	if err := block.Deserialize(bytes.NewReader(raw)); err != nil {
		fmt.Println(err)
		return
	}
	f := bip37.NewFilter(10, 0.000001, 0, wire.BloomUpdateAll)
	txid := block.Transactions[0].TxHash()
	f.Add(txid[:])

	mb, matches := bip37.NewMerkleBlock(&block, f)
	payload, _ := bip37.EncodeMerkleBlock(mb)
	fmt.Printf("%d of %d matched, payload %x...\n", len(matches), mb.Transactions, payload[80:])
	// Output:
	// 1 of 1 matched, payload 0100000001b50cc069d6a3e33e3ff84a5c41d9d3febe7c770fdcc96b2c3ff60abe184f19630101...
}
