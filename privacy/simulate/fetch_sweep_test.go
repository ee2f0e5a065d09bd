package simulate_test

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/spvfilter/spvfilter/privacy/attack"
	"github.com/spvfilter/spvfilter/privacy/leak"
	"github.com/spvfilter/spvfilter/privacy/simulate"
)

// fetchSweep reads SPVFILTER_FETCH_SEEDS, "REGIME:FROM-TO" (or
// "REGIME:SEED,SEED,..."): the regime and seeds TestFetchCalibrationSweep
// scores; nil when unset.
func fetchSweep(t *testing.T) (simulate.Regime, []uint64) {
	t.Helper()
	v := os.Getenv("SPVFILTER_FETCH_SEEDS")
	if v == "" {
		return "", nil
	}
	name, list, ok := strings.Cut(v, ":")
	if !ok {
		t.Fatalf("SPVFILTER_FETCH_SEEDS=%q: want REGIME:FROM-TO or REGIME:SEED,SEED", v)
	}
	r, err := simulate.ParseRegime(name)
	if err != nil {
		t.Fatal(err)
	}
	var seeds []uint64
	for _, part := range strings.Split(list, ",") {
		from, to, span := strings.Cut(part, "-")
		a, err := strconv.ParseUint(from, 10, 64)
		if err != nil {
			t.Fatalf("SPVFILTER_FETCH_SEEDS=%q: %v", v, err)
		}
		b := a
		if span {
			if b, err = strconv.ParseUint(to, 10, 64); err != nil || b < a {
				t.Fatalf("SPVFILTER_FETCH_SEEDS=%q: bad range %q", v, part)
			}
		}
		for s := a; s <= b; s++ {
			seeds = append(seeds, s)
		}
	}
	return r, seeds
}

// TestFetchCalibrationSweep scores the block-download attack on one
// regime over the seeds of SPVFILTER_FETCH_SEEDS (skipped without it),
// each captured as fetchCalibrationScenario does (24 BIP 157 wallets, 600
// blocks of 30 transactions), and logs the pooled rows of
// privacy/README.md's tables and every script given P >= 0.95 that none
// of its session's wallets holds, with what its report says of it:
//
//	SPVFILTER_FETCH_SEEDS=mixed:9311-9313 go test ./privacy/simulate -run TestFetchCalibrationSweep -v
//
// It asserts nothing of the figures (fetchCalibration does, on its own
// seeds); it fails only when a capture cannot be made or scored.
func TestFetchCalibrationSweep(t *testing.T) {
	r, seeds := fetchSweep(t)
	if seeds == nil {
		t.Skip("set SPVFILTER_FETCH_SEEDS=REGIME:FROM-TO to sweep the block-download attack over seeds")
	}
	var scripts, groups pooledBins
	for _, seed := range seeds {
		sc, fcapt, index := fetchCalibrationScenario(t, r, seed)
		score, reps := attackFetches(t, sc, fcapt, index, attack.FetchOptions{})
		scripts.add(score.Candidates)
		groups.add(score.CandidateGroups)
		owns := sessionOwners(sc.Labels.Fetch)
		for _, rep := range reps {
			for _, m := range rep.Matched {
				if m.Probability >= simulate.ConfidentP && !owns[rep.Session][m.Candidate] {
					t.Logf("%s seed %d, session %s: %s", r, seed, rep.Session, describeWrong(rep, &m))
				}
			}
		}
	}
	for _, k := range []struct {
		name string
		p    *pooledBins
	}{{"scripts", &scripts}, {"groups", &groups}} {
		row := fmt.Sprintf("| %s | fetches: %s |", r, k.name)
		for i := range 5 {
			row += " " + k.p.cell(i) + " |"
		}
		if n, right := k.p.count[5], k.p.right[5]; n > 0 {
			lo, hi := simulate.Wilson(right, n)
			row += fmt.Sprintf(" %d of %d (%.3f) [%.3f, %.3f] |", right, n, float64(right)/float64(n), lo, hi)
		} else {
			row += " none |"
		}
		t.Log(row)
	}
}

// describeWrong says what a report says of a match: its appearances,
// the transactions it shares (how many matches each holds), and its
// marks.
func describeWrong(rep *attack.FetchReport, m *leak.Match) string {
	inTx := map[[2]uint32]int{}
	for _, o := range rep.Matched {
		for i, txs := range o.Transactions {
			for _, tx := range txs {
				inTx[[2]uint32{uint32(o.Heights[i]), tx}]++
			}
		}
	}
	var sizes []int
	for i, txs := range m.Transactions {
		for _, tx := range txs {
			sizes = append(sizes, inTx[[2]uint32{uint32(m.Heights[i]), tx}])
		}
	}
	s := fmt.Sprintf("%s P %.3f, k %d at %v, matches per transaction %v, co-located %v batched %v nested %v passenger %v ambiguous with %d",
		m.Candidate, m.Probability, m.Appearances, m.Heights, sizes, m.CoLocated, m.Batched, m.Nested, m.Passenger, len(m.AmbiguousWith))
	if m.Group > 0 {
		g := rep.Groups[m.Group-1]
		s += fmt.Sprintf(", group of %d at P %.3f (first %s)", len(g.Members), g.Probability, g.Members[0])
	}
	return s
}
