package gcs

import (
	"bytes"
	"errors"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"

	btcgcs "github.com/btcsuite/btcd/btcutil/gcs"
)

// checkMatchBytes holds the one-pass path to the strict decoder on one
// input: MatchNBytes accepts and rejects exactly what FromNBytes does,
// with the same error, answers as Matcher.Match on the decoded filter,
// and reaches its verdict without the decoder's help (scanMatch agrees
// with validate). When the filter is valid, the early-exit mode gives the
// same answer. It returns the decoded filter (nil if invalid) and the
// answer.
func checkMatchBytes(t *testing.T, p uint8, m uint64, nbytes []byte, key [16]byte, watch [][]byte) (*Filter, bool) {
	t.Helper()
	mt := NewMatcher(watch)
	got, err := mt.MatchNBytes(p, m, nbytes, key, false)
	f, ferr := FromNBytes(p, m, nbytes)
	if (err == nil) != (ferr == nil) || err != nil && err.Error() != ferr.Error() {
		t.Fatalf("P=%d M=%d %x: MatchNBytes error %v, FromNBytes %v", p, m, nbytes, err, ferr)
	}
	// The scan's own verdict, without the fallback.
	if n, size, modulus, herr := readHeader(p, m, nbytes); herr == nil {
		var q []uint64
		if n > 0 && len(watch) > 0 {
			q = mt.hashes(key, modulus)
		}
		// The lookup path's decoder, where N fits the bytes.
		if uint64(n)*uint64(p+1) <= 8*uint64(len(nbytes)) {
			if valid := decodeChecked(nbytes[size:], uint32(n), uint(p), modulus, make([]uint64, n)); valid != (ferr == nil) {
				t.Fatalf("P=%d M=%d %x: decodeChecked %v, FromNBytes %v", p, m, nbytes, valid, ferr)
			}
		}
		// One decoder, and two where the stream may be split.
		for _, scratch := range [][]uint64{nil, make([]uint64, splitLen(nbytes[size:]))} {
			found, valid := scanMatch(nbytes[size:], uint32(n), uint(p), modulus, q, false, scratch)
			if valid != (ferr == nil) {
				t.Fatalf("P=%d M=%d %x: scan (scratch %d) valid=%v, FromNBytes %v", p, m, nbytes, len(scratch), valid, ferr)
			}
			if valid && found != got {
				t.Fatalf("scan (scratch %d) found=%v, MatchNBytes %v", len(scratch), found, got)
			}
		}
	}
	// The early-exit mode never panics; on a valid filter it agrees.
	early, eerr := mt.Clone().MatchNBytes(p, m, nbytes, key, true)
	if ferr != nil {
		return nil, false
	}
	want := NewMatcher(watch).Match(f, key)
	if got != want {
		t.Fatalf("P=%d M=%d N=%d W=%d: MatchNBytes %v, Matcher.Match %v", p, m, f.N(), len(watch), got, want)
	}
	if len(watch) > 0 && f.MatchAny(key, watch) != want {
		t.Fatalf("MatchAny disagrees with Matcher.Match")
	}
	if early != want || eerr != nil {
		t.Fatalf("P=%d M=%d N=%d W=%d: early exit %v, %v; want %v", p, m, f.N(), len(watch), early, eerr, want)
	}
	return f, got
}

