package gcs

import (
	"math/rand/v2"
	"strconv"
	"testing"

	btcgcs "github.com/btcsuite/btcd/btcutil/gcs"
	"github.com/btcsuite/btcd/btcutil/gcs/builder"
	"github.com/btcsuite/btcd/wire"
)

// The benchmarks compare this package ("spvfilter") with btcutil's gcs
// package ("btcutil") case by case on the same inputs: filters of 5,000
// random 25-byte elements (the size of a P2PKH script) with the BIP 158
// basic parameters.

const benchN = 5000

func randElements(rng *rand.Rand, n, size int) [][]byte {
	out := make([][]byte, n)
	for i := range out {
		e := make([]byte, size)
		for j := range e {
			e[j] = byte(rng.Uint32())
		}
		out[i] = e
	}
	return out
}

type benchSet struct {
	key    [16]byte
	elems  [][]byte
	ours   *Filter
	theirs *btcgcs.Filter
	nbytes []byte
}

func newBenchSet(b *testing.B) *benchSet {
	rng := rand.New(rand.NewPCG(1, 2))
	s := &benchSet{elems: randElements(rng, benchN, 25)}
	for i := range s.key {
		s.key[i] = byte(rng.Uint32())
	}
	var err error
	if s.ours, err = Build(s.key, BasicP, BasicM, s.elems); err != nil {
		b.Fatal(err)
	}
	if s.theirs, err = btcgcs.BuildGCSFilter(BasicP, BasicM, s.key, s.elems); err != nil {
		b.Fatal(err)
	}
	s.nbytes = s.ours.NBytes()
	return s
}

func BenchmarkBuild(b *testing.B) {
	s := newBenchSet(b)
	b.Run("N5000/spvfilter", func(b *testing.B) {
		t := startCPU(b)
		n := 0
		for ; b.Loop(); n++ {
			if _, err := Build(s.key, BasicP, BasicM, s.elems); err != nil {
				b.Fatal(err)
			}
		}
		t.stopPerElement(n)
	})
	b.Run("N5000/btcutil", func(b *testing.B) {
		t := startCPU(b)
		n := 0
		for ; b.Loop(); n++ {
			if _, err := btcgcs.BuildGCSFilter(BasicP, BasicM, s.key, s.elems); err != nil {
				b.Fatal(err)
			}
		}
		t.stopPerElement(n)
	})
}

func BenchmarkMatch(b *testing.B) {
	s := newBenchSet(b)
	// Queries not in the set: each walks on average half the filter.
	queries := randElements(rand.New(rand.NewPCG(3, 4)), 256, 25)
	b.Run("N5000/spvfilter", func(b *testing.B) {
		t := startCPU(b)
		i := 0
		for ; b.Loop(); i++ {
			s.ours.Match(s.key, queries[i%len(queries)])
		}
		t.stop(i)
	})
	b.Run("N5000/btcutil", func(b *testing.B) {
		t := startCPU(b)
		i := 0
		for ; b.Loop(); i++ {
			if _, err := s.theirs.Match(s.key, queries[i%len(queries)]); err != nil {
				b.Fatal(err)
			}
		}
		t.stop(i)
	})
}

func BenchmarkMatchAny(b *testing.B) {
	s := newBenchSet(b)
	for _, q := range []int{10, 100, 1000, 10000} {
		queries := randElements(rand.New(rand.NewPCG(5, uint64(q))), q, 25)
		name := "N5000/Q" + strconv.Itoa(q)
		b.Run(name+"/spvfilter", func(b *testing.B) {
			t := startCPU(b)
			n := 0
			for ; b.Loop(); n++ {
				s.ours.MatchAny(s.key, queries)
			}
			t.stop(n)
		})
		b.Run(name+"/btcutil", func(b *testing.B) {
			t := startCPU(b)
			n := 0
			for ; b.Loop(); n++ {
				if _, err := s.theirs.MatchAny(s.key, queries); err != nil {
					b.Fatal(err)
				}
			}
			t.stop(n)
		})
	}
}

// BenchmarkMatcher matches a fixed watch list of 1,000 scripts against a
// filter with a reused Matcher; btcutil has no such type, so its side is
// MatchAny on the same list.
func BenchmarkMatcher(b *testing.B) {
	s := newBenchSet(b)
	watch := randElements(rand.New(rand.NewPCG(6, 7)), 1000, 25)
	b.Run("N5000/Q1000/spvfilter", func(b *testing.B) {
		m := NewMatcher(watch)
		t := startCPU(b)
		n := 0
		for ; b.Loop(); n++ {
			m.Match(s.ours, s.key)
		}
		t.stop(n)
	})
	b.Run("N5000/Q1000/btcutil", func(b *testing.B) {
		t := startCPU(b)
		n := 0
		for ; b.Loop(); n++ {
			if _, err := s.theirs.MatchAny(s.key, watch); err != nil {
				b.Fatal(err)
			}
		}
		t.stop(n)
	})
}

