package leak

import (
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/spvfilter/spvfilter/privacy/universe"
)

// TestMostAppearingRider: a wallet paid twice on each of two addresses
// (a in 10 and 20, b in 30 and 100), each spent later (a in 40, b in
// 120), in transactions beside its payers' change and its payees (the
// scripts seen once), one payer's change chained between them (pc, made
// in b's 30 and spent in a's 40). Every script rides in the others'
// transactions, so they form one group of three appearances, a and b
// its most appearing members. They are in no block together, each the
// evidence of its own downloads: not an ambiguous pair (each at half the
// group's, as when any two members of as many appearances were), and each
// has the group's probability, as the wallet's own scripts so placed had
// on a real neutrino client's capture (80 of 80 right at 0.48 said). A
// payer's change c reused across three payments (each transaction the
// payment r1, r2 or r3 and c, the payer paying itself back) is the most
// appearing member of its group too, but keeps half of it (pairedMostly).
func TestMostAppearingRider(t *testing.T) {
	r := evidenceReport([]universe.IndexEntry{
		{Candidate: "a", Heights: []int32{10, 20, 40}, Txs: oneTx(1, 1, 1)},
		{Candidate: "b", Heights: []int32{30, 100, 120}, Txs: oneTx(2, 2, 2)},
		{Candidate: "pc", Heights: []int32{30, 40}, Txs: oneTx(2, 1)},
		{Candidate: "s10", Heights: []int32{10}, Txs: oneTx(1)},
		{Candidate: "t10", Heights: []int32{10}, Txs: oneTx(1)},
		{Candidate: "s20", Heights: []int32{20}, Txs: oneTx(1)},
		{Candidate: "t20", Heights: []int32{20}, Txs: oneTx(1)},
		{Candidate: "s40", Heights: []int32{40}, Txs: oneTx(1)},
		{Candidate: "s30", Heights: []int32{30}, Txs: oneTx(2)},
		{Candidate: "s100", Heights: []int32{100}, Txs: oneTx(2)},
		{Candidate: "t100", Heights: []int32{100}, Txs: oneTx(2)},
		{Candidate: "s120", Heights: []int32{120}, Txs: oneTx(2)},
		{Candidate: "t120", Heights: []int32{120}, Txs: oneTx(2)},
		// A payer's change reused, in transactions of two.
		{Candidate: "c", Heights: []int32{10, 20, 30}, Txs: oneTx(6, 6, 6)},
		{Candidate: "r1", Heights: []int32{10}, Txs: oneTx(6)},
		{Candidate: "r2", Heights: []int32{20}, Txs: oneTx(6)},
		{Candidate: "r3", Heights: []int32{30}, Txs: oneTx(6)},
	})
	got := map[string]Match{}
	for _, m := range r.Matched {
		got[m.Candidate] = m
	}
	for _, c := range []string{"a", "b"} {
		m := got[c]
		if m.Group == 0 || m.Group != got["a"].Group || !m.CoLocated {
			t.Fatalf("%s: group %d (a's %d), riding %v: want a and b riding in one group", c, m.Group, got["a"].Group, m.CoLocated)
		}
		g := r.Groups[m.Group-1]
		if g.Appearances != 3 || g.Probability < 0.5 || g.Ambiguous {
			t.Fatalf("%s's group: %d appearances, P %.4f, ambiguous %v: want 3, a likely group, not ambiguous", c, g.Appearances, g.Probability, g.Ambiguous)
		}
		if len(m.AmbiguousWith) > 0 || math.Abs(m.Probability-g.Probability) > 1e-9 {
			t.Errorf("%s: P %.4f, ambiguous with %v: want its group's %.4f, ambiguous with none", c, m.Probability, m.AmbiguousWith, g.Probability)
		}
		if s := got[map[string]string{"a": "s10", "b": "s100"}[c]]; s.Probability >= m.Probability {
			t.Errorf("%s's payee or change %s: P %.4f, want less than %s's %.4f (a rider's half)", c, s.Candidate, s.Probability, c, m.Probability)
		}
	}
	c := got["c"]
	if c.Group == 0 || !c.CoLocated {
		t.Fatalf("c: %+v: want it riding in a group", c)
	}
	g := r.Groups[c.Group-1]
	if g.Appearances != 3 || c.Probability > g.Probability*memberShare+1e-9 {
		t.Errorf("c, a payer's change paid back to itself: P %.4f in a group of %d appearances and P %.4f: want at most half", c.Probability, g.Appearances, g.Probability)
	}
}