// TestMatchBytesVectors runs the one-pass path on every official BIP 158
// vector: each element alone and all together match, random items match
// as btcutil says, and damaged copies are rejected as DecodeBasic rejects
// them.
func TestMatchBytesVectors(t *testing.T) {
	rng := rand.New(rand.NewPCG(157, 158))
	for _, v := range loadVectors(t) {
		key := BasicKey(&v.BlockHash)
		elems := basicElements(v.Block, v.PrevScripts)
		bf, err := btcgcs.FromNBytes(BasicP, BasicM, v.Filter)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range elems {
			if _, ok := checkMatchBytes(t, BasicP, BasicM, v.Filter, key, [][]byte{e}); !ok {
				t.Fatalf("height %d: element %x does not match", v.Height, e)
			}
			if ok, err := NewMatcher([][]byte{e}).MatchBytes(v.Filter, key); !ok || err != nil {
				t.Fatalf("height %d: MatchBytes(%x) = %v, %v", v.Height, e, ok, err)
			}
		}
		if len(elems) > 0 {
			if _, ok := checkMatchBytes(t, BasicP, BasicM, v.Filter, key, elems); !ok {
				t.Fatalf("height %d: the block's elements do not match", v.Height)
			}
		}
		for _, w := range []int{0, 1, 10, 300} {
			watch := randSet(rng, w, 40)
			want, _ := bf.MatchAny(key, watch)
			if _, got := checkMatchBytes(t, BasicP, BasicM, v.Filter, key, watch); got != want {
				t.Fatalf("height %d, W=%d: %v, btcutil %v", v.Height, w, got, want)
			}
		}
		for range 60 {
			checkMatchBytes(t, BasicP, BasicM, damage(rng, v.Filter, 0), key, elems)
		}
	}
}

// damage returns a copy of b cut short, extended by a byte, with a bit
// flipped or with a byte of ones (a long unary run), the change at or
// after offset from.
func damage(rng *rand.Rand, b []byte, from int) []byte {
	bad := bytes.Clone(b)
	at := from + rng.IntN(len(bad)-from)
	switch rng.IntN(4) {
	case 0:
		return bad[:at]
	case 1:
		return append(bad, byte(rng.Uint32()))
	case 2:
		bad[at] ^= 1 << rng.IntN(8)
	default:
		bad[at] = 0xff
	}
	return bad
}

// valueElements returns the elements whose hashes are the smallest and
// the largest value of a filter built from elems with key.
func valueElements(key [16]byte, modulus uint64, elems [][]byte) (first, last []byte) {
	k := newSipKey(&key)
	var lo, hi uint64
	for i, e := range elems {
		v := reduce(k.sum64(e), modulus)
		if i == 0 || v < lo {
			lo, first = v, e
		}
		if i == 0 || v > hi {
			hi, last = v, e
		}
	}
	return first, last
}

// TestMatchBytesRandom is the property test: random filters with P from 1
// to 32, empty ones included, watch lists of 0 to 20,000 items with
// duplicates, hits at the first and the last value, and btcutil's answer.
func TestMatchBytesRandom(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	sizes := []int{0, 1, 2, 63, 64, 65, 200, 1000, 3000}
	watchSizes := []int{0, 1, 2, 10, 100, 1000, 20000}
	for i := 0; i < 400; i++ {
		p := uint8(1 + i%32)
		m := uint64(1) << (p - 1)
		m += uint64(rng.IntN(int(min(m, 1<<20)) + 1))
		if i%4 == 0 {
			m = uint64(1 + rng.IntN(64)) // frequent false positives
		}
		n := sizes[rng.IntN(len(sizes))]
		key := randKey(rng)
		elems := randSet(rng, n, 30)
		built, err := Build(key, p, m, elems)
		if err != nil {
			t.Fatal(err)
		}
		nbytes := built.NBytes()
		w := watchSizes[rng.IntN(len(watchSizes))]
		if w == 20000 && i%8 != 0 {
			w = 3000 // keep the test quick: a few full-size lists
		}
		watch := randSet(rng, w, 30)
		if w > 4 {
			// Duplicates.
			watch[1] = watch[0]
			watch[w-1] = watch[w/2]
		}
		var cases [][][]byte
		cases = append(cases, watch)
		if n > 0 {
			first, last := valueElements(key, uint64(n)*m, elems)
			for _, e := range [][]byte{first, last, elems[rng.IntN(n)]} {
				hit := append(slices.Clone(watch), e)
				if len(watch) > 0 {
					hit[0], hit[len(hit)-1] = hit[len(hit)-1], hit[0]
				}
				cases = append(cases, hit)
			}
			cases = append(cases, [][]byte{first, first, first})
		}
		bf, _ := btcgcs.FromNBytes(p, m, nbytes)
		for c, wl := range cases {
			_, got := checkMatchBytes(t, p, m, nbytes, key, wl)
			if c > 0 && !got {
				t.Fatalf("P=%d M=%d N=%d: case %d, a member does not match", p, m, n, c)
			}
			if n > 0 && len(wl) > 0 {
				if want, err := bf.MatchAny(key, wl); err != nil || got != want {
					t.Fatalf("P=%d M=%d N=%d W=%d: %v, btcutil %v (%v)", p, m, n, len(wl), got, want, err)
				}
			}
		}
		for range 4 {
			checkMatchBytes(t, p, m, damage(rng, nbytes, 0), key, watch)
		}
	}
}

