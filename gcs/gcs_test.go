package gcs

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/aead/siphash"
	btcgcs "github.com/btcsuite/btcd/btcutil/gcs"
	"github.com/btcsuite/btcd/btcutil/gcs/builder"
	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/btcsuite/btcd/wire"
)

func randBytes(rng *rand.Rand, n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(rng.Uint32())
	}
	return b
}

func randKey(rng *rand.Rand) [16]byte {
	var k [16]byte
	copy(k[:], randBytes(rng, 16))
	return k
}

// randSet returns n random elements of length 0..maxLen, some repeated.
func randSet(rng *rand.Rand, n, maxLen int) [][]byte {
	out := make([][]byte, n)
	for i := range out {
		if i > 0 && rng.IntN(10) == 0 {
			out[i] = out[rng.IntN(i)]
			continue
		}
		out[i] = randBytes(rng, rng.IntN(maxLen+1))
	}
	return out
}

func TestSipHashMatchesReference(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 1))
	for i := 0; i < 20000; i++ {
		key := randKey(rng)
		msg := randBytes(rng, rng.IntN(300))
		if got, want := newSipKey(&key).sum64(msg), siphash.Sum64(msg, &key); got != want {
			t.Fatalf("key %x msg %x: sum64 %#x, aead/siphash %#x", key, msg, got, want)
		}
		// The two-message form, on equal and on different lengths.
		other := randBytes(rng, len(msg))
		if i%2 == 0 {
			other = randBytes(rng, rng.IntN(300))
		}
		g0, g1 := newSipKey(&key).sum64x2(msg, other)
		if w0, w1 := siphash.Sum64(msg, &key), siphash.Sum64(other, &key); g0 != w0 || g1 != w1 {
			t.Fatalf("key %x: sum64x2(%x, %x) = %#x, %#x; want %#x, %#x", key, msg, other, g0, g1, w0, w1)
		}
	}
}

func TestReduce(t *testing.T) {
	tests := []struct{ h, mod, want uint64 }{
		{0, 100, 0},
		{^uint64(0), 100, 99},
		{1 << 63, 100, 50},
		{1 << 63, 1, 0},
		{^uint64(0), 1 << 40, 1<<40 - 1},
	}
	for _, tt := range tests {
		if got := reduce(tt.h, tt.mod); got != tt.want {
			t.Errorf("reduce(%#x, %d) = %d, want %d", tt.h, tt.mod, got, tt.want)
		}
	}
}

// TestBuildMatchesBtcutil builds random sets, duplicates included, with
// random parameters and compares the encoding with btcutil's
// gcs.BuildGCSFilter, which does not deduplicate either.
func TestBuildMatchesBtcutil(t *testing.T) {
	rng := rand.New(rand.NewPCG(2, 2))
	for i := 0; i < 300; i++ {
		var n int
		switch i % 3 {
		case 0:
			n = rng.IntN(10)
		case 1:
			n = rng.IntN(300)
		default:
			n = rng.IntN(3000)
		}
		p := uint8(1 + rng.IntN(32))
		// M near 2^P, as GCS parameters are chosen; a far larger M
		// makes unary codes of millions of bits.
		m := 1 + rng.Uint64N(1<<(p+2))
		if i%4 == 0 {
			p, m = BasicP, BasicM
		}
		key := randKey(rng)
		elems := randSet(rng, n, 40)
		ours, err := Build(key, p, m, elems)
		if err != nil {
			t.Fatalf("Build(n=%d, p=%d, m=%d): %v", n, p, m, err)
		}
		theirs, err := btcgcs.BuildGCSFilter(p, m, key, elems)
		if err != nil {
			t.Fatal(err)
		}
		want, _ := theirs.NBytes()
		wantBits, _ := theirs.Bytes()
		if got := ours.NBytes(); !bytes.Equal(got, want) {
			// btcutil's bit writer (kkdai/bstream) appends a zero byte
			// when its last write is a whole byte that ends on a byte
			// boundary, which happens when P is a multiple of 8. BIP 158
			// pads only to the next byte boundary, and Bitcoin Core
			// rejects the extra byte, as does FromNBytes.
			if p%8 != 0 || !bytes.Equal(append(got, 0), want) {
				t.Fatalf("n=%d p=%d m=%d: NBytes differ from btcutil\n got %x\nwant %x", n, p, m, got, want)
			}
			if _, err := FromNBytes(p, m, want); !errors.Is(err, ErrTrailingData) {
				t.Fatalf("btcutil's padded filter decodes: %v", err)
			}
			want, wantBits = got, wantBits[:len(wantBits)-1]
		}
		if !bytes.Equal(ours.Bytes(), wantBits) || ours.N() != theirs.N() || ours.P() != theirs.P() || ours.M() != m {
			t.Fatalf("n=%d: Bytes/N/P/M differ from btcutil", n)
		}
		// Decoding our encoding gives the same filter back.
		back, err := FromNBytes(p, m, ours.NBytes())
		if err != nil {
			t.Fatalf("n=%d p=%d m=%d: FromNBytes of a built filter: %v", n, p, m, err)
		}
		if !bytes.Equal(back.NBytes(), want) {
			t.Fatal("round trip changed the filter")
		}
		if back2, err := FromBytes(uint32(n), p, m, ours.Bytes()); err != nil || !bytes.Equal(back2.NBytes(), want) {
			t.Fatalf("FromBytes round trip: %v", err)
		}
		// Values are the sorted reduced hashes.
		modulus := uint64(n) * m
		var hv []uint64
		for _, e := range elems {
			hv = append(hv, reduce(siphash.Sum64(e, &key), modulus))
		}
		slices.Sort(hv)
		if got := ours.Values(nil); !slices.Equal(got, hv) && !(len(got) == 0 && len(hv) == 0) {
			t.Fatalf("n=%d: Values differ from the sorted hashes", n)
		}
	}
}

