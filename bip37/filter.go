package bip37

import (
	"encoding/binary"
	"fmt"
	"math/bits"

	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/btcsuite/btcd/wire"
)

// seedStep is BIP 37's multiplier between the seeds of successive hash
// functions: hash function i uses seed i*0xFBA4C795 + tweak.
const (
	seedStep  = 0xFBA4C795
	seedStep2 = (2 * seedStep) & 0xFFFFFFFF // multiples, mod 2^32
	seedStep3 = (3 * seedStep) & 0xFFFFFFFF
	seedStep4 = (4 * seedStep) & 0xFFFFFFFF
)

// Filter is a BIP 37 connection Bloom filter with Bitcoin Core's semantics.
//
// A Filter is not safe for concurrent use: callers that share one between
// goroutines must synchronize. The zero value is an empty (0-byte) filter,
// which, as in Core, contains every element.
type Filter struct {
	data      []byte
	hashFuncs uint32
	tweak     uint32
	flags     wire.BloomUpdateType

	// nbits is len(data)*8 and modMagic its reciprocal for an exact
	// remainder by multiplication (see mod).
	nbits    uint32
	modMagic uint64

	// fill bounds the number of set bits from above while it is below
	// sparseLimit (a quarter of the bits); when an Add takes it to the
	// limit, the bits are counted, so a fill at or above the limit means
	// at least that many bits are set. Contains probes differently in
	// sparse and dense filters; the choice never affects a result.
	fill        uint32
	sparseLimit uint32

	// txbuf is reused to serialize transactions for their txid.
	txbuf []byte
}

// NewFilter returns an empty filter sized exactly as Bitcoin Core's
// CBloomFilter for elements elements at false-positive rate fpRate (see
// OptimalSize for the arithmetic and degenerate inputs). flags should be
// one of wire.BloomUpdateNone, BloomUpdateAll and BloomUpdateP2PubkeyOnly;
// like Core, matching looks only at its two low bits, but MarshalBinary
// refuses other values.
func NewFilter(elements uint32, fpRate float64, tweak uint32, flags wire.BloomUpdateType) *Filter {
	size, k := OptimalSize(elements, fpRate)
	f := &Filter{hashFuncs: k, tweak: tweak, flags: flags}
	f.setData(make([]byte, size))
	return f
}

// NewFilterFromParams returns a filter with a copy of the given bit array and
// parameters, after checking them against the protocol limits.
func NewFilterFromParams(bitArray []byte, hashFuncs, tweak uint32, flags wire.BloomUpdateType) (*Filter, error) {
	if err := checkParams(len(bitArray), hashFuncs); err != nil {
		return nil, err
	}
	f := &Filter{hashFuncs: hashFuncs, tweak: tweak, flags: flags}
	f.setData(append([]byte(nil), bitArray...))
	return f, nil
}

// checkParams applies Core's size constraints. Any flags byte is accepted,
// as Core and btcd accept it: matching looks only at its two low bits.
func checkParams(size int, hashFuncs uint32) error {
	if size > MaxFilterSize {
		return fmt.Errorf("%w: %s", ErrFilterTooLarge, plural(size, "byte"))
	}
	if hashFuncs > MaxHashFuncs {
		return fmt.Errorf("%w: %d", ErrTooManyHashFuncs, hashFuncs)
	}
	return nil
}

func (f *Filter) setData(b []byte) {
	f.data = b
	f.nbits = uint32(len(b)) * 8
	f.modMagic = 0
	if f.nbits != 0 {
		f.modMagic = ^uint64(0)/uint64(f.nbits) + 1
	}
	f.fill = popCount(b)
	f.sparseLimit = f.nbits / 4
}

func popCount(b []byte) uint32 {
	var n int
	for len(b) >= 8 {
		n += bits.OnesCount64(binary.LittleEndian.Uint64(b))
		b = b[8:]
	}
	for _, c := range b {
		n += bits.OnesCount8(c)
	}
	return uint32(n)
}

// mod returns h % f.nbits, the bit index Core computes with
// "% (vData.size() * 8)". It uses Lemire's exact remainder by a
// precomputed reciprocal (exact for 32-bit h and divisor), which avoids a
// hardware division per hash function; the result is the same remainder,
// not a range reduction.
func (f *Filter) mod(h uint32) uint32 {
	lo := f.modMagic * uint64(h)
	hi, _ := bits.Mul64(lo, uint64(f.nbits))
	return uint32(hi)
}

// maxPremixBlocks is how many 4-byte blocks of an element are scrambled
// once into a stack array and shared by all hash functions: elements up to
// 79 bytes, which covers hashes, outpoints, public keys and signatures.
// Longer elements are rehashed per batch of four hash functions.
const maxPremixBlocks = 19

