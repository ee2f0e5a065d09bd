package gcs

import (
	"bytes"
	"sync"

	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/btcsuite/btcd/wire"
)

// BIP 158 basic filter parameters.
const (
	BasicP = 19     // Golomb-Rice parameter
	BasicM = 784931 // inverse false-positive rate per query item
)

// opReturn is the opcode that marks a provably unspendable output; BIP 158
// leaves such outputs out so that a filter could be committed to in one.
const opReturn = 0x6a

// BasicOutput reports whether a block's basic filter holds the script of
// an output paying pkScript: every output script but empty ones and those
// starting with OP_RETURN (BIP 158).
func BasicOutput(pkScript []byte) bool {
	return len(pkScript) > 0 && pkScript[0] != opReturn
}

// BasicKey returns the SipHash key of a block's basic filter: the first 16
// bytes of the block hash in internal (not display) byte order.
func BasicKey(blockHash *chainhash.Hash) [16]byte {
	var k [16]byte
	copy(k[:], blockHash[:16])
	return k
}

// BuildBasic builds the BIP 158 basic filter of block. prevOutScripts are
// the scripts of the outputs the block's inputs spend (coinbase excluded),
// in any order. The filter holds every output script except empty ones and
// those starting with OP_RETURN, and every non-empty previous output
// script, each distinct script once.
func BuildBasic(block *wire.MsgBlock, prevOutScripts [][]byte) (*Filter, error) {
	sc := scratchPool.Get().(*setScratch)
	defer sc.release()
	elems := sc.elems[:0]
	for _, tx := range block.Transactions {
		for _, out := range tx.TxOut {
			if BasicOutput(out.PkScript) {
				elems = append(elems, out.PkScript)
			}
		}
	}
	for _, s := range prevOutScripts {
		if len(s) != 0 {
			elems = append(elems, s)
		}
	}
	sc.elems = elems
	blockHash := block.BlockHash()
	return sc.buildSet(BasicKey(&blockHash), BasicP, BasicM, elems)
}

// setScratch holds the working buffers of a set build, pooled so that
// building filter after filter allocates little more than the filters.
type setScratch struct {
	elems  [][]byte
	hashes []uint64
	idx    []int32
}

var scratchPool = sync.Pool{New: func() any { return new(setScratch) }}

// release drops the references to the caller's elements and returns the
// buffers to the pool, unless they grew too large to keep.
func (sc *setScratch) release() {
	clear(sc.elems)
	if cap(sc.hashes) <= 1<<20 {
		scratchPool.Put(sc)
	}
}

// buildSet builds a filter of the distinct elements of elems. Duplicates
// are found by sorting on the full 64-bit hash and comparing contents
// within runs of equal hashes, so no copy or map of the elements is made.
// Since the reduction into [0, N*M) is monotonic in the hash, the reduced
// values come out sorted, whatever N turns out to be after deduplication.
func buildSet(key [16]byte, p uint8, m uint64, elems [][]byte) (*Filter, error) {
	sc := scratchPool.Get().(*setScratch)
	defer sc.release()
	return sc.buildSet(key, p, m, elems)
}

func (sc *setScratch) buildSet(key [16]byte, p uint8, m uint64, elems [][]byte) (*Filter, error) {
	if _, err := checkParams(uint64(len(elems)), p, m); err != nil {
		return nil, err
	}
	sc.hashes = grow(sc.hashes, 2*len(elems))
	newSipKey(&key).sumAll(sc.hashes[:len(elems)], elems)
	return sc.buildDistinct(p, m, elems)
}

// grow returns s resized to n, reallocated only if too small.
func grow[T any](s []T, n int) []T {
	if cap(s) < n {
		return make([]T, n)
	}
	return s[:n]
}

// buildDistinct builds the filter of the distinct elements of elems given
// their 64-bit hashes in sc.hashes[:len(elems)]; the rest of sc.hashes (as
// long again) is scratch.
func (sc *setScratch) buildDistinct(p uint8, m uint64, elems [][]byte) (*Filter, error) {
	n := len(elems)
	hashes := sc.hashes[:2*n]
	sc.idx = grow(sc.idx, 2*n)
	idx := sc.idx
	for i := range n {
		idx[i] = int32(i)
	}
	sortHashes(hashes[:n], idx[:n], hashes[n:], idx[n:])
	sorted, values := hashes[:n], hashes[n:n] // the scratch half is free again
	for i, h := range sorted {
		dup := false
		// Compare with the earlier members of this run of equal hashes.
		for j := i - 1; j >= 0 && sorted[j] == h; j-- {
			if bytes.Equal(elems[idx[j]], elems[idx[i]]) {
				dup = true
				break
			}
		}
		if !dup {
			values = append(values, h)
		}
	}
	kept := len(values)
	modulus, err := checkParams(uint64(kept), p, m)
	if err != nil {
		return nil, err
	}
	for i, h := range values {
		values[i] = reduce(h, modulus)
	}
	return encode(uint32(kept), p, m, modulus, values), nil
}

// DecodeBasic decodes an untrusted basic filter as carried in cfilter
// messages (CompactSize N, then the bit stream), strictly.
func DecodeBasic(nbytes []byte) (*Filter, error) {
	return FromNBytes(BasicP, BasicM, nbytes)
}