// TestMatchMatchesBtcutil queries random filters with members and
// non-members and compares with btcutil's Match and ZipMatchAny.
func TestMatchMatchesBtcutil(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 3))
	for i := 0; i < 200; i++ {
		n := rng.IntN(2000)
		p := uint8(1 + rng.IntN(32))
		// A small M makes false positives frequent, so that they are
		// compared too.
		m := uint64(1 + rng.IntN(64))
		if i%2 == 0 {
			p, m = BasicP, BasicM
		}
		key := randKey(rng)
		elems := randSet(rng, n, 30)
		ours, err := Build(key, p, m, elems)
		if err != nil {
			t.Fatal(err)
		}
		theirs, _ := btcgcs.BuildGCSFilter(p, m, key, elems)
		for _, e := range elems {
			if !ours.Match(key, e) {
				t.Fatalf("n=%d p=%d m=%d: member %x does not match", n, p, m, e)
			}
		}
		queries := randSet(rng, 1+rng.IntN(200), 30)
		for j := range queries {
			if n > 0 && rng.IntN(20) == 0 {
				queries[j] = elems[rng.IntN(n)]
			}
		}
		anyWant := false
		for _, q := range queries {
			want, err := theirs.Match(key, q)
			if err != nil {
				t.Fatal(err)
			}
			if got := ours.Match(key, q); got != want {
				t.Fatalf("n=%d p=%d m=%d: Match(%x) = %v, btcutil %v", n, p, m, q, got, want)
			}
			anyWant = anyWant || want
		}
		for _, k := range []int{1, 2, 10, len(queries)} {
			k = min(k, len(queries))
			want := false
			for _, q := range queries[:k] {
				want = want || ours.Match(key, q)
			}
			zip, _ := theirs.ZipMatchAny(key, queries[:k])
			if zip != want && n > 0 {
				t.Fatalf("btcutil ZipMatchAny %v disagrees with its Match", zip)
			}
			if got := ours.MatchAny(key, queries[:k]); got != want {
				t.Fatalf("n=%d p=%d m=%d: MatchAny of %d = %v, want %v", n, p, m, k, got, want)
			}
			if got := NewMatcher(queries[:k]).Match(ours, key); got != want {
				t.Fatalf("n=%d: Matcher of %d = %v, want %v", n, k, got, want)
			}
		}
		if got := ours.MatchAny(key, queries); got != anyWant {
			t.Fatalf("MatchAny = %v, want %v", got, anyWant)
		}
	}
}

