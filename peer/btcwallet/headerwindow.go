package btcwallet

import (
	"fmt"
	"sync"

	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/btcsuite/btcd/wire"
	"github.com/spvfilter/spvfilter/peer/chain"
	"github.com/spvfilter/spvfilter/peer/client"
)

// readAhead is how many headers GetBlockHash reads at once when asked for
// the heights in order, as btcwallet's recovery asks (and in batches of
// as many blocks).
const readAhead = 2000

// headerWindow is the run of the chain's headers GetBlockHash read last,
// with their hashes, for the chain as it was at tip: btcwallet asks for
// every block's hash by height, then its header by hash, one block after
// the other, and answering each from the chain alone costs a read of the
// store for each, and for the header a search for the hash's height. It
// is safe for concurrent use.
type headerWindow struct {
	mu      sync.Mutex
	tip     chainhash.Hash // the chain's tip when the headers were read
	from    int32
	headers []wire.BlockHeader
	hashes  []chainhash.Hash
	index   map[chainhash.Hash]int32 // height by hash
	next    int32                    // the height after the last asked for
}

// hash returns the hash of the block at height of ch, reading ahead when
// the heights come in order.
func (w *headerWindow) hash(ch *chain.Chain, height int32) (chainhash.Hash, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	tipHeight, tip := ch.Tip() // before the headers: a window of a later chain is read again
	if height < 0 || height > tipHeight {
		return chainhash.Hash{}, fmt.Errorf("btcwallet: no block at height %d: %w", height, client.ErrUnknownBlock)
	}
	inWindow := tip == w.tip && height >= w.from && height < w.from+int32(len(w.hashes))
	if !inWindow {
		to := height
		if height == w.next {
			to = min(height+readAhead-1, tipHeight)
		}
		if err := w.read(ch, tip, height, to); err != nil {
			return chainhash.Hash{}, fmt.Errorf("btcwallet: block at height %d: %w", height, err)
		}
	}
	w.next = height + 1
	return w.hashes[height-w.from], nil
}

// read reads the headers from..to of ch, whose tip was tip.
func (w *headerWindow) read(ch *chain.Chain, tip chainhash.Hash, from, to int32) error {
	headers, err := ch.Headers(from, to)
	if err != nil {
		w.headers, w.hashes, w.index = nil, nil, nil
		return err
	}
	w.tip, w.from, w.headers = tip, from, headers
	w.hashes = make([]chainhash.Hash, len(headers))
	w.index = make(map[chainhash.Hash]int32, len(headers))
	for i := range headers {
		w.hashes[i] = headers[i].BlockHash()
		w.index[w.hashes[i]] = from + int32(i)
	}
	return nil
}

// header returns the header of the block hash if the window holds it and
// the chain's tip is still the one it was read at.
func (w *headerWindow) header(ch *chain.Chain, hash chainhash.Hash) (wire.BlockHeader, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	h, ok := w.index[hash]
	if !ok {
		return wire.BlockHeader{}, false
	}
	if _, tip := ch.Tip(); tip != w.tip {
		return wire.BlockHeader{}, false
	}
	return w.headers[h-w.from], true
}
