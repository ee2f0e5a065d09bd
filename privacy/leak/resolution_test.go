package leak

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/spvfilter/spvfilter/privacy/universe"
)

// TestResolutionFloor: a session scanned blocks 0..599 and fetched 14 of
// them, those of the change regime's calibration capture whose script of
// no wallet was given 1.000. The wallet's script w appears in three of
// them, its payer's change c riding beside it in one; a script of the
// chain, x, appears alone in its transactions in three others (chance);
// 800 other scripts of three appearances lie elsewhere. No shift of the
// fetched set matches a script of three appearances, so the shifts' mean
// for the class is 0, where random placement gives its 800 candidates
// not matched some chance group now and then: the class's chance count is
// the null's resolution, one group in its shifts, and each of its two
// groups has (2 - 1/S)/2, not 1. The rider c has its share of the
// group's probability before the floor (half of 1), and a class all of
// whose candidates matched (k = 4, the wallet's y alone) keeps 1.
func TestResolutionFloor(t *testing.T) {
	fetched := []int32{50, 62, 175, 199, 212, 291, 329, 347, 349, 418, 459, 557, 560, 584}
	r := emptyReport(0, 600, DefaultMaxMatches)
	setAll(r.scanned, 600)
	isFetched := map[int32]bool{}
	for _, h := range fetched {
		bitSet(r.fetched, int(h))
		isFetched[h] = true
	}
	r.measure(DefaultShifts)
	shifts := len(r.null.shifts)
	entries := []universe.IndexEntry{
		{Candidate: "w", Heights: []int32{50, 175, 418}, Txs: oneTx(31, 32, 31)},
		{Candidate: "c", Heights: []int32{50}, Txs: oneTx(31)},
		{Candidate: "x", Heights: []int32{199, 291, 557}, Txs: oneTx(16, 9, 5)},
		{Candidate: "y", Heights: []int32{62, 212, 347, 459}, Txs: oneTx(33, 33, 33, 33)},
	}
	rng := rand.New(rand.NewPCG(4005, 1))
	for i := range 800 {
		var hs []int32
		for len(hs) < 3 {
			h := int32(rng.IntN(600))
			if len(hs) == 0 || h > hs[len(hs)-1] {
				hs = append(hs, h)
			} else {
				hs = nil
			}
		}
		entries = append(entries, universe.IndexEntry{Candidate: fmt.Sprintf("bg%03d", i), Heights: hs, Txs: oneTx(1, 2, 3)})
	}
	for i := range entries {
		r.test(&entries[i])
	}
	r.finish()
	class := map[uint64]Class{}
	for _, c := range r.ByAppearances {
		class[c.Appearances] = c
	}
	if c := class[3]; c.ExpectedGroupsByShifts != 0 || c.Groups != 2 || c.Candidates != 802 || shifts != DefaultShifts {
		t.Fatalf("class of three appearances %+v over %d shifts: want no shifted group, 2 groups of 802 candidates, %d shifts: the case does not test the floor", c, shifts, DefaultShifts)
	}
	want := (2 - 1/float64(shifts)) / 2
	p := map[string]float64{}
	for _, m := range r.Matched {
		p[m.Candidate] = m.Probability
	}
	for _, c := range []struct {
		name string
		want float64
	}{{"x", want}, {"w", want}, {"c", memberShare}, {"y", 1}} {
		if got, ok := p[c.name]; !ok || math.Abs(got-c.want) > 1e-9 {
			t.Errorf("%s: P %.4f (matched %v), want %.4f", c.name, got, ok, c.want)
		}
	}
	for _, g := range r.Groups {
		if g.Members[0] == "w" && math.Abs(g.Probability-want) > 1e-9 {
			t.Errorf("w's group: P %.4f, want %.4f", g.Probability, want)
		}
	}
}