// TestMatcherReuse runs one Matcher over many filters with different keys
// and sizes, as a rescan does.
func TestMatcherReuse(t *testing.T) {
	rng := rand.New(rand.NewPCG(4, 4))
	watch := randSet(rng, 700, 34)
	m := NewMatcher(watch)
	if m.Len() != len(watch) {
		t.Fatalf("Len %d", m.Len())
	}
	for i := 0; i < 100; i++ {
		key := randKey(rng)
		elems := randSet(rng, rng.IntN(1000), 34)
		if i%3 == 0 {
			elems = append(elems, watch[rng.IntN(len(watch))])
		}
		f, err := Build(key, BasicP, BasicM, elems)
		if err != nil {
			t.Fatal(err)
		}
		want := false
		for _, w := range watch {
			want = want || f.Match(key, w)
		}
		if got := m.Match(f, key); got != want {
			t.Fatalf("filter %d: Matcher %v, want %v", i, got, want)
		}
		if got := f.MatchAny(key, watch); got != want {
			t.Fatalf("filter %d: MatchAny %v, want %v", i, got, want)
		}
	}
	// The Matcher copied its list: changing the caller's slices does not
	// change what it watches.
	key := randKey(rng)
	f, _ := Build(key, BasicP, BasicM, [][]byte{bytes.Clone(watch[0])})
	watch[0][0] ^= 1
	if !m.Match(f, key) {
		t.Fatal("Matcher shares the caller's element bytes")
	}
}

// randBlock makes a block of up to maxTx random transactions whose
// outputs include empty scripts, OP_RETURN scripts and repeats, plus
// previous output scripts with empty ones and repeats.
func randBlock(rng *rand.Rand, maxTx int) (*wire.MsgBlock, [][]byte) {
	b := &wire.MsgBlock{Header: wire.BlockHeader{Version: 1, Nonce: rng.Uint32()}}
	var pool [][]byte
	script := func() []byte {
		switch r := rng.IntN(10); {
		case r == 0:
			return nil
		case r == 1:
			return append([]byte{0x6a}, randBytes(rng, rng.IntN(40))...)
		case r == 2 && len(pool) > 0:
			return pool[rng.IntN(len(pool))]
		default:
			s := randBytes(rng, 1+rng.IntN(40))
			pool = append(pool, s)
			return s
		}
	}
	for range rng.IntN(maxTx) {
		tx := wire.NewMsgTx(1)
		tx.AddTxIn(&wire.TxIn{PreviousOutPoint: wire.OutPoint{Index: rng.Uint32()}})
		for range rng.IntN(5) {
			tx.AddTxOut(&wire.TxOut{Value: 1, PkScript: script()})
		}
		b.Transactions = append(b.Transactions, tx)
	}
	var prev [][]byte
	for range rng.IntN(maxTx + 10) {
		prev = append(prev, script())
	}
	return b, prev
}

// TestBuildBasicMatchesBtcutil compares BuildBasic, the filter hash and
// the header with btcutil's builder, which deduplicates as BIP 158 says.
func TestBuildBasicMatchesBtcutil(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 5))
	prevHeader := chainhash.Hash{}
	for i := 0; i < 300; i++ {
		// Large blocks take the radix sort path of deduplication.
		maxTx := 30
		if i%10 == 0 {
			maxTx = 800
		}
		block, prev := randBlock(rng, maxTx)
		ours, err := BuildBasic(block, prev)
		if err != nil {
			t.Fatal(err)
		}
		theirs, err := builder.BuildBasicFilter(block, prev)
		if err != nil {
			t.Fatal(err)
		}
		want, _ := theirs.NBytes()
		if got := ours.NBytes(); !bytes.Equal(got, want) {
			t.Fatalf("block %d: basic filter %x, btcutil %x", i, got, want)
		}
		wantHash, _ := builder.GetFilterHash(theirs)
		if got := ours.Hash(); got != wantHash {
			t.Fatalf("block %d: filter hash %v, btcutil %v", i, got, wantHash)
		}
		wantHeader, _ := builder.MakeHeaderForFilter(theirs, prevHeader)
		if got := ours.Header(&prevHeader); got != wantHeader {
			t.Fatalf("block %d: header %v, btcutil %v", i, got, wantHeader)
		}
		prevHeader = wantHeader
		bh := block.BlockHash()
		key := BasicKey(&bh)
		if key != builder.DeriveKey(&bh) {
			t.Fatal("BasicKey differs from btcutil's DeriveKey")
		}
		for _, e := range basicElements(block, prev) {
			if !ours.Match(key, e) {
				t.Fatalf("block %d: element %x does not match", i, e)
			}
		}
	}
}

