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

// TestCompareImpossible: parameters that describe no wallet are refused,
// naming the field, rather than given figures: a wallet in fewer blocks
// than each of its scripts appears in (none at all among them), a script
// in more blocks than are scanned.
func TestCompareImpossible(t *testing.T) {
	for _, tc := range []struct {
		name  string
		set   func(p *CompareParams)
		field string
	}{
		{"no wallet block", func(p *CompareParams) { p.Blocks, p.WalletBlocks = 100, 0 }, "wallet_blocks"},
		{"fewer wallet blocks than appearances", func(p *CompareParams) { p.WalletBlocks, p.Appearances = 1, 2 }, "wallet_blocks"},
		{"appearances beyond the blocks", func(p *CompareParams) { p.Appearances = 100000 }, "appearances"},
		{"one block, two appearances", func(p *CompareParams) { p.Blocks, p.WalletBlocks = 1, 1 }, "appearances"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := DefaultCompareParams()
			tc.set(&p)
			var fe *FieldError
			if _, err := Compare(p); !errors.As(err, &fe) || fe.Field != tc.field {
				t.Fatalf("err %v, want a field error of %s", err, tc.field)
			}
		})
	}
	p := DefaultCompareParams()
	p.Blocks, p.WalletBlocks, p.Appearances = 1, 1, 1
	if r, err := Compare(p); err != nil || r.Fetches.ChancePerCandidate != 1 {
		t.Fatalf("one block that holds the wallet: %+v, %v", r, err)
	}
}
