package client

import (
	"sync"

	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/btcsuite/btcd/wire"
)

// blockCache keeps the last blocks GetBlock returned.
type blockCache struct {
	mu     sync.Mutex
	blocks map[chainhash.Hash]*wire.MsgBlock
	order  []chainhash.Hash
}

// blockCacheSize is how many blocks GetBlock keeps.
const blockCacheSize = 8

func (bc *blockCache) get(hash chainhash.Hash) (*wire.MsgBlock, bool) {
	bc.mu.Lock()
	defer bc.mu.Unlock()
	b, ok := bc.blocks[hash]
	return b, ok
}

func (bc *blockCache) put(hash chainhash.Hash, b *wire.MsgBlock) {
	bc.mu.Lock()
	defer bc.mu.Unlock()
	if bc.blocks == nil {
		bc.blocks = map[chainhash.Hash]*wire.MsgBlock{}
	}
	if _, ok := bc.blocks[hash]; ok {
		return
	}
	bc.blocks[hash] = b
	bc.order = append(bc.order, hash)
	if len(bc.order) > blockCacheSize {
		delete(bc.blocks, bc.order[0])
		bc.order = bc.order[1:]
	}
}