// TestDedupByContent checks that deduplication compares contents: equal
// elements count once, while distinct elements whose 64-bit hashes
// collide (injected here, since real SipHash collisions cannot be found)
// are both kept, as Bitcoin Core's set of elements keeps them.
func TestDedupByContent(t *testing.T) {
	a, b, c := []byte("a"), []byte("b"), []byte("c")
	tests := []struct {
		name   string
		elems  [][]byte
		hashes []uint64
		wantN  uint32
	}{
		{"duplicates", [][]byte{a, b, bytes.Clone(a), a}, []uint64{5, 9, 5, 5}, 2},
		{"collision", [][]byte{a, b, c}, []uint64{7, 7, 1}, 3},
		{"collision and duplicates", [][]byte{a, b, a, b, c, b}, []uint64{7, 7, 7, 7, 7, 7}, 3},
		{"same top half", [][]byte{a, b, c}, []uint64{1<<32 | 2, 1<<32 | 1, 1 << 32}, 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// Large enough for the radix path, then the comparison path.
			for _, reps := range []int{radixMin, 1} {
				var elems [][]byte
				var hashes []uint64
				for r := range reps {
					for i, e := range tt.elems {
						elems = append(elems, append(bytes.Clone(e), byte(r), byte(r>>8)))
						hashes = append(hashes, tt.hashes[i]+uint64(r)<<40)
					}
				}
				sc := &setScratch{hashes: append(hashes, make([]uint64, len(hashes))...)}
				f, err := sc.buildDistinct(BasicP, BasicM, elems)
				if err != nil {
					t.Fatal(err)
				}
				if want := tt.wantN * uint32(reps); f.N() != want {
					t.Fatalf("reps %d: N = %d, want %d", reps, f.N(), want)
				}
				modulus := uint64(f.N()) * BasicM
				var want []uint64
				seen := map[string]bool{}
				for i, e := range elems {
					if !seen[string(e)] {
						seen[string(e)] = true
						want = append(want, reduce(hashes[i], modulus))
					}
				}
				slices.Sort(want)
				if got := f.Values(nil); !slices.Equal(got, want) {
					i := 0
					for i < min(len(got), len(want)) && got[i] == want[i] {
						i++
					}
					t.Fatalf("reps %d: %d values, want %d; first difference at %d: %v, want %v",
						reps, len(got), len(want), i, got[i:min(len(got), i+4)], want[i:min(len(want), i+4)])
				}
			}
		})
	}
}

