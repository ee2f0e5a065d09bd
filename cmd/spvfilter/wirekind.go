package main

import (
	"bytes"
	"fmt"

	"github.com/btcsuite/btcd/wire"

	"github.com/spvfilter/spvfilter/bip37"
)

// wireKind says what raw is when it is not what a flag wants but
// another message's whole bytes: "a block (HASH, 3 transactions)", "a
// transaction (TXID)", "a block header (HASH) alone", "a merkleblock
// payload (block HASH)"; "" when it is none of them.
func wireKind(raw []byte) string {
	if len(raw) == wire.MaxBlockHeaderPayload {
		var h wire.BlockHeader
		if h.Deserialize(bytes.NewReader(raw)) == nil {
			return fmt.Sprintf("a block header (%s) alone", h.BlockHash())
		}
	}
	r := bytes.NewReader(raw)
	var block wire.MsgBlock
	if block.Deserialize(r) == nil && r.Len() == 0 && len(block.Transactions) > 0 {
		return fmt.Sprintf("a block (%s, %s)", block.BlockHash(), plural(len(block.Transactions), "transaction"))
	}
	r = bytes.NewReader(raw)
	var tx wire.MsgTx
	if tx.Deserialize(r) == nil && r.Len() == 0 {
		return fmt.Sprintf("a transaction (%s)", tx.TxHash())
	}
	if mb, err := bip37.DecodeMerkleBlock(raw); err == nil {
		return fmt.Sprintf("a merkleblock payload (block %s)", mb.Header.BlockHash())
	}
	return ""
}
