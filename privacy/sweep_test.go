package privacy

import (
	"bytes"
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestParseSweep(t *testing.T) {
	tests := []struct {
		spec string
		v    string
		want []float64
	}{
		{"addresses=1..5", "addresses", []float64{1, 2, 3, 4, 5}},
		{"addresses=10..40:10", "addresses", []float64{10, 20, 30, 40}},
		{"addresses=1,3,5..6", "addresses", []float64{1, 3, 5, 6}},
		{"fprate=0.0001,0.001", "fprate", []float64{0.0001, 0.001}},
		{"fprate=0.1..0.3:0.1", "fprate", []float64{0.1, 0.2, 0.30000000000000004}},
		{"fprate=0.00001..0.1:x10", "fprate", []float64{0.00001, 0.0001, 0.001, 0.01, 0.1}},
		{"universe=1000..4000:x2", "universe-size", []float64{1000, 2000, 4000}},
		{"filters=1..3", "filters", []float64{1, 2, 3}},
	}
	for _, tt := range tests {
		s, err := ParseSweep(tt.spec)
		if err != nil {
			t.Errorf("%q: %v", tt.spec, err)
			continue
		}
		if s.Var != tt.v || len(s.Values) != len(tt.want) {
			t.Errorf("%q: %s %v, want %s %v", tt.spec, s.Var, s.Values, tt.v, tt.want)
			continue
		}
		for i := range tt.want {
			if !relClose(s.Values[i], tt.want[i], 1e-12) {
				t.Errorf("%q: value %d = %v, want %v", tt.spec, i, s.Values[i], tt.want[i])
			}
		}
	}
	for _, bad := range []string{"addresses", "colour=1", "addresses=", "addresses=5..1", "addresses=1..5:0",
		"addresses=1.5", "addresses=0", "fprate=1", "fprate=0..0.1:x10", "fprate=0.1..0.2:x1", "addresses=1..1000000",
		"addresses=a..b", "fprate=NaN"} {
		if _, err := ParseSweep(bad); !errors.Is(err, ErrBadSweep) {
			t.Errorf("%q: error %v, want ErrBadSweep", bad, err)
		}
	}
}

func TestSweepRunAndPlot(t *testing.T) {
	s, err := ParseSweep("addresses=1..50")
	if err != nil {
		t.Fatal(err)
	}
	base := DefaultModelParams()
	base.Filters = 2
	rs, err := s.Run(base)
	if err != nil {
		t.Fatal(err)
	}
	if len(rs) != 50 || rs[9].Params.Addresses != 10 {
		t.Fatalf("%d results", len(rs))
	}
	// More addresses fill the filter more: P_h(1) falls.
	if !(rs[0].Steps[0].PH1 > rs[49].Steps[0].PH1) {
		t.Errorf("P_h(1) does not fall with N: %g, %g", rs[0].Steps[0].PH1, rs[49].Steps[0].PH1)
	}
	dir := t.TempDir()
	for _, name := range []string{"leak.svg", "leak.png"} {
		file := filepath.Join(dir, name)
		if err := SavePlot(file, s, rs); err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		if strings.HasSuffix(name, ".svg") {
			for _, want := range []string{"<svg", "wallet addresses N", "P_h(1)", "BIP 37 filter privacy"} {
				if !bytes.Contains(b, []byte(want)) {
					t.Errorf("svg lacks %q", want)
				}
			}
		} else if !bytes.HasPrefix(b, []byte("\x89PNG")) {
			t.Errorf("not a PNG")
		}
	}
	if err := SavePlot(filepath.Join(dir, "leak.gif"), s, rs); !errors.Is(err, ErrBadPlot) {
		t.Errorf("gif: %v", err)
	}
}

func TestCompare(t *testing.T) {
	p := DefaultCompareParams()
	r, err := Compare(p)
	if err != nil {
		t.Fatal(err)
	}
	// Independent check: W·Nb pairs, each colliding with probability
	// 1/(Nb·M), is close to 1-e^(-W/M).
	w := float64(p.Model.Addresses * p.WatchPerAddress)
	approx := -math.Expm1(-w / BasicFilterM)
	if !relClose(r.BIP157.BlockFPRate, approx, 1e-3) {
		t.Errorf("block rate %g, want about %g", r.BIP157.BlockFPRate, approx)
	}
	wantF := float64(p.Blocks-p.WalletBlocks) * r.BIP157.BlockFPRate
	if !relClose(r.BIP157.ExpectedFalsePositiveBlocks, wantF, 1e-12) {
		t.Errorf("F %g, want %g", r.BIP157.ExpectedFalsePositiveBlocks, wantF)
	}
	if !(r.BIP157.PCandidate < r.BIP37.PH1) {
		t.Errorf("a BIP 157 candidate (%g) should be less exposed than a BIP 37 match (%g)", r.BIP157.PCandidate, r.BIP37.PH1)
	}
	p.WalletBlocks = p.Blocks + 1
	if _, err := Compare(p); !errors.Is(err, ErrBadModel) {
		t.Errorf("bad blocks: %v", err)
	}
}
