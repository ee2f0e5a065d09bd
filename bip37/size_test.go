package bip37

import (
	"math"
	"testing"

	"github.com/btcsuite/btcd/btcutil/bloom"
	"github.com/btcsuite/btcd/wire"
)

// coreSize is Core's CBloomFilter sizing written out independently for
// inputs where every conversion is in range (n > 0, 0 < fp < 1):
// (unsigned int)(-1 / LN2SQUARED * n * log(fp)), capped and divided by 8,
// then the integer division size*8/n before multiplying by LN2.
func coreSize(n uint32, fp float64) (uint32, uint32) {
	const ln2sq = 0.4804530139182014246671025263266649717305529515945455
	const ln2 = 0.6931471805599453094172321214581765680755001343602552
	c := float64(-1) / float64(ln2sq)
	bitsF := c * float64(n) * math.Log(fp)
	bits := uint32(math.Min(math.Trunc(bitsF), 36000*8))
	size := bits / 8
	k := uint32(math.Trunc(float64(size*8/n) * float64(ln2)))
	return size, min(k, 50)
}

func TestOptimalSizeKnownValues(t *testing.T) {
	tests := []struct {
		n        uint32
		fp       float64
		size, k  uint32
		btcutilK uint32 // what btcutil's NewFilter picks, for the record
		comeFrom string
	}{
		// Core bloom_tests.cpp: payload 03...05000000 (3 bytes, 5 funcs).
		{3, 0.01, 3, 5, 5, "bloom_create_insert_serialize"},
		// Core bloom_tests.cpp bloom_create_insert_key: 3 bytes, 8 funcs.
		{2, 0.001, 3, 8, 8, "bloom_create_insert_key"},
		// bits = 10064.3 -> 1258 bytes; Core: 10064/2100 = 4 (integer)
		// * ln2 = 2.77 -> 2; btcutil: 4.79 * ln2 = 3.32 -> 3.
		{2100, 0.1, 1258, 2, 3, "integer division"},
		// 10 elements at 1e-6: bits 287.5 -> 35 bytes, 280/10 = 28 -> 19.
		{10, 0.000001, 35, 19, 19, "bloom_match"},
		// Capped at 36,000 bytes; 288000/100000 = 2 -> 1.
		{100000, 1e-9, 36000, 1, 1, "size cap"},
		// 143.8 bits -> 17 bytes, 136 * ln2 = 94 -> capped at 50;
		// btcutil raises fp to 1e-9 first: 5 bytes, 27 funcs.
		{1, 1e-30, 17, 50, 27, "hash function cap"},
	}
	for _, tt := range tests {
		size, k := OptimalSize(tt.n, tt.fp)
		if size != tt.size || k != tt.k {
			t.Errorf("OptimalSize(%d, %g) = %d bytes, %d funcs; want %d, %d (%s)", tt.n, tt.fp, size, k, tt.size, tt.k, tt.comeFrom)
		}
		rs, rk := coreSize(tt.n, tt.fp)
		if rs != tt.size || rk != tt.k {
			t.Errorf("reference coreSize(%d, %g) = %d, %d; table is wrong", tt.n, tt.fp, rs, rk)
		}
		bf := bloom.NewFilter(tt.n, 0, tt.fp, wire.BloomUpdateNone).MsgFilterLoad()
		if bf.HashFuncs != tt.btcutilK {
			t.Errorf("btcutil picks %d funcs for (%d, %g), table says %d", bf.HashFuncs, tt.n, tt.fp, tt.btcutilK)
		}
		f := NewFilter(tt.n, tt.fp, 0, wire.BloomUpdateNone)
		if len(f.Bits()) != int(tt.size) || f.HashFuncs() != tt.k {
			t.Errorf("NewFilter(%d, %g) has %d bytes, %d funcs", tt.n, tt.fp, len(f.Bits()), f.HashFuncs())
		}
	}
}

// TestOptimalSizeAgainstCoreFormula sweeps element counts and rates and
// checks OptimalSize against the independent transcription; it also counts
// how often btcutil sizes differently, which must happen (the reason we do
// not use its sizing).
func TestOptimalSizeAgainstCoreFormula(t *testing.T) {
	rates := []float64{0.5, 0.35, 0.2, 0.1, 0.05, 0.01, 0.001, 0.0001, 1e-6, 1e-9}
	var differ int
	for _, fp := range rates {
		for n := uint32(1); n <= 20000; n += 7 {
			size, k := OptimalSize(n, fp)
			rs, rk := coreSize(n, fp)
			if size != rs || k != rk {
				t.Fatalf("OptimalSize(%d, %g) = %d, %d; Core formula gives %d, %d", n, fp, size, k, rs, rk)
			}
			bf := bloom.NewFilter(n, 0, fp, wire.BloomUpdateNone).MsgFilterLoad()
			if uint32(len(bf.Filter)) != size || bf.HashFuncs != k {
				differ++
			}
		}
	}
	if differ == 0 {
		t.Fatal("btcutil never sized differently from Core: the sweep is not testing anything")
	}
	t.Logf("btcutil differs from Core on %d of %d (n, fp) pairs", differ, len(rates)*((20000-1)/7+1))
}

func TestOptimalSizeDegenerate(t *testing.T) {
	tests := []struct {
		name    string
		n       uint32
		fp      float64
		size, k uint32
	}{
		{"no elements", 0, 0.01, 0, 0},
		{"fp 1", 10, 1, 0, 0},
		{"fp above 1 wraps to the cap", 10, 2, 36000, 50},
		{"fp 0 is +Inf bits, converts to 0", 10, 0, 0, 0},
		{"negative fp is NaN", 10, -0.5, 0, 0},
		{"NaN fp", 10, math.NaN(), 0, 0},
		{"no elements and fp 0 is NaN", 0, 0, 0, 0},
		{"+Inf fp is -Inf bits, converts to 0", 10, math.Inf(1), 0, 0},
	}
	for _, tt := range tests {
		size, k := OptimalSize(tt.n, tt.fp)
		if size != tt.size || k != tt.k {
			t.Errorf("%s: OptimalSize(%d, %v) = %d, %d; want %d, %d", tt.name, tt.n, tt.fp, size, k, tt.size, tt.k)
		}
	}
}

func TestCDoubleToUint(t *testing.T) {
	tests := []struct {
		x    float64
		want uint32
	}{
		{0, 0}, {1.9, 1}, {-1.9, 0xffffffff}, {4294967295.5, 0xffffffff},
		{4294967296, 0}, {4294967296 + 5, 5}, {-14.4, 0xfffffff2},
		{0x1p63, 0}, {-0x1p63, 0}, {math.Inf(1), 0}, {math.Inf(-1), 0}, {math.NaN(), 0},
	}
	for _, tt := range tests {
		if got := cDoubleToUint(tt.x); got != tt.want {
			t.Errorf("cDoubleToUint(%v) = %#x, want %#x", tt.x, got, tt.want)
		}
	}
}