func TestEmptyFilter(t *testing.T) {
	f, err := BuildBasic(&wire.MsgBlock{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := f.NBytes(); !bytes.Equal(got, []byte{0}) {
		t.Fatalf("empty filter %x, want 00", got)
	}
	if len(f.Bytes()) != 0 || f.N() != 0 {
		t.Fatal("empty filter has a stream")
	}
	if f.Match([16]byte{}, []byte{1}) || f.MatchAny([16]byte{}, [][]byte{{1}}) || NewMatcher([][]byte{{1}}).Match(f, [16]byte{}) {
		t.Fatal("empty filter matches")
	}
	if s := f.Stats(); s.Bytes != 1 || s.BitsPerElement != 0 {
		t.Fatalf("stats %+v", s)
	}
}

func TestMatchAnyNoQueries(t *testing.T) {
	f, _ := Build([16]byte{}, BasicP, BasicM, [][]byte{{1}})
	if f.MatchAny([16]byte{}, nil) || NewMatcher(nil).Match(f, [16]byte{}) {
		t.Fatal("no queries match")
	}
}

// streamOf encodes the given deltas as a Golomb-Rice stream with
// parameter p, padding with pad (a bit pattern for the last byte's unused
// bits).
func streamOf(p uint, deltas ...uint64) []byte {
	w := refWriter{}
	for _, d := range deltas {
		w.writeCode(d, p)
	}
	w.flush()
	return w.out
}

func TestDecodeErrors(t *testing.T) {
	key := [16]byte{7}
	good, _ := Build(key, BasicP, BasicM, [][]byte{{1}, {2}, {3}})
	gb := good.NBytes()
	// Our 3-value stream has 3*20+q bits; set the last padding bit.
	badPad := bytes.Clone(gb)
	if (len(gb)-1)*8 == 3*20+int(good.Values(nil)[2]>>19) {
		t.Fatal("no padding bits to corrupt")
	}
	badPad[len(badPad)-1] |= 1
	u64 := func(n uint64) []byte { return binary.LittleEndian.AppendUint64([]byte{0xff}, n) }

	tests := []struct {
		name string
		p    uint8
		m    uint64
		in   []byte
		want error
	}{
		{"empty input", BasicP, BasicM, nil, ErrTruncated},
		{"short CompactSize", BasicP, BasicM, []byte{0xfd, 0x01}, ErrTruncated},
		{"non-canonical fd", BasicP, BasicM, []byte{0xfd, 0x05, 0x00}, ErrNonCanonicalN},
		{"non-canonical fe", BasicP, BasicM, []byte{0xfe, 0xff, 0xff, 0, 0}, ErrNonCanonicalN},
		{"non-canonical ff", BasicP, BasicM, u64(1 << 20), ErrNonCanonicalN},
		{"N = 2^32", BasicP, BasicM, u64(1 << 32), ErrNTooLarge},
		{"N = 2^64-1", BasicP, BasicM, u64(^uint64(0)), ErrNTooLarge},
		{"N beyond the bytes", BasicP, BasicM, []byte{0xfe, 0xff, 0xff, 0xff, 0xff, 0, 0, 0}, ErrNTooLarge},
		{"one value, no stream", BasicP, BasicM, []byte{1}, ErrNTooLarge},
		{"one value, 19 bits", BasicP, BasicM, []byte{1, 0, 0, 0}[:3], ErrNTooLarge},
		{"unary runs off the end", BasicP, BasicM, []byte{1, 0xff, 0xff, 0xff}, ErrTruncated},
		{"remainder runs off the end", BasicP, BasicM, append([]byte{1}, 0xff, 0xff, 0xfe, 0), ErrTruncated},
		{"empty filter with a stream", BasicP, BasicM, []byte{0, 0}, ErrTrailingData},
		{"extra byte", BasicP, BasicM, append(bytes.Clone(gb), 0), ErrTrailingData},
		{"non-zero padding", BasicP, BasicM, badPad, ErrTrailingData},
		{"value = N*M", BasicP, 1, append([]byte{1}, streamOf(BasicP, 1)...), ErrValueOutOfRange},
		{"value far out of range", BasicP, BasicM, append([]byte{1}, streamOf(BasicP, 3*BasicM)...), ErrValueOutOfRange},
		{"second value out of range", 4, 3, append([]byte{2}, streamOf(4, 5, 1)...), ErrValueOutOfRange},
		{"P = 0", 0, BasicM, []byte{0}, ErrBadP},
		{"P = 33", 33, BasicM, []byte{0}, ErrBadP},
		{"M = 0", BasicP, 0, []byte{0}, ErrBadM},
		{"N*M overflows", 1, 1 << 63, append([]byte{2}, 0, 0), ErrBadM},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, err := FromNBytes(tt.p, tt.m, tt.in)
			if !errors.Is(err, tt.want) {
				t.Fatalf("FromNBytes(%x) = %v, %v; want %v", tt.in, f, err, tt.want)
			}
			if err.Error() == tt.want.Error() {
				t.Logf("error carries no detail: %v", err)
			}
		})
	}
	// The same stream checks apply to FromBytes.
	if _, err := FromBytes(1, BasicP, BasicM, []byte{0xff, 0xff, 0xff}); !errors.Is(err, ErrTruncated) {
		t.Errorf("FromBytes: %v, want ErrTruncated", err)
	}
	if _, err := FromBytes(0, BasicP, BasicM, []byte{0}); !errors.Is(err, ErrTrailingData) {
		t.Errorf("FromBytes: %v, want ErrTrailingData", err)
	}
	if _, err := Build(key, 0, BasicM, nil); !errors.Is(err, ErrBadP) {
		t.Errorf("Build with P=0: %v", err)
	}
	// Valid edge cases decode.
	for _, in := range [][]byte{{0}, gb, append([]byte{2}, streamOf(4, 5, 0)...)} {
		p := uint8(BasicP)
		m := uint64(BasicM)
		if in[0] == 2 {
			p, m = 4, 3
		}
		if _, err := FromNBytes(p, m, in); err != nil {
			t.Errorf("FromNBytes(%x): %v", in, err)
		}
	}
}

