package peertest

import (
	"fmt"
	"sync"
	"testing"

	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/btcsuite/btcd/rpcclient"
	"github.com/btcsuite/btcd/wire"
	"github.com/spvfilter/spvfilter/gcs"
)

// ForgeFilter returns a Liar behaviour that serves forged as the filter
// of the block at height, and keeps every later answer consistent with it
// (see Forge).
func ForgeFilter(t testing.TB, node *Node, height int32, forge func(b *wire.MsgBlock) []byte) LieFunc {
	return Forge(t, node, height, func(h int32, _ *wire.MsgBlock) bool { return h == height }, forge)
}

// Forge returns a Liar behaviour that serves forge's filter for every block
// of the node's chain, from height from on, that choose picks, and keeps
// every answer consistent with the forged filters: the filter hashes in
// cfheaders, the previous filter header of every later cfheaders, and
// every cfcheckpt entry. Nothing it sends can be caught by checking it
// against itself. Blocks are read from the node as they are asked about
// (so blocks mined later are forged too), each once.
func Forge(t testing.TB, node *Node, from int32, choose func(height int32, b *wire.MsgBlock) bool, forge func(b *wire.MsgBlock) []byte) LieFunc {
	f := &forger{t: t, node: node, from: from, choose: choose, forge: forge,
		heights: map[chainhash.Hash]int32{}, filterHash: map[int32]chainhash.Hash{}, fake: map[chainhash.Hash][]byte{},
		header: map[int32]chainhash.Hash{}}
	// The blocks there are now are read at once, in batches, so that the
	// liar answers as fast as the node.
	if tip, err := node.RPC().GetBlockCount(); err == nil && int32(tip) >= from {
		f.mu.Lock()
		if err := f.prefetch(max(from, 0), int32(tip)); err != nil {
			t.Errorf("forger: %v", err)
		}
		f.served(int32(tip))
		f.blocks, f.filters = nil, nil
		f.mu.Unlock()
	}
	return f.lie
}

// prefetch reads the blocks lo..hi and their filters in batches for
// served.
func (f *forger) prefetch(lo, hi int32) error {
	c, err := f.node.batchRPC()
	if err != nil {
		return err
	}
	defer c.Shutdown()
	f.blocks, f.filters = map[int32]*wire.MsgBlock{}, map[chainhash.Hash][]byte{}
	for start := lo; start <= hi; start += copyBatch {
		end := min(hi, start+copyBatch-1)
		blocks, err := fetchBlocks(c, start, end)
		if err != nil {
			return err
		}
		filters := make([]rpcclient.FutureGetCFilterResult, len(blocks))
		for i, b := range blocks {
			hash := b.BlockHash()
			filters[i] = c.GetCFilterAsync(&hash, wire.GCSFilterRegular)
		}
		if err := c.Send(); err != nil {
			return fmt.Errorf("filters of blocks %d..%d: %w", start, end, err)
		}
		for i, fut := range filters {
			cf, err := fut.Receive()
			if err != nil {
				return fmt.Errorf("filter of block %d: %w", start+int32(i), err)
			}
			f.blocks[start+int32(i)] = blocks[i]
			f.filters[blocks[i].BlockHash()] = cf.Data
		}
	}
	return nil
}

// forger is the state of Forge's behaviour.
type forger struct {
	t      testing.TB
	node   *Node
	from   int32
	choose func(int32, *wire.MsgBlock) bool
	forge  func(*wire.MsgBlock) []byte

	mu         sync.Mutex
	heights    map[chainhash.Hash]int32
	filterHash map[int32]chainhash.Hash // served filter hashes from height from on
	fake       map[chainhash.Hash][]byte
	header     map[int32]chainhash.Hash // served filter headers from height from-1 on
	// blocks and filters read in advance by prefetch, while Forge
	// decides the filters of the blocks there are when it is called.
	blocks  map[int32]*wire.MsgBlock
	filters map[chainhash.Hash][]byte
}

