package leak

import (
	"fmt"
	"math"
	"slices"
	"testing"

	"github.com/spvfilter/spvfilter/privacy/universe"
)

// TestSelfCorrected: the null's count of a class's groups less the
// wallet's share of the shifts' groups the fetched set matches too (see
// the package documentation), never above the shifts' mean, and the
// mean itself where nothing is to be taken out or nothing can be told.
func TestSelfCorrected(t *testing.T) {
	for _, c := range []struct {
		name    string
		m, x, g float64
		want    float64
	}{
		{"no self hits", 8, 0, 20, 8},
		{"no groups", 8, 3, 0, 8},
		{"null at or above the groups", 20, 5, 20, 20},
		{"hits reach the groups", 8, 20, 20, 8},
		// h = 0.25: 8 - 0.25·1.25·12 = 4.25.
		{"a quarter hit", 8, 5, 20, 4.25},
		// h = 0.5: 2 - 0.5·1.5·18 < 0.
		{"never below 0", 2, 10, 20, 0},
		// h = 5.47/6 near 1: every group hit, little taken out.
		{"almost every block fetched", 5.47, 5.47, 6, 5.47 - 5.47/6*(1+5.47/6)*(6-5.47)},
	} {
		got := selfCorrected(c.m, c.x, c.g)
		if math.Abs(got-c.want) > 1e-9 {
			t.Errorf("%s: selfCorrected(%g, %g, %g) = %g, want %g", c.name, c.m, c.x, c.g, got, c.want)
		}
		if got > c.m || got < 0 {
			t.Errorf("%s: %g outside [0, %g]", c.name, got, c.m)
		}
	}
}

// TestSelfHitsLeftOut: a session scanned blocks 0..399 and fetched two
// bursts 24 blocks apart, 100..109 and 124..133, where the wallet's ten
// scripts each appear in two neighbouring blocks. A script of the chain
// appears at every h and h+2: 16 of them lie wholly in the bursts
// (chance). Each of the 32 shifts matches 16 such scripts, and shifts
// that lay a burst on itself or on the other match some of the wallet's
// too, which the shifts' mean counts as chance. The self hits, counted
// here apart from the null (every shift against every match), are left
// out as selfCorrected says, and a wallet's script, alone in its group,
// has its class's share above what the shifts' mean alone gives.
func TestSelfHitsLeftOut(t *testing.T) {
	r := emptyReport(0, 400, DefaultMaxMatches)
	setAll(r.scanned, 400)
	fetched := map[int32]bool{}
	for _, from := range []int32{100, 124} {
		for h := from; h < from+10; h++ {
			bitSet(r.fetched, int(h))
			fetched[h] = true
		}
	}
	r.measure(DefaultShifts)
	var entries []universe.IndexEntry
	for h := range int32(398) {
		entries = append(entries, universe.IndexEntry{Candidate: fmt.Sprintf("bg%03d", h), Heights: []int32{h, h + 2}, Txs: oneTx(uint32(1000+h), uint32(2000+h))})
	}
	wallet := map[string]bool{}
	for _, from := range []int32{100, 124} {
		for h := from; h < from+10; h += 2 {
			c := fmt.Sprintf("w%03d", h)
			wallet[c] = true
			entries = append(entries, universe.IndexEntry{Candidate: c, Heights: []int32{h, h + 1}, Txs: oneTx(uint32(h), uint32(h))})
		}
	}
	shifts := slices.Clone(r.null.shifts)
	for i := range entries {
		r.test(&entries[i])
	}
	r.finish()
	var class *Class
	for i := range r.ByAppearances {
		if r.ByAppearances[i].Appearances == 2 {
			class = &r.ByAppearances[i]
		}
	}
	if class == nil || class.Groups != 26 || len(shifts) != DefaultShifts {
		t.Fatalf("class of two appearances %+v, %d shifts: want 26 groups (16 of chance, 10 of the wallet's), %d shifts", class, len(shifts), DefaultShifts)
	}
	// The self hits: per shift, the matches (each a group of its own)
	// the shifted set matches too.
	hits := 0
	for _, s := range shifts {
		for _, e := range entries {
			if fetched[e.Heights[0]] && fetched[e.Heights[1]] && fetched[e.Heights[0]+int32(s)] && fetched[e.Heights[1]+int32(s)] {
				hits++
			}
		}
	}
	m, x := class.ExpectedGroupsByShifts, float64(hits)/float64(len(shifts))
	want, before := (26-selfCorrected(m, x, 26))/26, (26-m)/26
	if x == 0 || want-before < 0.01 {
		t.Fatalf("self hits %g a shift, P %.4f against %.4f before: the case does not test them", x, want, before)
	}
	seen := 0
	for _, m := range r.Matched {
		if !wallet[m.Candidate] {
			continue
		}
		seen++
		if math.Abs(m.Probability-want) > 1e-9 {
			t.Errorf("%s: P %.4f, want %.4f (the shifts' mean alone gives %.4f)", m.Candidate, m.Probability, want, before)
		}
	}
	if seen != 10 {
		t.Errorf("%d of the wallet's 10 scripts matched", seen)
	}
	t.Logf("shifts' mean %.4f, self hits %.4f a shift: chance %.4f, a wallet's script P %.4f (%.4f before)", m, x, selfCorrected(m, x, 26), want, before)
}
