package peertest

import (
	"testing"

	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/btcsuite/btcd/wire"
	"github.com/spvfilter/spvfilter/gcs"
)

// ForgeFilter returns a Liar behaviour that serves forged as the filter
// of the block at height, and keeps every later answer consistent with it:
// the filter hash in cfheaders, the previous filter header of every later
// cfheaders, and every cfcheckpt entry from height on. Nothing it sends can
// be caught by checking it against itself.
func ForgeFilter(t testing.TB, node *Node, height int32, forge func(b *wire.MsgBlock) []byte) LieFunc {
	t.Helper()
	rpc := node.RPC()
	count, err := rpc.GetBlockCount()
	if err != nil {
		t.Fatal(err)
	}
	tip := int32(count)
	hashes := make([]chainhash.Hash, tip+1)
	heights := map[chainhash.Hash]int32{}
	filterHashes := make([]chainhash.Hash, tip+1)
	for h := int32(0); h <= tip; h++ {
		hash, err := rpc.GetBlockHash(int64(h))
		if err != nil {
			t.Fatal(err)
		}
		hashes[h] = *hash
		heights[hashes[h]] = h
		cf, err := rpc.GetCFilter(&hashes[h], wire.GCSFilterRegular)
		if err != nil {
			t.Fatal(err)
		}
		filterHashes[h] = chainhash.DoubleHashH(cf.Data)
	}
	block, err := rpc.GetBlock(&hashes[height])
	if err != nil {
		t.Fatal(err)
	}
	fake := forge(block)
	filterHashes[height] = chainhash.DoubleHashH(fake)
	headers := make([]chainhash.Hash, tip+1)
	var prev chainhash.Hash
	for h := int32(0); h <= tip; h++ {
		prev = gcs.MakeHeader(&filterHashes[h], &prev)
		headers[h] = prev
	}
	return func(m wire.Message) ([]wire.Message, bool) {
		switch m := m.(type) {
		case *wire.MsgCFilter:
			if m.BlockHash == hashes[height] {
				m.Data = fake
			}
		case *wire.MsgCFHeaders:
			stop := heights[m.StopHash]
			start := stop - int32(len(m.FilterHashes)) + 1
			if start > 0 {
				m.PrevFilterHeader = headers[start-1]
			}
			for i := range m.FilterHashes {
				fh := filterHashes[start+int32(i)]
				m.FilterHashes[i] = &fh
			}
		case *wire.MsgCFCheckpt:
			for i := range m.FilterHeaders {
				h := headers[int32(i+1)*wire.CFCheckptInterval]
				m.FilterHeaders[i] = &h
			}
		}
		return []wire.Message{m}, false
	}
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