// TestLongUnaryRuns decodes values whose unary part spans several 64-bit
// windows, which only the slow path handles.
func TestLongUnaryRuns(t *testing.T) {
	for _, p := range []uint{1, 2, 19, 32} {
		deltas := []uint64{0, 1, 200 << p, 3, 70<<p | 1, 0, 129 << p}
		var sum uint64
		for _, d := range deltas {
			sum += d
		}
		m := sum/uint64(len(deltas)) + 1
		f, err := FromNBytes(uint8(p), m, append([]byte{byte(len(deltas))}, streamOf(p, deltas...)...))
		if err != nil {
			t.Fatalf("p=%d: %v", p, err)
		}
		var v uint64
		want := make([]uint64, len(deltas))
		for i, d := range deltas {
			v += d
			want[i] = v
		}
		if got := f.Values(nil); !slices.Equal(got, want) {
			t.Fatalf("p=%d: values %v, want %v", p, got, want)
		}
	}
}

func TestZeroAllocs(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 7))
	key := randKey(rng)
	f, _ := Build(key, BasicP, BasicM, randSet(rng, 5000, 25))
	q1 := randBytes(rng, 25)
	if a := testing.AllocsPerRun(100, func() { f.Match(key, q1) }); a != 0 {
		t.Errorf("Match: %v allocs", a)
	}
	for _, n := range []int{1, 10, 64, 65, 100, 1000, 10000} {
		qs := randSet(rng, n, 25)
		f.MatchAny(key, qs) // warm the pool
		if a := testing.AllocsPerRun(50, func() { f.MatchAny(key, qs) }); a != 0 {
			t.Errorf("MatchAny(%d): %v allocs", n, a)
		}
		m := NewMatcher(qs)
		m.Match(f, key)
		if a := testing.AllocsPerRun(50, func() { m.Match(f, key) }); a != 0 {
			t.Errorf("Matcher(%d): %v allocs", n, a)
		}
	}
}

func TestStats(t *testing.T) {
	rng := rand.New(rand.NewPCG(8, 8))
	f, _ := Build(randKey(rng), BasicP, BasicM, randSet(rng, 1000, 25))
	s := f.Stats()
	if s.N != f.N() || s.P != BasicP || s.M != BasicM || s.Bytes != len(f.NBytes()) || s.StreamBytes != len(f.Bytes()) {
		t.Fatalf("stats %+v", s)
	}
	if s.FalsePositiveRate != 1.0/BasicM {
		t.Fatalf("false positive rate %v", s.FalsePositiveRate)
	}
	// log2(784931) = 19.582...
	if s.MinBitsPerElement < 19.58 || s.MinBitsPerElement > 19.59 {
		t.Fatalf("min bits per element %v", s.MinBitsPerElement)
	}
	// A basic filter takes about 21 bits per element.
	if s.BitsPerElement < 20 || s.BitsPerElement > 23 {
		t.Fatalf("bits per element %v", s.BitsPerElement)
	}
}

func TestSortValues(t *testing.T) {
	rng := rand.New(rand.NewPCG(10, 10))
	for _, n := range []int{0, 1, 2, bucketMin - 1, bucketMin, 513, 3000, bucketMax, bucketMax + 1} {
		for _, shape := range []string{"random", "equal", "sorted", "reversed", "wide", "clustered"} {
			limit := uint64(max(n, 1)) * BasicM
			if shape == "wide" {
				limit = ^uint64(0)
			}
			v := make([]uint64, n)
			for i := range v {
				switch shape {
				case "equal":
					v[i] = 42
				case "sorted":
					v[i] = uint64(i) * 1000
				case "reversed":
					v[i] = uint64(n-i) * 1000
				case "clustered": // half in one bucket, half spread
					v[i] = rng.Uint64N(limit)
					if i%2 == 0 {
						v[i] = limit/3 + uint64(i%7)
					}
				default:
					v[i] = rng.Uint64N(limit)
				}
			}
			want := slices.Clone(v)
			slices.Sort(want)
			sortValues(v, limit, make([]uint64, n))
			if !slices.Equal(v, want) {
				t.Fatalf("n=%d %s: not sorted", n, shape)
			}
		}
	}
}

