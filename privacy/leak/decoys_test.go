package leak_test

import (
	"bytes"
	"slices"
	"testing"

	"github.com/spvfilter/spvfilter/privacy/leak"
	"github.com/spvfilter/spvfilter/privacy/universe"
)

// decoyChain is a test chain whose client, with covers, also fetched on
// purpose the blocks of other scripts paid as its covers are, which are
// neither the wallet's nor covers: chains drawn and left out, fetched
// once, or explored. Their matches are made by the fetching.
type decoyChain struct {
	*testChain
	decoys [][]byte
}

// newDecoyChain builds a chain of 20 watched scripts and 40 others paid
// alike, whose every block the client fetched: the first 20 others are
// its covers, the rest decoys.
func newDecoyChain(t *testing.T) *decoyChain {
	t.Helper()
	c := newTestChain(t, chainSpec{blocks: 800, txs: 12, wallet: 20, covers: 40, seed: 24})
	d := &decoyChain{testChain: c, decoys: c.covers[20:]}
	c.covers = c.covers[:20]
	return d
}

// attack is the block-download attack on the chain's full index, with
// the attacker's null (the fetched set's shifts): each view as Compute
// takes it, and their collusion last.
func (d *decoyChain) attack(t *testing.T) []*leak.Report {
	t.Helper()
	ir, err := universe.NewIndexReader(bytes.NewReader(d.index(t)))
	if err != nil {
		t.Fatal(err)
	}
	views := d.fullViews()
	reps, err := leak.Analyze(views[:len(views)-1], ir, leak.Options{Collude: true})
	if err != nil {
		t.Fatal(err)
	}
	return reps
}

// below counts the watched scripts of two or more appearances whose
// group probability in the report falls below the attack's, over every
// view, and logs each with its class's chance counts.
func (d *decoyChain) below(t *testing.T, l *leak.Leak, attack []*leak.Report, label string) (below, total int) {
	t.Helper()
	views := append(slices.Clone(l.Peers), l.Collusion)
	for i, pl := range views {
		want := groupProbabilities(attack[i])
		shifts := map[uint64]float64{}
		for _, c := range attack[i].ByAppearances {
			shifts[c.Appearances] = c.ExpectedGroupsByShifts
		}
		for _, s := range pl.Scripts {
			name := universe.ScriptCandidate(d.watched[s.WatchItem], d.params)
			a, ok := want[name]
			if !ok || a.k < 2 {
				continue
			}
			total++
			if testing.Verbose() {
				t.Logf("%s view %d script %d k=%d: %.4f, attack %.4f; chance %.1f, shifts %.1f", label, i, s.WatchItem, a.k, s.GroupProbability, a.p, pl.ChanceGroups[int(min(a.k, leak.MaxProfileClass))], shifts[a.k])
			}
			if s.GroupProbability < a.p-1e-9 {
				below++
				t.Logf("%s view %d script %d (k=%d): the report's %.4f below the attack's %.4f (chance groups: the report's %.1f, the shifts' %.1f)",
					label, i, s.WatchItem, a.k, s.GroupProbability, a.p, pl.ChanceGroups[int(min(a.k, leak.MaxProfileClass))], shifts[a.k])
			}
		}
	}
	return below, total
}

// TestDecoysKeepReportAboveAttack: a client with covers whose watched
// scripts sit in the classes of candidate chains it fetched on purpose
// (explored, or drawn and left out) gets a report no lower than the
// attack on its downloads once it names them (Input.Decoys): their
// matches are made, not chance, and the shifts the attacker takes as
// chance do not make them. Without them the labelled chance count holds
// them and the report falls below the attack, which the test checks
// too, so that the chain exercises the rule; naming them raises no
// chance count.
func TestDecoysKeepReportAboveAttack(t *testing.T) {
	d := newDecoyChain(t)
	attack := d.attack(t)
	lim := leak.Limits{MaxQueries: 1 << 20, MaxSingles: 1 << 20}
	in := d.input(nil)
	without, err := leak.Compute(in, lim)
	if err != nil {
		t.Fatal(err)
	}
	in.Decoys = d.decoys
	with, err := leak.Compute(in, lim)
	if err != nil {
		t.Fatal(err)
	}
	b0, n0 := d.below(t, without, attack, "without decoys")
	b1, n1 := d.below(t, with, attack, "with decoys")
	t.Logf("watched scripts of two or more appearances below the attack's group probability, over %d views: %d of %d without the decoys named, %d of %d with them",
		len(attack), b0, n0, b1, n1)
	for k := 2; k <= 3; k++ {
		t.Logf("colluding k=%d: chance groups %.1f without the decoys named, %.1f with them", k, without.Collusion.ChanceGroups[k], with.Collusion.ChanceGroups[k])
	}
	// Naming decoys only lowers the chance counts. (A decoy's group, no
	// longer diluted, may now be the wallet's more likely than not; a
	// watched group in its blocks only is not nested under it, since the
	// own report nests nothing.)
	for i, pl := range append(slices.Clone(with.Peers), with.Collusion) {
		was := append(slices.Clone(without.Peers), without.Collusion)[i]
		for k, c := range pl.ChanceGroups {
			if c > was.ChanceGroups[k] {
				t.Errorf("view %d k=%d: %g chance groups with the decoys named, %g without", i, k, c, was.ChanceGroups[k])
			}
		}
	}
	if n1 < 10 {
		t.Fatalf("%d watched scripts of two or more appearances matched: the chain does not exercise the classes", n1)
	}
	if b0 == 0 {
		t.Fatal("without the decoys named no watched script fell below the attack: the chain does not exercise their matches")
	}
	if b1 > 0 {
		t.Errorf("%d of %d watched scripts below the attack with the decoys named", b1, n1)
	}
}
