package bip37

import (
	"encoding/binary"
	"math/bits"
)

// MurmurHash3 constants (Austin Appleby's x86_32 variant, as used by BIP 37).
const (
	murmurC1 = 0xcc9e2d51
	murmurC2 = 0x1b873593
	murmurN  = 0xe6546b64
)

// MurmurHash3 returns the 32-bit MurmurHash3 (x86_32) of data with the given
// seed. BIP 37 uses it with the seed i*0xFBA4C795 + tweak for hash function
// number i.
func MurmurHash3(seed uint32, data []byte) uint32 {
	h := seed
	n := len(data)
	p := data
	for len(p) >= 16 {
		h = murmurRound(h, binary.LittleEndian.Uint32(p))
		h = murmurRound(h, binary.LittleEndian.Uint32(p[4:]))
		h = murmurRound(h, binary.LittleEndian.Uint32(p[8:]))
		h = murmurRound(h, binary.LittleEndian.Uint32(p[12:]))
		p = p[16:]
	}
	for len(p) >= 4 {
		h = murmurRound(h, binary.LittleEndian.Uint32(p))
		p = p[4:]
	}
	return murmurFinish(h, murmurTail(p), n)
}

// murmurMixK scrambles one 4-byte block. It does not depend on the seed, so
// a filter computes it once per element and reuses it for every hash
// function.
func murmurMixK(k uint32) uint32 {
	k *= murmurC1
	k = bits.RotateLeft32(k, 15)
	return k * murmurC2
}

// murmurMixH folds a scrambled block into the running hash.
func murmurMixH(h, k uint32) uint32 {
	h ^= k
	h = bits.RotateLeft32(h, 13)
	return h*5 + murmurN
}

func murmurRound(h, k uint32) uint32 {
	return murmurMixH(h, murmurMixK(k))
}

// murmurTail returns the scrambled tail block (0 to 3 bytes); an empty tail
// gives 0, which leaves the hash unchanged when xored in.
func murmurTail(p []byte) uint32 {
	var k uint32
	switch len(p) & 3 {
	case 3:
		k = uint32(p[2])<<16 | uint32(p[1])<<8 | uint32(p[0])
	case 2:
		k = uint32(p[1])<<8 | uint32(p[0])
	case 1:
		k = uint32(p[0])
	default:
		return 0
	}
	return murmurMixK(k)
}

// murmurFinish xors in the scrambled tail and the length and applies the
// final avalanche.
func murmurFinish(h, tail uint32, n int) uint32 {
	return murmurAvalanche(h ^ tail ^ uint32(n))
}

// murmurAvalanche is MurmurHash3's final mix (fmix32).
func murmurAvalanche(h uint32) uint32 {
	h ^= h >> 16
	h *= 0x85ebca6b
	h ^= h >> 13
	h *= 0xc2b2ae35
	h ^= h >> 16
	return h
}

// murmurHash3x4 returns MurmurHash3 of data for the four seeds seed,
// seed+0xFBA4C795, seed+2*0xFBA4C795 and seed+3*0xFBA4C795: four BIP 37
// hash functions in one pass. Each block is scrambled once for all four,
// and the four independent chains run in parallel in the processor.
func murmurHash3x4(data []byte, seed uint32) (h0, h1, h2, h3 uint32) {
	h0, h1, h2, h3 = seed, seed+seedStep, seed+seedStep2, seed+seedStep3
	p := data
	for len(p) >= 4 {
		k := murmurMixK(binary.LittleEndian.Uint32(p))
		h0 = murmurMixH(h0, k)
		h1 = murmurMixH(h1, k)
		h2 = murmurMixH(h2, k)
		h3 = murmurMixH(h3, k)
		p = p[4:]
	}
	t := murmurTail(p)
	n := len(data)
	return murmurFinish(h0, t, n), murmurFinish(h1, t, n), murmurFinish(h2, t, n), murmurFinish(h3, t, n)
}
