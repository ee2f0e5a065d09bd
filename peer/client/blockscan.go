package client

import (
	"fmt"

	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/btcsuite/btcd/wire"
	"github.com/spvfilter/spvfilter/gcs"
)

// scanBlocks scans the blocks fetched at heights against wl and adds to r
// what they hold: the matches and, for a block of the wallet's (as
// wallet says: not one fetched for a cover alone or to be scanned whole
// for a conflict) that matched nothing, whether its filter matched
// through a spend that shows no script (SpendOnlyBlocks, with a warning)
// or falsely.
func (r *ScanResult) scanBlocks(wl *watchList, heights []int32, blocks []*wire.MsgBlock, wallet func(int32) bool, hashAt func(int32) chainhash.Hash) {
	for i, b := range blocks {
		h := heights[i]
		r.BlocksFetched++
		found, pays := false, false
		for i, tx := range b.Transactions {
			if items, spends := wl.match(tx); len(items) > 0 {
				found = true
				r.Matches = append(r.Matches, Match{
					Txid: tx.TxHash(), Tx: tx, Height: h, BlockHash: hashAt(h), TxIndex: i, WatchItems: items, Spends: spends,
				})
			}
			pays = pays || wl.pays(tx)
		}
		switch {
		case found || !wallet(h):
		case len(wl.scripts) > 0 && !pays && spendsUnrevealed(b):
			// The filter holds a watched script no output pays: an input
			// spends it without revealing it.
			r.SpendOnlyBlocks = append(r.SpendOnlyBlocks, h)
		default:
			r.FalsePositiveBlocks++
		}
	}
	if len(r.SpendOnlyBlocks) > 0 {
		r.Warnings = append(r.Warnings, fmt.Sprintf(
			"%d block(s) matched a watched script only through an output they spend without revealing its script (P2TR or P2PK), at heights %v: watch the outpoint (TXID:VOUT) to identify the transaction",
			len(r.SpendOnlyBlocks), r.SpendOnlyBlocks))
	}
}

// spendsUnrevealed reports whether some input of the block spends without
// revealing the script it spends (so that a filter may hold a watched
// script no output pays).
func spendsUnrevealed(b *wire.MsgBlock) bool {
	for _, tx := range b.Transactions[1:] {
		for _, in := range tx.TxIn {
			if typ, _ := gcs.SpendCandidates(in); !typ.Reveals() {
				return true
			}
		}
	}
	return false
}
