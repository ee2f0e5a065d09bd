package leak

import (
	"math"
	"testing"
)

// TestSinglesPerBlock: a match of one appearance riding in no other's
// transactions has the share of the fetched blocks' singles beyond what
// their neighbours carry, but the attack gives the wallet at most
// walletSinglesPerBlock of them a fetched block: a session of 7 fetched
// blocks carrying 1,089 singles, 271 riding, against 560 by chance (the
// shape of clustered's session of seed 4606, which gave each of 762 such
// matches 0.315, none the wallet's) gives each 14/818, where a session
// of few singles, a client's own report and a report of the whole range
// keep the share.
func TestSinglesPerBlock(t *testing.T) {
	tests := []struct {
		name               string
		matched, colocated uint64
		chance             float64
		fetched, scanned   uint64
		own                bool
		want               float64
	}{
		{name: "heavy blocks", matched: 1089, colocated: 271, chance: 560, fetched: 7, scanned: 521, want: 14.0 / 818},
		{name: "few singles", matched: 12, colocated: 2, chance: 2, fetched: 7, scanned: 521, want: 0.8},
		{name: "own report", matched: 1089, colocated: 271, chance: 560, fetched: 7, scanned: 521, own: true, want: (818 - 560) / 818.0},
		{name: "whole range", matched: 1089, colocated: 271, chance: 560, fetched: 521, scanned: 521, want: 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := &Report{FetchedBlocks: tc.fetched, ScannedBlocks: tc.scanned}
			if tc.own {
				r.label = &labelling{}
			}
			c := &classCount{Class: Class{Appearances: 1, Matched: tc.matched, CoLocated: tc.colocated}, chanceGroups: tc.chance, chanceVar: tc.chance, coverShare: 1}
			p := r.singles(c)
			if math.Abs(p.p-tc.want) > 1e-9 {
				t.Errorf("P %.4f, want %.4f", p.p, tc.want)
			}
			if p.lo > p.p+1e-12 || p.hi < p.p-1e-12 {
				t.Errorf("interval [%.4f, %.4f] does not hold P %.4f", p.lo, p.hi, p.p)
			}
			if alone := float64(tc.matched - tc.colocated); !tc.own && p.hi*alone > walletSinglesPerBlock*float64(tc.fetched)+1e-9 {
				t.Errorf("upper end %.4f gives the wallet %.1f singles, more than %g a fetched block", p.hi, p.hi*alone, walletSinglesPerBlock)
			}
		})
	}
}