func (f *forger) lie(m wire.Message) ([]wire.Message, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	switch m := m.(type) {
	case *wire.MsgCFilter:
		if f.height(m.BlockHash) >= f.from {
			f.served(f.height(m.BlockHash))
			if fake, ok := f.fake[m.BlockHash]; ok {
				m.Data = fake
			}
		}
	case *wire.MsgCFHeaders:
		stop := f.height(m.StopHash)
		start := stop - int32(len(m.FilterHashes)) + 1
		if start-1 >= f.from-1 && start > 0 {
			m.PrevFilterHeader = f.served(start - 1)
		}
		for i := range m.FilterHashes {
			if h := start + int32(i); h >= f.from {
				f.served(h)
				fh := f.filterHash[h]
				m.FilterHashes[i] = &fh
			}
		}
	case *wire.MsgCFCheckpt:
		for i := range m.FilterHeaders {
			if h := int32(i+1) * wire.CFCheckptInterval; h >= f.from {
				fh := f.served(h)
				m.FilterHeaders[i] = &fh
			}
		}
	}
	return []wire.Message{m}, false
}

// height returns the height of a block of the node's chain.
func (f *forger) height(hash chainhash.Hash) int32 {
	if h, ok := f.heights[hash]; ok {
		return h
	}
	hdr, err := f.node.RPC().GetBlockHeaderVerbose(&hash)
	if err != nil {
		f.t.Errorf("forger: block %v: %v", hash, err)
		return -1
	}
	f.heights[hash] = hdr.Height
	return hdr.Height
}

// served returns the filter header served at height h (at or above
// from-1), deciding the filters served from from up to h on the way.
func (f *forger) served(h int32) chainhash.Hash {
	if fh, ok := f.header[h]; ok {
		return fh
	}
	rpc := f.node.RPC()
	if h < f.from {
		hash, err := rpc.GetBlockHash(int64(h))
		var fh chainhash.Hash
		if err == nil {
			var hdr *wire.MsgCFHeaders
			if hdr, err = rpc.GetCFilterHeader(hash, wire.GCSFilterRegular); err == nil {
				fh = hdr.PrevFilterHeader
			}
		}
		if err != nil {
			f.t.Errorf("forger: filter header at %d: %v", h, err)
		}
		f.header[h] = fh
		return fh
	}
	prev := f.served(h - 1)
	block, err := f.block(h)
	if err != nil {
		f.t.Errorf("forger: %v", err)
		return chainhash.Hash{}
	}
	hash := block.BlockHash()
	f.heights[hash] = h
	data, ok := f.filters[hash]
	switch {
	case f.choose(h, block):
		data = f.forge(block)
		f.fake[hash] = data
	case !ok:
		cf, err := rpc.GetCFilter(&hash, wire.GCSFilterRegular)
		if err != nil {
			f.t.Errorf("forger: filter of %v: %v", hash, err)
			return chainhash.Hash{}
		}
		data = cf.Data
	}
	f.filterHash[h] = chainhash.DoubleHashH(data)
	fh := f.filterHash[h]
	f.header[h] = gcs.MakeHeader(&fh, &prev)
	return f.header[h]
}

// block returns the node's block at height h, read in advance or now.
func (f *forger) block(h int32) (*wire.MsgBlock, error) {
	if b := f.blocks[h]; b != nil {
		return b, nil
	}
	rpc := f.node.RPC()
	hash, err := rpc.GetBlockHash(int64(h))
	if err != nil {
		return nil, fmt.Errorf("block at %d: %w", h, err)
	}
	b, err := rpc.GetBlock(hash)
	if err != nil {
		return nil, fmt.Errorf("block %v: %w", hash, err)
	}
	return b, nil
}

// EmptyFilter forges a filter that holds nothing: the block's own outputs
// prove it false.
func EmptyFilter(*wire.MsgBlock) []byte { return []byte{0} }

// OutputsOnly forges the filter of the block's outputs alone, leaving out
// the scripts its inputs spend: the block cannot prove it false.
func OutputsOnly(b *wire.MsgBlock) []byte {
	f, err := gcs.BuildBasic(b, nil)
	if err != nil {
		panic(err)
	}
	return f.NBytes()
}