// Add inserts data into the filter. Adding to a 0-byte filter does nothing,
// as in Core.
func (f *Filter) Add(data []byte) {
	if f.nbits == 0 {
		return
	}
	seed := f.tweak
	i := f.hashFuncs
	if len(data) <= maxPremixBlocks*4+3 {
		var ks [maxPremixBlocks]uint32
		blocks := premix(&ks, data)
		tail := murmurTail(data[len(blocks)*4:])
		n := len(data)
		// Four hash functions per pass: their chains are independent,
		// so the processor overlaps them.
		for ; i >= 4; i -= 4 {
			h0, h1, h2, h3 := seed, seed+seedStep, seed+seedStep2, seed+seedStep3
			for _, k := range blocks {
				h0 = murmurMixH(h0, k)
				h1 = murmurMixH(h1, k)
				h2 = murmurMixH(h2, k)
				h3 = murmurMixH(h3, k)
			}
			f.setBit(f.mod(murmurFinish(h0, tail, n)))
			f.setBit(f.mod(murmurFinish(h1, tail, n)))
			f.setBit(f.mod(murmurFinish(h2, tail, n)))
			f.setBit(f.mod(murmurFinish(h3, tail, n)))
			seed += seedStep4
		}
		for ; i > 0; i-- {
			h := seed
			for _, k := range blocks {
				h = murmurMixH(h, k)
			}
			f.setBit(f.mod(murmurFinish(h, tail, n)))
			seed += seedStep
		}
		f.addedBits()
		return
	}
	for ; i >= 4; i -= 4 {
		h0, h1, h2, h3 := murmurHash3x4(data, seed)
		f.setBit(f.mod(h0))
		f.setBit(f.mod(h1))
		f.setBit(f.mod(h2))
		f.setBit(f.mod(h3))
		seed += seedStep4
	}
	for ; i > 0; i-- {
		f.setBit(f.mod(MurmurHash3(seed, data)))
		seed += seedStep
	}
	f.addedBits()
}

// Contains reports whether data may be in the filter: false means it is
// certainly not. A 0-byte filter contains everything, as in Core (its
// guard against CVE-2013-5700 division by zero); a filter with zero hash
// functions also contains everything.
func (f *Filter) Contains(data []byte) bool {
	if f.nbits == 0 {
		return true
	}
	if f.fill < f.sparseLimit {
		// A sparse filter: the first probe almost always decides a
		// miss, so probe one hash function at a time.
		if f.hashFuncs == 0 {
			return true
		}
		if !f.bit(f.mod(MurmurHash3(f.tweak, data))) {
			return false
		}
		return f.containsEach(data, 1)
	}
	if f.hashFuncs < 4 || len(data) > maxPremixBlocks*4+3 {
		return f.containsEach(data, 0)
	}
	// A dense filter: probe four hash functions per pass. The first pass
	// scrambles each block as it goes and keeps it for the later passes.
	var ks [maxPremixBlocks]uint32
	n := len(data)
	seed := f.tweak
	h0, h1, h2, h3 := seed, seed+seedStep, seed+seedStep2, seed+seedStep3
	p := data
	nb := 0
	for len(p) >= 4 {
		k := murmurMixK(binary.LittleEndian.Uint32(p))
		ks[nb] = k
		nb++
		h0 = murmurMixH(h0, k)
		h1 = murmurMixH(h1, k)
		h2 = murmurMixH(h2, k)
		h3 = murmurMixH(h3, k)
		p = p[4:]
	}
	tail := murmurTail(p)
	blocks := ks[:nb]
	for i := f.hashFuncs; ; {
		// Test the four bits without branching in between: at a density
		// near one half each test is a coin flip the branch predictor
		// cannot learn, while all four being set is rare for a miss.
		if f.bitValue(f.mod(murmurFinish(h0, tail, n)))&f.bitValue(f.mod(murmurFinish(h1, tail, n)))&
			f.bitValue(f.mod(murmurFinish(h2, tail, n)))&f.bitValue(f.mod(murmurFinish(h3, tail, n))) == 0 {
			return false
		}
		seed += seedStep4
		i -= 4
		if i < 4 {
			for ; i > 0; i-- {
				h := seed
				for _, k := range blocks {
					h = murmurMixH(h, k)
				}
				if !f.bit(f.mod(murmurFinish(h, tail, n))) {
					return false
				}
				seed += seedStep
			}
			return true
		}
		h0, h1, h2, h3 = seed, seed+seedStep, seed+seedStep2, seed+seedStep3
		for _, k := range blocks {
			h0 = murmurMixH(h0, k)
			h1 = murmurMixH(h1, k)
			h2 = murmurMixH(h2, k)
			h3 = murmurMixH(h3, k)
		}
	}
}