// TestMatchBytesErrors checks that each kind of malformed filter is
// rejected with the decoder's sentinel error, hit or miss.
func TestMatchBytesErrors(t *testing.T) {
	key := [16]byte{7}
	elems := [][]byte{{1}, {2}, {3}}
	good, _ := Build(key, BasicP, BasicM, elems)
	gb := good.NBytes()
	for _, tt := range []struct {
		name string
		p    uint8
		m    uint64
		in   []byte
		want error
	}{
		{"empty input", BasicP, BasicM, nil, ErrTruncated},
		{"non-canonical N", BasicP, BasicM, []byte{0xfd, 0x05, 0x00}, ErrNonCanonicalN},
		{"N beyond the bytes", BasicP, BasicM, []byte{0xfe, 0xff, 0xff, 0xff, 0xff, 0, 0, 0}, ErrNTooLarge},
		{"unary runs off the end", BasicP, BasicM, []byte{1, 0xff, 0xff, 0xff}, ErrTruncated},
		{"extra byte", BasicP, BasicM, append(bytes.Clone(gb), 0), ErrTrailingData},
		{"value = N*M", BasicP, 1, append([]byte{1}, streamOf(BasicP, 1)...), ErrValueOutOfRange},
		{"P = 33", 33, BasicM, []byte{0}, ErrBadP},
		{"M = 0", BasicP, 0, []byte{0}, ErrBadM},
	} {
		t.Run(tt.name, func(t *testing.T) {
			for _, watch := range [][][]byte{nil, elems, {{9}}} {
				for _, verified := range []bool{false, true} {
					ok, err := NewMatcher(watch).MatchNBytes(tt.p, tt.m, tt.in, key, verified)
					if verified {
						// Early exit may answer before the defect; if it
						// reports one, it is the decoder's.
						if err != nil && !errors.Is(err, tt.want) {
							t.Fatalf("verified: %v, want %v", err, tt.want)
						}
						continue
					}
					if ok || !errors.Is(err, tt.want) {
						t.Fatalf("MatchNBytes = %v, %v; want %v", ok, err, tt.want)
					}
				}
			}
		})
	}
}

func TestMatchBytesZeroAllocs(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 9))
	key := randKey(rng)
	elems := randSet(rng, 5000, 25)
	f, _ := Build(key, BasicP, BasicM, elems)
	nbytes := f.NBytes()
	for _, w := range []int{0, 1, 10, 100, 1000, 10000} {
		watch := randSet(rng, w, 25)
		if w > 0 {
			watch[w/2] = elems[w%len(elems)]
		}
		m := NewMatcher(watch)
		m.MatchBytes(nbytes, key) // the first call sizes the buffers
		for _, fn := range []func() (bool, error){
			func() (bool, error) { return m.MatchBytes(nbytes, key) },
			func() (bool, error) { return m.MatchVerifiedBytes(nbytes, key) },
		} {
			if a := testing.AllocsPerRun(20, func() {
				if ok, err := fn(); ok != (w > 0) || err != nil {
					t.Fatalf("W=%d: %v, %v", w, ok, err)
				}
			}); a != 0 {
				t.Errorf("W=%d: %v allocs", w, a)
			}
		}
	}
}

