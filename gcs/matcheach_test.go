package gcs

import (
	"bytes"
	"math/rand/v2"
	"strconv"
	"testing"
)

// checkMatchEach holds MatchEach to Match, element by element, with dst
// given dirty and too short.
func checkMatchEach(t testing.TB, f *Filter, key [16]byte, queries [][]byte) {
	t.Helper()
	dst := []bool{true, true, true}
	got := f.MatchEach(key, queries, dst)
	if len(got) != len(queries) {
		t.Fatalf("%d answers for %d queries", len(got), len(queries))
	}
	for i, q := range queries {
		if want := f.Match(key, q); got[i] != want {
			t.Fatalf("query %d (%x): MatchEach %v, Match %v (N=%d P=%d M=%d)", i, q, got[i], want, f.N(), f.P(), f.M())
		}
	}
}

func TestMatchEach(t *testing.T) {
	t.Run("bip158", func(t *testing.T) {
		rng := rand.New(rand.NewPCG(7, 158))
		for _, v := range loadVectors(t) {
			d, err := DecodeBasic(v.Filter)
			if err != nil {
				t.Fatal(err)
			}
			key := BasicKey(&v.BlockHash)
			// The block's own elements, others, and repeats of both.
			q := append(basicElements(v.Block, v.PrevScripts), randSet(rng, 50, 40)...)
			q = append(q, q[:len(q)/3]...)
			checkMatchEach(t, d, key, q)
		}
	})
	rng := rand.New(rand.NewPCG(1, 9))
	for _, c := range []struct {
		n, q int
		p    uint8
		m    uint64
	}{
		{0, 5, BasicP, BasicM}, {1, 1, BasicP, BasicM}, {5000, 10, BasicP, BasicM}, {5000, 3000, BasicP, BasicM},
		{200, 5000, BasicP, BasicM}, {300, 400, 2, 3}, {64, 64, 8, 200}, {100, 50, 32, 1 << 33}, {100, 5000, 32, 1 << 50}, // the last too wide to pack positions
	} {
		t.Run(strconv.Itoa(c.n)+"x"+strconv.Itoa(c.q)+"/P"+strconv.Itoa(int(c.p)), func(t *testing.T) {
			var key [16]byte
			key[0] = byte(c.n)
			elems := randSet(rng, c.n, 30)
			f, err := Build(key, c.p, c.m, elems)
			if err != nil {
				t.Fatal(err)
			}
			q := randSet(rng, c.q, 30)
			for i := range q {
				if i%3 == 0 && len(elems) > 0 {
					q[i] = elems[rng.IntN(len(elems))] // a member
				}
			}
			checkMatchEach(t, f, key, q)
			if c.n > 0 && c.q > 0 {
				// Every member answers true.
				for i, ok := range f.MatchEach(key, elems, nil) {
					if !ok {
						t.Fatalf("member %d (%x) not matched", i, elems[i])
					}
				}
			}
		})
	}
}

// FuzzMatchEach builds a filter of half of a fuzz-derived element list
// and holds MatchEach on the whole list to Match, element by element,
// under the basic parameters and under ones taken from the key.
func FuzzMatchEach(f *testing.F) {
	f.Add([]byte("0123456789abcdef"), []byte{3, 'a', 'b', 'c', 0, 25, 1, 2, 3})
	f.Add(make([]byte, 16), []byte{})
	f.Add([]byte("key-key-key-key!"), bytes.Repeat([]byte{5, 1, 2, 3, 4, 5}, 40))
	f.Add([]byte("\x1fnother 16B key."), bytes.Repeat([]byte{2, 0, 20, 3, 1, 2, 3}, 70))
	f.Fuzz(func(t *testing.T, keyBytes, data []byte) {
		var key [16]byte
		copy(key[:], keyBytes)
		elems := splitElements(data)
		p := 1 + key[0]%32
		m := 1 + uint64(key[1])<<(p-1)>>7 + uint64(key[2])
		for _, pm := range []struct {
			p uint8
			m uint64
		}{{BasicP, BasicM}, {p, m}} {
			fl, err := Build(key, pm.p, pm.m, elems[:len(elems)/2])
			if err != nil {
				t.Fatal(err)
			}
			checkMatchEach(t, fl, key, elems)
		}
	})
}

// BenchmarkMatchEach is MatchEach beside MatchAny on the same filter and
// queries (those of BenchmarkMatchAny): the price of answering every
// query instead of stopping at the first.
func BenchmarkMatchEach(b *testing.B) {
	s := newBenchSet(b)
	for _, q := range []int{10, 100, 1000, 3000, 10000} {
		queries := randElements(rand.New(rand.NewPCG(5, uint64(q))), q, 25)
		name := "N5000/Q" + strconv.Itoa(q)
		dst := make([]bool, q)
		b.Run(name+"/MatchEach", func(b *testing.B) {
			t := startCPU(b)
			n := 0
			for ; b.Loop(); n++ {
				dst = s.ours.MatchEach(s.key, queries, dst)
			}
			t.stop(n)
		})
		b.Run(name+"/MatchAny", func(b *testing.B) {
			t := startCPU(b)
			n := 0
			for ; b.Loop(); n++ {
				s.ours.MatchAny(s.key, queries)
			}
			t.stop(n)
		})
	}
}