// containsEach probes the hash functions from number first on: one at a
// time in a sparse filter or with fewer than four, four at a time for long
// elements in a dense filter.
func (f *Filter) containsEach(data []byte, first uint32) bool {
	seed := f.tweak + first*seedStep
	i := f.hashFuncs - first
	if f.fill >= f.sparseLimit {
		for ; i >= 4; i -= 4 {
			h0, h1, h2, h3 := murmurHash3x4(data, seed)
			if f.bitValue(f.mod(h0))&f.bitValue(f.mod(h1))&f.bitValue(f.mod(h2))&f.bitValue(f.mod(h3)) == 0 {
				return false
			}
			seed += seedStep4
		}
	}
	for ; i > 0; i-- {
		if !f.bit(f.mod(MurmurHash3(seed, data))) {
			return false
		}
		seed += seedStep
	}
	return true
}

// premix scrambles data's whole 4-byte blocks (at most maxPremixBlocks)
// into ks and returns them.
func premix(ks *[maxPremixBlocks]uint32, data []byte) []uint32 {
	blocks := ks[:len(data)/4]
	for i := range blocks {
		blocks[i] = murmurMixK(binary.LittleEndian.Uint32(data[i*4:]))
	}
	return blocks
}

func (f *Filter) setBit(idx uint32) { f.data[idx>>3] |= 1 << (idx & 7) }

// addedBits updates the fill bound after an Add. Counting the bits costs a
// pass over the array, so it is done only when the bound reaches the
// limit; bits never clear (but by Reset), so a dense filter stays dense.
func (f *Filter) addedBits() {
	if f.fill < f.sparseLimit {
		f.fill += f.hashFuncs
		if f.fill >= f.sparseLimit {
			f.fill = popCount(f.data)
		}
	}
}

func (f *Filter) bit(idx uint32) bool { return f.data[idx>>3]&(1<<(idx&7)) != 0 }

// bitValue returns bit idx as 0 or 1.
func (f *Filter) bitValue(idx uint32) byte { return f.data[idx>>3] >> (idx & 7) & 1 }

// outPointBytes serializes an outpoint as Core does: the 32-byte txid in
// internal byte order followed by the output index, little-endian.
func outPointBytes(buf *[chainhash.HashSize + 4]byte, hash *chainhash.Hash, index uint32) []byte {
	*(*chainhash.Hash)(buf[:chainhash.HashSize]) = *hash // a fixed-size move, not a memmove call
	binary.LittleEndian.PutUint32(buf[chainhash.HashSize:], index)
	return buf[:]
}

// OutPointBytes serializes an outpoint as a filter holds it: the txid in
// internal byte order, then the output index, little-endian (what
// AddOutPoint inserts, and what a filteradd of the outpoint carries).
func OutPointBytes(op *wire.OutPoint) []byte {
	var buf [chainhash.HashSize + 4]byte
	return outPointBytes(&buf, &op.Hash, op.Index)
}

// AddOutPoint inserts the serialized outpoint (txid || index LE).
func (f *Filter) AddOutPoint(op *wire.OutPoint) {
	var buf [chainhash.HashSize + 4]byte
	f.Add(outPointBytes(&buf, &op.Hash, op.Index))
}

// ContainsOutPoint reports whether the serialized outpoint may be in the
// filter.
func (f *Filter) ContainsOutPoint(op *wire.OutPoint) bool {
	var buf [chainhash.HashSize + 4]byte
	return f.Contains(outPointBytes(&buf, &op.Hash, op.Index))
}

// Clone returns an independent copy of the filter.
func (f *Filter) Clone() *Filter {
	c := &Filter{hashFuncs: f.hashFuncs, tweak: f.tweak, flags: f.flags}
	c.setData(append([]byte(nil), f.data...))
	return c
}

// Reset clears every bit, keeping the size, hash functions, tweak and
// flags. It is not the filterclear message: a node that receives
// filterclear drops the filter altogether and relays everything again.
func (f *Filter) Reset() {
	clear(f.data)
	f.fill = 0
}

// Bits returns a copy of the filter's bit array.
func (f *Filter) Bits() []byte { return append([]byte(nil), f.data...) }

// HashFuncs returns the number of hash functions.
func (f *Filter) HashFuncs() uint32 { return f.hashFuncs }

// Tweak returns the tweak added to every hash function's seed.
func (f *Filter) Tweak() uint32 { return f.tweak }

// Flags returns the update flags used by MatchTxAndUpdate.
func (f *Filter) Flags() wire.BloomUpdateType { return f.flags }

// Size returns the size of the bit array in bytes.
func (f *Filter) Size() int { return len(f.data) }
