package model

import (
	"errors"
	"math"
	"testing"

	"github.com/spvfilter/spvfilter/gcs"
)

func TestCompare(t *testing.T) {
	p := DefaultCompareParams()
	r, err := Compare(p)
	if err != nil {
		t.Fatal(err)
	}
	// Independent check: W·Nb pairs, each colliding with probability
	// 1/(Nb·M), is close to 1-e^(-W/M).
	w := float64(p.Model.Addresses * p.WatchPerAddress)
	approx := -math.Expm1(-w / gcs.BasicM)
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
	if _, err := Compare(p); !errors.Is(err, ErrBadParams) {
		t.Errorf("bad blocks: %v", err)
	}
}
