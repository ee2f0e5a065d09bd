package model

import (
	"math"
	"math/bits"

	"github.com/spvfilter/spvfilter/bip37"
)

// HashingRate is the chance that an element not added to a Bloom filter
// of these bits matches it by chance: X^k, for X the fraction of bits set
// and k the hash functions; 1 for no bits (an empty filter matches
// everything).
func HashingRate(b []byte, k uint32) float64 {
	if len(b) == 0 {
		return 1
	}
	set := 0
	for _, x := range b {
		set += bits.OnesCount8(x)
	}
	return math.Pow(float64(set)/float64(8*len(b)), float64(k))
}

// JointFalsePositiveRate is the chance that an element added to none of
// filters matches every one of them: filters of one hashing (size, hash
// functions and tweak) test the same bits, so theirs is the HashingRate
// of their bits ANDed; filters of different hashings are taken as
// independent, their rates multiplied. No filter gives 1.
func JointFalsePositiveRate(filters []*bip37.Filter) float64 {
	type hashing struct {
		size     int
		k, tweak uint32
	}
	and := map[hashing][]byte{}
	var order []hashing
	for _, f := range filters {
		b := f.Bits()
		h := hashing{len(b), f.HashFuncs(), f.Tweak()}
		if a, ok := and[h]; ok {
			for i := range a {
				a[i] &= b[i]
			}
			continue
		}
		and[h] = b
		order = append(order, h)
	}
	p := 1.0
	for _, h := range order {
		p *= HashingRate(and[h], h.k)
	}
	return p
}