// TestPassedAlongLeadsNot: a script of two appearances riding in the
// others' transactions, the most appearing member of its group, is paid
// in one transaction beside another match and spent in the next (pc:
// made in 10 beside w1 and the coin q10 it spends, spent in 20 beside w2
// and the change q20). It is the wallet's coin received and spent, or a
// payer's change passed from its payment to the wallet (w1) to its next
// one (w2): the same downloads either way, so it is given half its
// group's probability (lowerLeadingRiders) and the report warned, its
// group keeping its own. Where another step lowers such scripts (a
// capture whose wallets pay each other, a session of several wallets)
// or in a client's own report (an upper estimate), it is left leading.
func TestPassedAlongLeadsNot(t *testing.T) {
	entries := []universe.IndexEntry{
		{Candidate: "pc", Heights: []int32{10, 20}, Txs: oneTx(1, 1)},
		{Candidate: "q10", Heights: []int32{10}, Txs: oneTx(1)},
		{Candidate: "w1", Heights: []int32{10}, Txs: oneTx(1)},
		{Candidate: "w2", Heights: []int32{20}, Txs: oneTx(1)},
		{Candidate: "q20", Heights: []int32{20}, Txs: oneTx(1)},
	}
	for _, tt := range []struct {
		name    string
		report  func([]universe.IndexEntry) *Report
		paying  bool // the capture looks like one whose wallets pay each other
		several bool // the session is warned of several wallets
		halved  bool
	}{
		{"attack", evidenceReport, false, false, true},
		{"wallets that pay each other", evidenceReport, true, false, false},
		{"several wallets", evidenceReport, false, true, false},
		{"own report", ownEvidenceReport, false, false, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := tt.report(slices.Clone(entries))
			r.severalWallets = tt.several
			i := slices.IndexFunc(r.Matched, func(m Match) bool { return m.Candidate == "pc" })
			if i < 0 {
				t.Fatal("pc not matched")
			}
			m := &r.Matched[i]
			if m.Group == 0 || !r.leadingRider(m) || len(m.AmbiguousWith) > 0 {
				t.Fatalf("pc: group %d, leading rider %v, ambiguous with %v: want it leading its group, riding, ambiguous with none", m.Group, r.leadingRider(m), m.AmbiguousWith)
			}
			g := r.Groups[m.Group-1]
			if g.Appearances != 2 || g.Probability < 0.5 || math.Abs(m.Probability-g.Probability) > 1e-9 {
				t.Fatalf("pc: P %.4f in a group of %d appearances and P %.4f: want a likely group of 2 it leads", m.Probability, g.Appearances, g.Probability)
			}
			was := *m
			lowerLeadingRiders([]*Report{r}, tt.paying, &sharedContest{contested: make([]map[string]bool, 1)})
			want := prob{was.Probability, was.ProbabilityLow, was.ProbabilityHigh}
			if tt.halved {
				want = want.halved()
			}
			if got := (prob{m.Probability, m.ProbabilityLow, m.ProbabilityHigh}); math.Abs(got.p-want.p) > 1e-9 || math.Abs(got.lo-want.lo) > 1e-9 || math.Abs(got.hi-want.hi) > 1e-9 {
				t.Errorf("pc: P %.4f [%.4f, %.4f], want %.4f [%.4f, %.4f] (halved %v)", got.p, got.lo, got.hi, want.p, want.lo, want.hi, tt.halved)
			}
			warned := slices.ContainsFunc(r.Warnings, func(w string) bool { return strings.Contains(w, PassedAlong) })
			if warned != tt.halved {
				t.Errorf("warned %v, want %v: %q", warned, tt.halved, r.Warnings)
			}
			if got := r.Groups[m.Group-1].Probability; got != g.Probability {
				t.Errorf("pc's group: P %.4f, want its own %.4f kept", got, g.Probability)
			}
		})
	}
}
