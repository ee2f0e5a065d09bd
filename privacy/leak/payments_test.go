package leak

import (
	"fmt"
	"strings"
	"testing"

	"github.com/spvfilter/spvfilter/privacy/universe"
)

// TestPayingWalletsLowered: wallet a's scripts appear in blocks 10 to 45
// and wallet b's in 100 to 135, three blocks a script; a paid b's
// scripts p0 to p5 three times each, in blocks 50 to 94 that a fetched
// (a's payments carry b's addresses), so both sessions list them. Where the sessions come
// from two addresses, the capture looks like one whose wallets pay each
// other: the p scripts a lists are lowered (their odds times payContested)
// and each session is warned, naming them; b's own scripts that a does not
// list keep their probability. Where b fetched none of the p blocks (no
// payments between them), or both sessions come from one address (warned
// of several wallets instead), nothing is lowered.
func TestPayingWalletsLowered(t *testing.T) {
	var entries []universe.IndexEntry
	var aFetch, bFetch, paid []int
	for i := range 12 {
		h := int32(10 + 3*i)
		entries = append(entries, universe.IndexEntry{Candidate: fmt.Sprintf("a%02d", i), Heights: []int32{h, h + 1, h + 2}, Txs: oneTx(1, 1, 1)})
		aFetch = append(aFetch, int(h), int(h)+1, int(h)+2)
		h = int32(100 + 3*i)
		entries = append(entries, universe.IndexEntry{Candidate: fmt.Sprintf("b%02d", i), Heights: []int32{h, h + 1, h + 2}, Txs: oneTx(1, 1, 1)})
		bFetch = append(bFetch, int(h), int(h)+1, int(h)+2)
	}
	for i := range 6 {
		h := int32(50 + 8*i)
		entries = append(entries, universe.IndexEntry{Candidate: fmt.Sprintf("p%d", i), Heights: []int32{h, h + 2, h + 4}, Txs: oneTx(3, 3, 3)})
		paid = append(paid, int(h), int(h)+2, int(h)+4)
	}
	aFetch = append(aFetch, paid...)
	for _, c := range []struct {
		name       string
		a, b       string
		bFetch     []int
		wantWarned bool
	}{
		{"two addresses, a pays b", "127.0.0.2:1000", "127.0.0.3:1000", append(append([]int{}, bFetch...), paid...), true},
		{"two addresses, no payments", "127.0.0.2:1000", "127.0.0.3:1000", bFetch, false},
		{"one address, a pays b", "127.0.0.2:1000", "127.0.0.2:2000", append(append([]int{}, bFetch...), paid...), false},
	} {
		t.Run(c.name, func(t *testing.T) {
			a, b := scanReport(c.a, aFetch, entries), scanReport(c.b, c.bFetch, entries)
			before := map[string]float64{}
			for _, m := range a.Matched {
				before[m.Candidate] = m.Probability
			}
			confident := a.Confident
			reports := []*Report{a, b}
			warnSharedClients(reports)
			warnPayingWallets(reports)
			warned := strings.Contains(strings.Join(a.Warnings, "\n"), PayEachOther)
			if warned != c.wantWarned {
				t.Fatalf("warned %v, want %v: %q", warned, c.wantWarned, a.Warnings)
			}
			lowered := 0
			for _, m := range a.Matched {
				was, ok := before[m.Candidate]
				if !ok {
					t.Fatalf("%s: not listed before", m.Candidate)
				}
				switch p := strings.HasPrefix(m.Candidate, "p") && was >= 0.5 && c.wantWarned; {
				case p && (m.Probability >= was || m.Probability < OddsTimes(was, payRider)-1e-12):
					t.Errorf("%s: %.4f -> %.4f, want its odds lowered", m.Candidate, was, m.Probability)
				case p:
					lowered++
					if !strings.Contains(strings.Join(a.Warnings, "\n"), m.Candidate+" (") {
						t.Errorf("%s lowered and not named: %q", m.Candidate, a.Warnings)
					}
				case m.Probability != was:
					t.Errorf("%s: %.4f -> %.4f, want it kept", m.Candidate, was, m.Probability)
				}
			}
			if c.wantWarned && lowered == 0 {
				t.Errorf("no p script given half or more in a's session: %v", before)
			}
			n := 0
			for _, m := range a.Matched {
				if m.Probability >= 0.95 {
					n++
				}
			}
			if a.Confident != n {
				t.Errorf("Confident %d (was %d), want %d", a.Confident, confident, n)
			}
		})
	}
}
