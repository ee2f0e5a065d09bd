package client

import (
	"github.com/btcsuite/btcd/chaincfg/chainhash"
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