// TestMatcherClone matches on several goroutines, each with its own
// Clone of one Matcher.
func TestMatcherClone(t *testing.T) {
	rng := rand.New(rand.NewPCG(10, 10))
	watch := randSet(rng, 500, 25)
	m := NewMatcher(watch)
	type block struct {
		key    [16]byte
		nbytes []byte
		want   bool
	}
	var blocks []block
	for i := range 40 {
		key := randKey(rng)
		elems := randSet(rng, 1000, 25)
		if i%2 == 0 {
			elems[i] = watch[i]
		}
		f, _ := Build(key, BasicP, BasicM, elems)
		blocks = append(blocks, block{key, f.NBytes(), m.Match(f, key)})
	}
	var wg sync.WaitGroup
	errs := make(chan error, 4)
	for range 4 {
		c := m.Clone()
		wg.Go(func() {
			for range 20 {
				for _, b := range blocks {
					if ok, err := c.MatchBytes(b.nbytes, b.key); ok != b.want || err != nil {
						errs <- errors.New("a clone answers differently")
						return
					}
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
}

// TestMatchBytesSplit exercises the two-decoder path on basic filters
// large enough to be split: members at the first and last value, around
// the middle and at random match; damaged copies, mostly in the second
// half where the second decoder runs, are rejected as DecodeBasic
// rejects them; and the two decoders do join (the first takes over the
// second's position) on nearly every filter.
func TestMatchBytesSplit(t *testing.T) {
	rng := rand.New(rand.NewPCG(12, 13))
	joined, total := 0, 0
	for i := range 150 {
		n := 400 + rng.IntN(6000)
		key := randKey(rng)
		elems := randSet(rng, n, 30)
		f, err := Build(key, BasicP, BasicM, elems)
		if err != nil {
			t.Fatal(err)
		}
		nbytes := f.NBytes()
		size := compactSizeLen(uint64(n))
		data := nbytes[size:]
		if !canSplit(uint32(n), BasicP, f.modulus, data) {
			continue
		}
		total++
		// Did the decoders join? With no queries A runs until the join.
		s := scanner{r: bitReader{data: data}, left: uint32(n), p: BasicP, modulus: f.modulus, fast: true}
		s.setLimit()
		if st := s.split(make([]uint64, splitLen(data))); st != scanMore {
			t.Fatalf("split of a valid filter: %v", st)
		}
		if s.r.pos > len(data)*3/4 {
			joined++
		}
		values := f.Values(nil)
		k := newSipKey(&key)
		byValue := func(target uint64) []byte {
			for _, e := range elems {
				if reduce(k.sum64(e), f.modulus) == target {
					return e
				}
			}
			t.Fatal("no element for a value")
			return nil
		}
		watch := randSet(rng, rng.IntN(50), 30)
		for _, at := range []int{0, n - 1, n / 2, n/2 + 1 + rng.IntN(30), rng.IntN(n)} {
			hit := append(slices.Clone(watch), byValue(values[at]))
			if _, ok := checkMatchBytes(t, BasicP, BasicM, nbytes, key, hit); !ok {
				t.Fatalf("filter %d: value %d of %d does not match", i, at, n)
			}
		}
		checkMatchBytes(t, BasicP, BasicM, nbytes, key, watch)
		for range 6 {
			checkMatchBytes(t, BasicP, BasicM, damage(rng, nbytes, len(nbytes)/2), key, watch)
		}
	}
	if total < 100 || joined < total*95/100 {
		t.Fatalf("the decoders joined on %d of %d split filters", joined, total)
	}
	t.Logf("joined on %d of %d split filters", joined, total)
}
