package bip37

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/btcsuite/btcd/wire"
)

// randomFilter returns a filter of size bytes and k hash functions with a
// random tweak, holding about elems random elements (or, with elems < 0,
// a random bit array).
func randomFilter(r *rand.Rand, size int, k uint32, elems int) *Filter {
	f, err := NewFilterFromParams(make([]byte, size), k, r.Uint32(), wire.BloomUpdateNone)
	if err != nil {
		panic(err)
	}
	if elems < 0 {
		f.setData(randBytes(r, size))
		return f
	}
	for i := 0; i < elems; i++ {
		f.Add(randBytes(r, 1+r.IntN(40)))
	}
	return f
}

// TestPreparedMatchesContains compares ContainsPrepared and ContainsBatch
// with Contains and with Core's plain transcription (refContains) on random
// filters (empty to full, sparse and dense, 0 to 50 hash functions) and
// random elements of every length up to past MaxPreparedLen, members and
// not.
func TestPreparedMatchesContains(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 12))
	for trial := 0; trial < 300; trial++ {
		size := r.IntN(300)
		if trial%10 == 0 {
			size = 0
		}
		k := uint32(r.IntN(MaxHashFuncs + 1))
		var f *Filter
		switch trial % 3 {
		case 0:
			f = randomFilter(r, size, k, -1)
		case 1:
			f = randomFilter(r, size, k, r.IntN(size+1))
		default:
			f = randomFilter(r, size, k, r.IntN(size*8+1))
		}
		elems := make([][]byte, 1+r.IntN(2*PreparedBatch+3))
		ps := make([]Prepared, len(elems))
		var want []int32
		for j := range elems {
			elems[j] = randBytes(r, r.IntN(MaxPreparedLen+20))
			if j%5 == 0 {
				f.Add(elems[j]) // a member, before any test
			}
		}
		for j, e := range elems {
			ps[j].Set(e)
			got := f.ContainsPrepared(&ps[j])
			if ref := refContains(f.data, f.hashFuncs, f.tweak, e); got != ref || f.Contains(e) != ref {
				t.Fatalf("trial %d: %d bytes, k %d, element %x: ContainsPrepared %v, Contains %v, reference %v",
					trial, size, k, e, got, f.Contains(e), ref)
			}
			if got {
				want = append(want, int32(j))
			}
		}
		got := f.ContainsBatch(ps, make([]int32, 0, len(ps)))
		if !slices.Equal(got, want) {
			t.Fatalf("trial %d: ContainsBatch %v, want %v", trial, got, want)
		}
	}
}

// TestPreparedReuse checks that Set replaces what a Prepared held, from a
// long element to a short one and back, and that the zero value is the
// empty element.
func TestPreparedReuse(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	f := randomFilter(r, 50, 7, -1)
	var p Prepared
	if f.ContainsPrepared(&p) != f.Contains(nil) {
		t.Fatal("the zero Prepared is not the empty element")
	}
	for _, n := range []int{200, 3, MaxPreparedLen + 1, MaxPreparedLen, 0, 20} {
		e := randBytes(r, n)
		p.Set(e)
		for seed := uint32(0); seed < 5; seed++ {
			if got, want := p.hash(seed*seedStep+f.tweak), MurmurHash3(seed*seedStep+f.tweak, e); got != want {
				t.Fatalf("%d bytes: hash %08x, MurmurHash3 %08x", n, got, want)
			}
		}
	}
}

// TestPreparedAllocs checks that preparing and testing allocate nothing.
func TestPreparedAllocs(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	f := randomFilter(r, 1893, 15, -1)
	e := randBytes(r, 20)
	ps := make([]Prepared, 300)
	matched := make([]int32, 0, len(ps))
	allocs := testing.AllocsPerRun(100, func() {
		for j := range ps {
			ps[j].Set(e)
		}
		_ = f.ContainsPrepared(&ps[0])
		matched = f.ContainsBatch(ps, matched[:0])
	})
	if allocs != 0 {
		t.Fatalf("%v allocations per run", allocs)
	}
}

// FuzzContainsPrepared checks ContainsPrepared and ContainsBatch against
// Contains for a fuzzed bit array, hash count, tweak and element.
func FuzzContainsPrepared(f *testing.F) {
	f.Add([]byte{0x61, 0x4e, 0x9b}, uint8(5), uint32(0), []byte{0x99, 0x10, 0x8a, 0xd8, 0xed})
	f.Add([]byte{}, uint8(3), uint32(1), []byte("x"))
	f.Add([]byte{0xff, 0xff}, uint8(0), uint32(9), make([]byte, 100))
	f.Add(make([]byte, 40), uint8(50), uint32(0xFBA4C795), make([]byte, MaxPreparedLen))
	f.Fuzz(func(t *testing.T, bitArray []byte, k uint8, tweak uint32, elem []byte) {
		flt, err := NewFilterFromParams(bitArray, uint32(k)%(MaxHashFuncs+1), tweak, wire.BloomUpdateNone)
		if err != nil {
			return // too large a bit array
		}
		want := flt.Contains(elem)
		p := Prepare(elem)
		if got := flt.ContainsPrepared(&p); got != want {
			t.Fatalf("ContainsPrepared %v, Contains %v", got, want)
		}
		got := flt.ContainsBatch([]Prepared{p, {}}, nil)
		if (len(got) > 0 && got[0] == 0) != want || (flt.Contains(nil) != (len(got) > 0 && got[len(got)-1] == 1)) {
			t.Fatalf("ContainsBatch %v, Contains %v and %v for the empty element", got, want, flt.Contains(nil))
		}
	})
}
