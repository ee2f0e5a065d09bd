package client

import (
	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/btcsuite/btcd/wire"
	"github.com/spvfilter/spvfilter/gcs"
)

// chainHeaders returns the filter header reached from prev through the
// filter hashes.
func chainHeaders(prev chainhash.Hash, hashes []chainhash.Hash) chainhash.Hash {
	for i := range hashes {
		prev = gcs.MakeHeader(&hashes[i], &prev)
	}
	return prev
}

// headersFrom returns the filter headers of the filter hashes, from prev.
func headersFrom(prev chainhash.Hash, hashes []chainhash.Hash) []chainhash.Hash {
	headers := make([]chainhash.Hash, len(hashes))
	for i := range hashes {
		prev = gcs.MakeHeader(&hashes[i], &prev)
		headers[i] = prev
	}
	return headers
}

// segmentOf returns the checkpoint segment holding height h: segment 0
// holds 0..1000, segment j > 0 holds j*1000+1..(j+1)*1000.
func segmentOf(h int32) int { return int(max(h-1, 0) / wire.CFCheckptInterval) }

// segmentFirst returns the first height of checkpoint segment j.
func segmentFirst(j int) int32 {
	if j == 0 {
		return 0
	}
	return int32(j)*wire.CFCheckptInterval + 1
}

// segmentStart returns the first height of checkpoint segment j and the
// filter header before it, from the agreed checkpoints.
func segmentStart(j int, checkpoints []chainhash.Hash) (int32, chainhash.Hash) {
	if j == 0 {
		return 0, chainhash.Hash{}
	}
	return segmentFirst(j), checkpoints[j-1]
}
