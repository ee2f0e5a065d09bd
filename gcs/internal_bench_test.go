package gcs

import (
	"math/bits"
	"math/rand/v2"
	"slices"
	"strconv"
	"testing"

	"github.com/aead/siphash"
)

// BenchmarkSipHash compares the specialised SipHash-2-4 with the
// github.com/aead/siphash reference on a 25-byte element.
func BenchmarkSipHash(b *testing.B) {
	var key [16]byte
	msg := make([]byte, 25)
	b.Run("specialised", func(b *testing.B) {
		k := newSipKey(&key)
		var s uint64
		for b.Loop() {
			s += k.sum64(msg)
		}
		_ = s
	})
	b.Run("aead", func(b *testing.B) {
		var s uint64
		for b.Loop() {
			s += siphash.Sum64(msg, &key)
		}
		_ = s
	})
}

// BenchmarkSort compares slices.Sort with the bucket and the radix sorts
// on hashed values (the choice of bucketMin and bucketMax).
func BenchmarkSort(b *testing.B) {
	for _, n := range []int{64, 256, 512, 1000, 5000, 10000, 20000} {
		rng := rand.New(rand.NewPCG(1, uint64(n)))
		limit := uint64(n) * BasicM
		src := make([]uint64, n)
		for i := range src {
			src[i] = rng.Uint64N(limit)
		}
		v := make([]uint64, n)
		tmp := make([]uint64, n)
		b.Run("n"+strconv.Itoa(n)+"/slices", func(b *testing.B) {
			for b.Loop() {
				copy(v, src)
				slices.Sort(v)
			}
		})
		b.Run("n"+strconv.Itoa(n)+"/bucket", func(b *testing.B) {
			for b.Loop() {
				copy(v, src)
				if !bucketSort(v, tmp, limit) {
					b.Fatal("crowded bucket")
				}
			}
		})
		b.Run("n"+strconv.Itoa(n)+"/radix", func(b *testing.B) {
			for b.Loop() {
				copy(v, src)
				radixSort(v, tmp, bits.Len64(limit))
			}
		})
	}
}

// BenchmarkValues measures the decoder alone: all 5,000 values of a
// basic-parameter filter.
func BenchmarkValues(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 2))
	f, err := Build([16]byte{}, BasicP, BasicM, randElements(rng, benchN, 25))
	if err != nil {
		b.Fatal(err)
	}
	dst := make([]uint64, 0, benchN)
	for b.Loop() {
		dst = f.Values(dst[:0])
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/benchN, "ns/element")
}

// BenchmarkValidateScan measures the one-pass validation of a
// 5,000-value basic filter with no queries: by one decoder, and split
// between two interleaved decoders.
func BenchmarkValidateScan(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 2))
	f, err := Build([16]byte{}, BasicP, BasicM, randElements(rng, benchN, 25))
	if err != nil {
		b.Fatal(err)
	}
	data := f.Bytes()
	for _, c := range []struct {
		name    string
		scratch []uint64
	}{{"one", nil}, {"split", make([]uint64, splitLen(data))}} {
		b.Run(c.name, func(b *testing.B) {
			t := startCPU(b)
			i := 0
			for ; b.Loop(); i++ {
				if _, ok := scanMatch(data, benchN, BasicP, f.modulus, nil, false, c.scratch); !ok {
					b.Fatal("invalid")
				}
			}
			t.stopPerElement(i)
		})
	}
}
