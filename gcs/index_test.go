package gcs

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// TestIndexedLookup checks the block index against brute force: every
// value, its neighbours and random probes, alone (hasValue) and as sorted
// query sets (matchSorted), on filters dense with repeated values and with
// values at block boundaries.
func TestIndexedLookup(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 9))
	for i := 0; i < 36; i++ {
		n := []int{1, 63, 64, 65, 127, 128, 129, 1000, 4097}[i%9]
		// Small M gives many equal neighbours; P near log2(M) keeps the
		// unary parts short.
		p, m := uint8(1+rng.IntN(3)), uint64(1+rng.IntN(8))
		if i%2 == 0 {
			p, m = BasicP, BasicM
		}
		f, err := Build(randKey(rng), p, m, randSet(rng, n, 8))
		if err != nil {
			t.Fatal(err)
		}
		values := f.Values(nil)
		if len(f.ck) != numCheckpoints(f.N()) {
			t.Fatalf("n=%d: %d checkpoints, want %d", n, len(f.ck), numCheckpoints(f.N()))
		}
		// The decoder's index equals the encoder's.
		g, err := FromNBytes(f.P(), f.M(), f.NBytes())
		if err != nil || !slices.Equal(g.ck, f.ck) {
			t.Fatalf("n=%d: decoded index differs from the built one (%v)", n, err)
		}
		in := func(x uint64) bool { _, ok := slices.BinarySearch(values, x); return ok }
		probes := []uint64{0, f.modulus - 1}
		for _, v := range values {
			probes = append(probes, v, v+1, v-1)
		}
		for range 200 {
			probes = append(probes, rng.Uint64N(f.modulus))
		}
		for _, x := range probes {
			if got := f.hasValue(x); got != in(x) {
				t.Fatalf("n=%d m=%d: hasValue(%d) = %v", n, m, x, got)
			}
		}
		for k := range 100 {
			// Both the sparse (skipping) and the dense (paired) paths.
			size := 1 + rng.IntN(40)
			if k%2 == 0 {
				size = len(f.ck) + 1 + rng.IntN(50)
			}
			q := make([]uint64, size)
			want := false
			for j := range q {
				q[j] = probes[rng.IntN(len(probes))]
				if rng.IntN(4) > 0 {
					q[j] = rng.Uint64N(f.modulus) // mostly misses
				}
			}
			slices.Sort(q)
			for _, x := range q {
				want = want || in(x)
			}
			if got := f.matchSorted(q); got != want {
				t.Fatalf("n=%d m=%d: matchSorted(%v) = %v, want %v", n, m, q, got, want)
			}
		}
	}
}