// BenchmarkBuildBasic builds the basic filter of a block of 2,500
// transactions with two 25-byte outputs each and 2,500 spent scripts,
// against btcutil's builder.BuildBasicFilter.
func BenchmarkBuildBasic(b *testing.B) {
	rng := rand.New(rand.NewPCG(8, 9))
	block := &wire.MsgBlock{}
	for range 2500 {
		tx := wire.NewMsgTx(2)
		tx.AddTxIn(&wire.TxIn{})
		for _, e := range randElements(rng, 2, 25) {
			tx.AddTxOut(&wire.TxOut{Value: 1, PkScript: e})
		}
		block.Transactions = append(block.Transactions, tx)
	}
	prev := randElements(rng, 2500, 25)
	b.Run("N7500/spvfilter", func(b *testing.B) {
		t := startCPU(b)
		n := 0
		for ; b.Loop(); n++ {
			if _, err := BuildBasic(block, prev); err != nil {
				b.Fatal(err)
			}
		}
		t.stop(n)
	})
	b.Run("N7500/btcutil", func(b *testing.B) {
		t := startCPU(b)
		n := 0
		for ; b.Loop(); n++ {
			if _, err := builder.BuildBasicFilter(block, prev); err != nil {
				b.Fatal(err)
			}
		}
		t.stop(n)
	})
}

// BenchmarkDecode measures decoding a whole untrusted filter. Ours is
// FromNBytes, which validates by decoding every value and indexes the
// filter for later queries. btcutil's FromNBytes only copies the bytes, so
// its full decode is FromNBytes plus a Match of an element that sorts
// after every value, which decodes them all.
func BenchmarkDecode(b *testing.B) {
	s := newBenchSet(b)
	b.Run("N5000/spvfilter", func(b *testing.B) {
		t := startCPU(b)
		n := 0
		for ; b.Loop(); n++ {
			if _, err := FromNBytes(BasicP, BasicM, s.nbytes); err != nil {
				b.Fatal(err)
			}
		}
		t.stopPerElement(n)
	})
	b.Run("N5000/btcutil", s.btcutilDecode)
}

// BenchmarkValidate measures strict validation alone, as the one-pass
// path does it: MatchBytes with an empty watch list, which decodes and
// checks every value and keeps nothing. btcutil's side is its full decode,
// as in BenchmarkDecode.
func BenchmarkValidate(b *testing.B) {
	s := newBenchSet(b)
	b.Run("N5000/spvfilter", func(b *testing.B) {
		m := NewMatcher(nil)
		t := startCPU(b)
		n := 0
		for ; b.Loop(); n++ {
			if _, err := m.MatchBytes(s.nbytes, s.key); err != nil {
				b.Fatal(err)
			}
		}
		t.stopPerElement(n)
	})
	b.Run("N5000/btcutil", s.btcutilDecode)
}

// btcutilDecode decodes s's filter in full with btcutil: FromNBytes, then a
// Match of an element that sorts after every value.
func (s *benchSet) btcutilDecode(b *testing.B) {
	values := s.ours.Values(nil)
	last := values[len(values)-1]
	k := newSipKey(&s.key)
	var beyond []byte
	for i := 0; beyond == nil; i++ {
		e := []byte("beyond-" + strconv.Itoa(i))
		if reduce(k.sum64(e), uint64(benchN)*BasicM) > last {
			beyond = e
		}
	}
	t := startCPU(b)
	n := 0
	for ; b.Loop(); n++ {
		f, err := btcgcs.FromNBytes(BasicP, BasicM, s.nbytes)
		if err != nil {
			b.Fatal(err)
		}
		if ok, err := f.Match(s.key, beyond); ok || err != nil {
			b.Fatal("query beyond the last value matched", err)
		}
	}
	t.stopPerElement(n)
}

// BenchmarkDecodeMatch is one query against a filter fresh from the wire,
// the whole cost per block of a light client watching one script: ours
// validates the filter (FromNBytes) and then matches; btcutil's FromNBytes
// copies the bytes and its Match decodes up to the query.
func BenchmarkDecodeMatch(b *testing.B) {
	s := newBenchSet(b)
	queries := randElements(rand.New(rand.NewPCG(8, 9)), 256, 25)
	b.Run("N5000/spvfilter", func(b *testing.B) {
		t := startCPU(b)
		i := 0
		for ; b.Loop(); i++ {
			f, err := FromNBytes(BasicP, BasicM, s.nbytes)
			if err != nil {
				b.Fatal(err)
			}
			f.Match(s.key, queries[i%len(queries)])
		}
		t.stop(i)
	})
	b.Run("N5000/btcutil", func(b *testing.B) {
		t := startCPU(b)
		i := 0
		for ; b.Loop(); i++ {
			f, err := btcgcs.FromNBytes(BasicP, BasicM, s.nbytes)
			if err != nil {
				b.Fatal(err)
			}
			if _, err := f.Match(s.key, queries[i%len(queries)]); err != nil {
				b.Fatal(err)
			}
		}
		t.stop(i)
	})
}
