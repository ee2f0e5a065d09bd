package bip37

import (
	"math"
	"strings"
	"testing"

	"github.com/btcsuite/btcd/wire"
)

func TestStatsEstimates(t *testing.T) {
	const n = 1000
	f := NewFilter(n, 0.001, 5, wire.BloomUpdateP2PubkeyOnly)
	for i := 0; i < n; i++ {
		f.Add([]byte{byte(i), byte(i >> 8), 'x'})
	}
	s := f.Stats()
	if s.SizeBytes != uint32(len(f.Bits())) || s.SizeBits != 8*s.SizeBytes || s.HashFuncs != f.HashFuncs() || s.Tweak != 5 || s.FlagsName != "p2pubkey-only" {
		t.Fatalf("parameters wrong: %+v", s)
	}
	if math.Abs(s.EstimatedElements-n)/n > 0.05 {
		t.Errorf("estimated %v elements, inserted %d", s.EstimatedElements, n)
	}
	if math.Abs(s.Density-0.5) > 0.05 {
		t.Errorf("density %v, want about 1/2 for an optimally sized filter", s.Density)
	}
	if s.FalsePositiveRate < 0.0005 || s.FalsePositiveRate > 0.002 {
		t.Errorf("false-positive rate %v, designed 0.001", s.FalsePositiveRate)
	}
	// An optimal Bloom filter needs 1/ln2 = 1.44 times the bound.
	if math.Abs(s.OverheadRatio-1/math.Ln2) > 0.1 {
		t.Errorf("overhead %v, want about 1.44", s.OverheadRatio)
	}
	if s.Warning != "" {
		t.Errorf("unexpected warning %q", s.Warning)
	}
}

// TestStatsWarnings: a degenerate or mis-sized filter carries a warning,
// and the quantities it leaves undefined are NaN or infinite, never a
// number that reads as a measurement (nor a negative zero).
func TestStatsWarnings(t *testing.T) {
	full, _ := NewFilterFromParams([]byte{0xff, 0xff}, 3, 0, 0)
	over := NewFilter(10, 0.01, 0, 0)
	for i := 0; i < 100; i++ {
		over.Add([]byte{byte(i)})
	}
	under := NewFilter(1000, 0.01, 0, 0)
	under.Add([]byte("one"))
	noFuncs, _ := NewFilterFromParams([]byte{1}, 0, 0, 0)
	tests := []struct {
		name      string
		f         *Filter
		warning   string
		undefined []string
	}{
		{"full", full, "every bit", []string{"EstimatedElements", "OverheadRatio"}},
		{"over-full", over, "far above", nil},
		{"under-full", under, "far below", nil},
		{"new", NewFilter(10, 0.01, 0, 0), "no bits set", []string{"BitsPerElement", "BoundBitsPerElement"}},
		{"no hash functions", noFuncs, "no hash functions", []string{"EstimatedElements"}},
		{"0 bytes", &Filter{}, "0-byte", []string{"Density", "EstimatedElements"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := tt.f.Stats()
			if !strings.Contains(s.Warning, tt.warning) {
				t.Errorf("warning %q, want it to mention %q", s.Warning, tt.warning)
			}
			floats := map[string]float64{
				"Density": s.Density, "EstimatedElements": s.EstimatedElements, "FalsePositiveRate": s.FalsePositiveRate,
				"BitsPerElement": s.BitsPerElement, "BoundBitsPerElement": s.BoundBitsPerElement, "OverheadRatio": s.OverheadRatio,
			}
			for _, k := range tt.undefined {
				if v := floats[k]; !math.IsNaN(v) && !math.IsInf(v, 0) {
					t.Errorf("%s = %v, want NaN or infinite", k, v)
				}
			}
			for k, v := range floats {
				if v == 0 && math.Signbit(v) {
					t.Errorf("%s is a negative zero", k)
				}
			}
		})
	}
	if s := full.Stats(); !math.IsInf(s.EstimatedElements, 1) || s.FalsePositiveRate != 1 {
		t.Errorf("full filter: estimated %v, fp %v", s.EstimatedElements, s.FalsePositiveRate)
	}
}

func TestFlagsNames(t *testing.T) {
	for _, fl := range []wire.BloomUpdateType{0, 1, 2} {
		got, err := ParseFlags(FlagsName(fl))
		if err != nil || got != fl {
			t.Errorf("ParseFlags(FlagsName(%d)) = %d, %v", fl, got, err)
		}
	}
	for flags, want := range map[wire.BloomUpdateType]string{
		3:    "unknown(3), acts as none",
		9:    "unknown(9), acts as all",
		0x82: "unknown(130), acts as p2pubkey-only",
	} {
		if got := FlagsName(flags); got != want {
			t.Errorf("FlagsName(%d) = %q, want %q", flags, got, want)
		}
	}
	if _, err := ParseFlags("update"); err == nil {
		t.Error("ParseFlags accepted a bad name")
	}
}
