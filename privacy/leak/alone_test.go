package leak

import (
	"math"
	"testing"
)

// TestLowerAlone: in an attack's report with the shifts' null, a match
// alone of two or more appearances whose class holds a group of several
// matches has its odds, and its interval's, multiplied by AloneOdds (0.3
// becomes about 0.049), and a claim of 0.95 or more so lowered below 0.95
// leaves the confident count; a match alone of a class of matches alone
// only, a group's member and a match of one appearance keep theirs, as
// do a probability at a cover target, a client's own report and a report
// without the shifts.
func TestLowerAlone(t *testing.T) {
	lowered := func(p float64) float64 { return p * AloneOdds / (p*AloneOdds + 1 - p) }
	report := func() *Report {
		return &Report{
			null:          &shiftNull{},
			ScannedBlocks: 500, FetchedBlocks: 10, MatchedCount: 7,
			Groups: []Group{{Members: []string{"member", "rider"}, Appearances: 2}, {Members: []string{"m3", "r3"}, Appearances: 3}},
			Matched: []Match{
				{Candidate: "member", Appearances: 2, Group: 1, Probability: 0.3, ProbabilityLow: 0.1, ProbabilityHigh: 0.5},
				{Candidate: "alone", Appearances: 2, Probability: 0.3, ProbabilityLow: 0.1, ProbabilityHigh: 0.5},
				{Candidate: "sure", Appearances: 3, Probability: 0.97, ProbabilityLow: 0.9, ProbabilityHigh: 1},
				{Candidate: "m3", Appearances: 3, Group: 2, Probability: 0.97, ProbabilityLow: 0.9, ProbabilityHigh: 1},
				{Candidate: "classAlone", Appearances: 4, Probability: 0.96, ProbabilityLow: 0.8, ProbabilityHigh: 1},
				{Candidate: "single", Appearances: 1, Probability: 0.3, ProbabilityLow: 0.1, ProbabilityHigh: 0.5},
			},
			Confident: 3,
		}
	}
	tests := []struct {
		name      string
		own, bare bool
		cap       float64
		lower     map[string]bool
		confident int
	}{
		{name: "attack", lower: map[string]bool{"alone": true, "sure": true}, confident: 2},
		{name: "cover target 0.3", cap: 0.3, confident: 3},
		{name: "cover target 0.5", cap: 0.5, lower: map[string]bool{"alone": true}, confident: 3},
		{name: "own report", own: true, confident: 3},
		{name: "no shifts", bare: true, confident: 3},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r, before := report(), report()
			if tc.own {
				r.label = &labelling{}
			}
			if tc.bare {
				r.null = nil
			}
			r.cap = tc.cap
			r.lowerAlone()
			for i, m := range r.Matched {
				b := before.Matched[i]
				want := [3]float64{b.Probability, b.ProbabilityLow, b.ProbabilityHigh}
				if tc.lower[m.Candidate] {
					want = [3]float64{lowered(b.Probability), lowered(b.ProbabilityLow), lowered(b.ProbabilityHigh)}
				}
				got := [3]float64{m.Probability, m.ProbabilityLow, m.ProbabilityHigh}
				for j := range got {
					if math.Abs(got[j]-want[j]) > 1e-12 {
						t.Errorf("%s: P and interval %v, want %v", m.Candidate, got, want)
						break
					}
				}
			}
			if r.Confident != tc.confident {
				t.Errorf("confident %d, want %d", r.Confident, tc.confident)
			}
		})
	}
	if p := OddsTimes(0.3, AloneOdds); math.Abs(p-0.0489) > 0.0001 {
		t.Errorf("OddsTimes(0.3, %g) = %.4f, want about 0.0489", AloneOdds, p)
	}
	prev := -1.0
	for i := 0; i <= 1000; i++ {
		q := OddsTimes(float64(i)/1000, AloneOdds)
		if q < prev || q < 0 || q > 1 {
			t.Fatalf("OddsTimes(%g) = %g after %g: not monotone in [0, 1]", float64(i)/1000, q, prev)
		}
		prev = q
	}
}