// TestConcurrentReads matches one filter from several goroutines (run
// with -race): a Filter is immutable and the buffers of MatchAny and
// BuildBasic are pooled.
func TestConcurrentReads(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 11))
	key := randKey(rng)
	elems := randSet(rng, 3000, 25)
	f, _ := Build(key, BasicP, BasicM, elems)
	block, prev := randBlock(rng, 300)
	basic, _ := BuildBasic(block, prev)
	done := make(chan error)
	for g := range 4 {
		go func() {
			// Builds share pooled scratch buffers.
			for range 20 {
				if b, err := BuildBasic(block, prev); err != nil || !bytes.Equal(b.NBytes(), basic.NBytes()) {
					done <- fmt.Errorf("concurrent BuildBasic differs: %v", err)
					return
				}
			}
			for i := g; i < len(elems); i += 4 {
				if !f.Match(key, elems[i]) || !f.MatchAny(key, elems[i:min(i+100, len(elems))]) {
					done <- fmt.Errorf("element %d does not match", i)
					return
				}
			}
			done <- nil
		}()
	}
	for range 4 {
		if err := <-done; err != nil {
			t.Error(err)
		}
	}
}

// TestBasicOutput pins the output rule of the basic filter (BIP 158):
// every output script but empty ones and those starting with OP_RETURN.
func TestBasicOutput(t *testing.T) {
	for _, tt := range []struct {
		script []byte
		want   bool
	}{
		{nil, false},
		{[]byte{}, false},
		{[]byte{0x6a}, false},
		{[]byte{0x6a, 0x04, 1, 2, 3, 4}, false},
		{[]byte{0x00}, true},       // OP_0: anyone can pay to it
		{[]byte{0x51}, true},       // OP_TRUE
		{[]byte{0x00, 0x6a}, true}, // OP_RETURN later in the script is no mark
		{append([]byte{0x76, 0xa9, 20}, append(make([]byte, 20), 0x88, 0xac)...), true},
	} {
		if got := BasicOutput(tt.script); got != tt.want {
			t.Errorf("BasicOutput(%x) = %v, want %v", tt.script, got, tt.want)
		}
	}
}

// TestTrailingBytesCounted: the bytes after a filter's last value are
// counted in the singular when there is one.
func TestTrailingBytesCounted(t *testing.T) {
	good, err := Build([16]byte{7}, BasicP, BasicM, [][]byte{{1}, {2}, {3}})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		extra int
		want  string
	}{
		{1, ": 1 byte after the last value"},
		{2, ": 2 bytes after the last value"},
	} {
		_, err := FromNBytes(BasicP, BasicM, append(good.NBytes(), make([]byte, tc.extra)...))
		if !errors.Is(err, ErrTrailingData) || !strings.HasSuffix(err.Error(), tc.want) {
			t.Errorf("%d extra: %v, want ErrTrailingData ending %q", tc.extra, err, tc.want)
		}
	}
}

// TestDecodeErrorTexts: a decoding error says what was being read and
// counts in the singular for one.
func TestDecodeErrorTexts(t *testing.T) {
	for _, tt := range []struct {
		in   []byte
		want string
	}{
		{nil, "gcs: truncated filter: no bytes, not even the item count N"},
		{[]byte{0xfd}, "gcs: truncated filter: the item count N is a CompactSize of 3 bytes (its first byte is 0xfd), and the filter has 1 byte"},
		{[]byte{0xfe, 1}, "gcs: truncated filter: the item count N is a CompactSize of 5 bytes (its first byte is 0xfe), and the filter has 2 bytes"},
		{[]byte{0xfd, 5, 0}, "gcs: non-canonical CompactSize for N: N=5 written in 3 bytes; its shortest CompactSize takes 1 byte"},
		{[]byte{0xfe, 0xff, 0xff, 0, 0}, "gcs: non-canonical CompactSize for N: N=65535 written in 5 bytes; its shortest CompactSize takes 3 bytes"},
		{[]byte{1, 0xff, 0xff, 0xff}, "decoding value 0 of 1: gcs: truncated filter: stream ends inside a unary code"},
		{[]byte{2, 0xff, 0xff, 0xff, 0xff, 0xff}, "decoding values 0 to 1 of 2: gcs: truncated filter: stream ends inside a unary code"},
		{[]byte{0, 0}, "gcs: trailing data after filter: 1 byte after the last value"},
	} {
		if _, err := FromNBytes(BasicP, BasicM, tt.in); err == nil || err.Error() != tt.want {
			t.Errorf("FromNBytes(%x): %v, want %q", tt.in, err, tt.want)
		}
	}
}
