package bip37

import (
	"errors"
	"math"
	"testing"
)

// TestSizing pins both rules on known filters: the BIP 37 test vector (3
// elements at 0.01: 3 bytes, 5 hash functions), a fresh bitcoinj wallet's
// filter (632 elements at 0.00001: 1,893 bytes, Core 15 hash functions,
// bitcoinj 16), and Core's degenerate filters against bitcoinj's floor of
// 1 byte and 1 function; SizingCore is OptimalSize everywhere.
func TestSizing(t *testing.T) {
	for _, c := range []struct {
		rule         Sizing
		n            uint32
		p            float64
		bytes, funcs uint32
	}{
		{SizingCore, 3, 0.01, 3, 5}, {SizingBitcoinj, 3, 0.01, 3, 5},
		{SizingCore, 632, 0.00001, 1893, 15}, {SizingBitcoinj, 632, 0.00001, 1893, 16},
		{SizingCore, 2100, 0.1, 1258, 2}, {SizingBitcoinj, 2100, 0.1, 1258, 3},
		{SizingCore, 1, 0.5, 0, 0}, {SizingBitcoinj, 1, 0.5, 1, 5},
		{SizingCore, 150000, 0.001, 36000, 0}, {SizingBitcoinj, 150000, 0.001, 36000, 1},
		{"", 632, 0.00001, 1893, 15},
	} {
		if b, k := c.rule.Size(c.n, c.p); b != c.bytes || k != c.funcs {
			t.Errorf("%q n=%d p=%g: %d bytes k=%d, want %d, %d", c.rule, c.n, c.p, b, k, c.bytes, c.funcs)
		}
		if f := c.rule.NewFilter(c.n, c.p, 7, 0); f.Size() != int(c.bytes) || f.HashFuncs() != c.funcs || f.Tweak() != 7 {
			t.Errorf("%q n=%d p=%g: filter of %d bytes k=%d", c.rule, c.n, c.p, f.Size(), f.HashFuncs())
		}
	}
	for n := uint32(1); n <= 3000; n += 37 {
		for _, p := range []float64{1e-6, 1e-4, 0.01, 0.3} {
			cb, ck := SizingCore.Size(n, p)
			if ob, ok := OptimalSize(n, p); cb != ob || ck != ok {
				t.Fatalf("core n=%d p=%g: %d, %d; OptimalSize %d, %d", n, p, cb, ck, ob, ok)
			}
		}
	}
	for _, s := range []string{"core", "bitcoinj"} {
		if r, err := ParseSizing(s); err != nil || string(r) != s {
			t.Errorf("ParseSizing(%q) = %q, %v", s, r, err)
		}
	}
	if _, err := ParseSizing("electrum"); !errors.Is(err, ErrBadSizing) {
		t.Errorf("unknown rule: %v", err)
	}
	if SizingCore.Implementation() != "Bitcoin Core" || Sizing("").Implementation() != "Bitcoin Core" || SizingBitcoinj.Implementation() != "bitcoinj" {
		t.Error("implementations misnamed")
	}
}

// TestFalsePositiveRate checks the exact rate against the
// approximation (1-e^(-kn/m))^k where they must agree (m large), its
// limits, and Capacity against Core's sizing: a filter sized for
// Capacity's elements has about the rate asked.
func TestFalsePositiveRate(t *testing.T) {
	if FalsePositiveRate(0, 3, 10) != 1 {
		t.Error("a filter of no bits must match everything")
	}
	if FalsePositiveRate(1000, 3, 0) != 0 {
		t.Error("an empty filter matches nothing")
	}
	for _, c := range []struct {
		bits uint64
		k    uint32
		n    uint64
	}{{1 << 20, 5, 10000}, {15144, 15, 632}, {24, 5, 3}} {
		approx := math.Pow(-math.Expm1(-float64(c.k)*float64(c.n)/float64(c.bits)), float64(c.k))
		got := FalsePositiveRate(c.bits, c.k, c.n)
		if c.bits > 10000 && math.Abs(got-approx)/approx > 0.01 {
			t.Errorf("m=%d k=%d n=%d: %g, approximation %g", c.bits, c.k, c.n, got, approx)
		}
		if got <= 0 || got >= 1 {
			t.Errorf("m=%d k=%d n=%d: rate %g", c.bits, c.k, c.n, got)
		}
	}
	for _, p := range []float64{1e-5, 1e-3, 0.01} {
		n := uint32(Capacity(MaxFilterSize*8, p))
		size, k := OptimalSize(n, p)
		if size > MaxFilterSize || size < MaxFilterSize-8 {
			t.Errorf("p=%g: Capacity %d elements sized %d bytes, want about the largest filter", p, n, size)
		}
		if r := FalsePositiveRate(uint64(size)*8, k, uint64(n)); r > 1.2*p {
			t.Errorf("p=%g: %d elements in the largest filter give rate %g", p, n, r)
		}
	}
}
