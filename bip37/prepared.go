package bip37

import "math/bits"

// MaxPreparedLen is the longest element a Prepared holds by itself, as its
// scrambled MurmurHash3 blocks: 79 bytes, which covers hashes, outpoints,
// public keys and signatures. A Prepared of a longer element refers to
// the element's bytes instead.
const MaxPreparedLen = maxPremixBlocks*4 + 3

// PreparedBatch is how many elements Filter.ContainsBatch probes at a time:
// a filter's bit array and one batch of prepared elements stay in the
// first-level cache together.
const PreparedBatch = 256

// Prepared is an element made ready to be tested against many filters.
// MurmurHash3 scrambles each 4-byte block of the element the same way for
// every seed; only the chain that folds the scrambled blocks into the hash
// depends on the seed, that is on the filter's tweak and the hash function.
// A Prepared keeps the scrambled blocks, so each filter and hash function
// runs only the chain. The zero value is the empty element.
type Prepared struct {
	// fin is the scrambled tail block xored with the length: what
	// MurmurHash3 folds in after the chain, before the final mix.
	fin    uint32
	nb     uint32 // scrambled blocks in use
	blocks [maxPremixBlocks]uint32
	long   []byte // an element longer than MaxPreparedLen, else nil
}

// Prepare returns data prepared (see Prepared.Set).
func Prepare(data []byte) Prepared {
	var p Prepared
	p.Set(data)
	return p
}

// Set prepares data, replacing what p held. An element of at most
// MaxPreparedLen bytes is copied in scrambled form, and data may then be
// reused; a longer one is referred to, and data must not change while p is
// in use.
func (p *Prepared) Set(data []byte) {
	if len(data) > MaxPreparedLen {
		p.fin, p.nb, p.long = 0, 0, data
		return
	}
	ks := premix(&p.blocks, data)
	p.nb = uint32(len(ks))
	p.fin = murmurTail(data[len(ks)*4:]) ^ uint32(len(data))
	p.long = nil
}

// hash returns MurmurHash3(seed, element).
func (p *Prepared) hash(seed uint32) uint32 {
	if p.long != nil {
		return MurmurHash3(seed, p.long)
	}
	h := seed
	for _, k := range p.blocks[:p.nb] {
		h = murmurMixH(h, k)
	}
	return murmurAvalanche(h ^ p.fin)
}

// ContainsPrepared reports whether the prepared element may be in the
// filter; it answers exactly as Contains does for the element's bytes.
func (f *Filter) ContainsPrepared(p *Prepared) bool {
	if f.nbits == 0 {
		return true
	}
	seed := f.tweak
	for i := f.hashFuncs; i > 0; i-- {
		if !f.bit(f.mod(p.hash(seed))) {
			return false
		}
		seed += seedStep
	}
	return true
}

// ContainsBatch appends to matched, in increasing order, the index in ps of
// every element that may be in the filter (for which ContainsPrepared
// reports true), and returns the extended slice. With a capacity of
// len(ps) for matched it allocates nothing.
//
// It probes PreparedBatch elements at a time, one hash function after the
// other: the first for all of them, the next for those still in, and so
// on. The loops carry no branch that depends on a bit (an element's index
// is always written, and kept by advancing past it only when its bit is
// set), and the probes of different elements overlap in the processor;
// about half the elements not in the filter leave after each probe.
func (f *Filter) ContainsBatch(ps []Prepared, matched []int32) []int32 {
	if f.nbits == 0 || f.hashFuncs == 0 {
		for j := range ps {
			matched = append(matched, int32(j))
		}
		return matched
	}
	var live [PreparedBatch]int32
	for start := 0; start < len(ps); start += PreparedBatch {
		batch := ps[start:min(start+PreparedBatch, len(ps))]
		seed := f.tweak
		short := true
		for j := range batch {
			short = short && batch[j].long == nil
		}
		if !short {
			for j := range batch {
				live[j] = int32(j)
			}
		}
		n := len(batch)
		for i := f.hashFuncs; i > 0 && n > 0; i-- {
			if short {
				n = f.probeShort(batch, &live, n, i == f.hashFuncs, seed)
			} else {
				n = f.probe(batch, &live, n, seed)
			}
			seed += seedStep
		}
		for _, j := range live[:n] {
			matched = append(matched, int32(start)+j)
		}
	}
	return matched
}

// probeShort tests the elements of batch that the first n entries of live
// list (with all, every element, n being len(batch)) for the hash function
// of the given seed, keeps in live, in order, those whose bit is set, and
// returns how many it kept. No element of batch may be longer than
// MaxPreparedLen: the loop calls no function, so everything it needs
// stays in registers.
func (f *Filter) probeShort(batch []Prepared, live *[PreparedBatch]int32, n int, all bool, seed uint32) int {
	data, magic, nbits := f.data, f.modMagic, uint64(f.nbits)
	m := 0
	for i := 0; i < n; i++ {
		j := int32(i)
		if !all {
			j = live[i&(PreparedBatch-1)]
		}
		p := &batch[j]
		h := seed
		if p.nb == 5 {
			// A HASH160, the usual element: the chain unrolled.
			b := &p.blocks
			h = murmurMixH(murmurMixH(murmurMixH(murmurMixH(murmurMixH(h, b[0]), b[1]), b[2]), b[3]), b[4])
		} else {
			for _, k := range p.blocks[:p.nb] {
				h = murmurMixH(h, k)
			}
		}
		h = murmurAvalanche(h ^ p.fin)
		idx, _ := bits.Mul64(magic*uint64(h), nbits) // h % nbits, as in mod
		live[m&(PreparedBatch-1)] = j
		m += int(data[idx>>3] >> (idx & 7) & 1)
	}
	return m
}

// probe is probeShort for a batch that may hold long elements.
func (f *Filter) probe(batch []Prepared, live *[PreparedBatch]int32, n int, seed uint32) int {
	m := 0
	for _, j := range live[:n] {
		live[m&(PreparedBatch-1)] = j
		m += int(f.bitValue(f.mod(batch[j].hash(seed))))
	}
	return m
}
