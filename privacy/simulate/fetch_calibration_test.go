package simulate_test

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/spvfilter/spvfilter/privacy/attack"
	"github.com/spvfilter/spvfilter/privacy/leak"
	"github.com/spvfilter/spvfilter/privacy/simulate"
)

// fetchCalibrationSeeds are the seeds TestFetchCalibration scores each
// regime on: no other test uses them, and no constant or rule of the
// block-download attack was chosen on them (pooled nesting was chosen on
// mixed seeds 7701 to 7704, the null's self hits on 7001 and 7002; seed
// 7903 showed their fixed point unfit, package leak's documentation).
// Mixed, whose claims at 0.95 and more are the most and fall shortest,
// takes four.
var fetchCalibrationSeeds = map[simulate.Regime][]uint64{
	simulate.RegimeReuse:  {7901, 7902},
	simulate.RegimeChange: {7901, 7902},
	simulate.RegimeMixed:  {7901, 7902, 7903, 7904},
	// Shared-client's tuning seeds were 7701 and 7702 (and 7901 and 7902
	// were looked at): its own are apart.
	simulate.RegimeSharedClient: {7911, 7912, 7913, 7914},
}

// fetchCalibrationScenario simulates regime r from seed as "privacy
// simulate --regime r --seed seed --wallets 2 --noise 0 --degenerate 0
// --blocks 600 --txs-per-block 30 --fetch-wallets 24" does, and returns
// its fetch capture and appearance index.
func fetchCalibrationScenario(t *testing.T, r simulate.Regime, seed uint64) (*simulate.Scenario, *bytes.Buffer, *bytes.Buffer) {
	t.Helper()
	o := fetchOptions(t, r, seed, 2)
	return generateFetch(t, o)
}

// pooledBins is calibration summed over runs: per bin, the claims, the
// right ones and their probabilities' sum.
type pooledBins struct {
	count, right [6]int // the five bins, then P >= 0.95
	sumP         [6]float64
}

func (p *pooledBins) add(c *simulate.ClaimScore) {
	if c == nil {
		return
	}
	for i, b := range append(c.Calibration[:5:5], c.Confident) {
		p.count[i] += b.Count
		p.right[i] += b.Right
		if b.MeanProbability != nil {
			p.sumP[i] += *b.MeanProbability * float64(b.Count)
		}
	}
}

// merge adds o's claims to p.
func (p *pooledBins) merge(o *pooledBins) {
	for i := range p.count {
		p.count[i] += o.count[i]
		p.right[i] += o.right[i]
		p.sumP[i] += o.sumP[i]
	}
}

// cell is bin i as privacy/README.md's tables give it.
func (p *pooledBins) cell(i int) string {
	n, k := p.count[i], p.right[i]
	if n == 0 {
		return "-"
	}
	lo, hi := simulate.Wilson(k, n)
	return fmt.Sprintf("%.3f / %.3f [%.2f, %.2f] n=%d", p.sumP[i]/float64(n), float64(k)/float64(n), lo, hi, n)
}

// overConfident reports whether bin i says measurably more than it
// gets: its mean probability above the upper end of its fraction
// right's Wilson interval by more than 0.05.
func (p *pooledBins) overConfident(i int) bool {
	n := p.count[i]
	if n == 0 {
		return false
	}
	_, hi := simulate.Wilson(p.right[i], n)
	return p.sumP[i]/float64(n) > hi+0.05
}

// underConfident reports whether bin i, from P 0.5 on, says measurably
// less than it gets: its mean probability below the lower end of its
// fraction right's Wilson interval by more than 0.05.
func (p *pooledBins) underConfident(i int) bool {
	n := p.count[i]
	if n == 0 || i == 0 {
		return false
	}
	lo, _ := simulate.Wilson(p.right[i], n)
	return p.sumP[i]/float64(n) < lo-0.05
}

// knownOverConfident are the bins, by regime, kind and bin, that say
// measurably more than they get and are stated as targets not met
// (privacy/README.md, "Scores of the attacks"): none since pooled groups
// have half their class's probability (the change regime's groups given
// P in [0.5, 0.8) were right 13 of 46 times at 0.519 said, most of them
// pooled). Any other fails the test of its regime.
var knownOverConfident = map[string]bool{}

// knownUnderConfident are the bins from P 0.5 on, by regime, kind and
// bin, that say measurably less than they get and are stated as targets
// not met (privacy/README.md, "Scores of the attacks"). Any other fails
// the test of its regime. Reuse's scripts in [0.5, 0.8): ambiguous
// pairs, a payer's change reused as often as the wallet's script, each
// given half, both often the wallet's. Mixed's scripts in [0.8, 0.95) and
// groups in [0.5, 0.8): on mixed seeds 8101 to 8104, the shifts grouping
// the scripts seen once in their matches' transactions as the report
// does, the null's groups per number of appearances and per size (a
// match alone; one of two or more appearances with scripts seen once in
// its transactions; two or more of two or more appearances) lie within
// 4% of the groups that hold none of the session's wallets' scripts at
// two appearances (most of that bin's groups) and 15% to 40% above them
// at three and more. Given the probability of their class and size,
// mixed's groups in [0.5, 0.8) were still right more often than said
// (0.784 at 0.615, n = 232, on this test's seeds; 0.827 at 0.669, n =
// 197, with their class's), and reuse's and change's there became
// over-confident (0.233 at 0.582, n = 30; 0.446 at 0.642, n = 56):
// telling groups apart by size does not mend this bin. Nor did the
// shifts' counting the scripts seen once in their matches' transactions
// (0.827 at 0.671, n = 197). Mixed's groups in [0.5, 0.8) are met since a
// pooled group of a session of several wallets keeps its class's
// probability (0.676 said, 0.689 right, n = 267). Shared-client's scripts
// in [0.5, 0.8) became under-confident when members chained through the
// others' transactions (riding in every one of two or more blocks, not
// the most appearing: right 0.2 to 0.4 of the time at half their group's)
// came to have three tenths of it: the riders left at half, of one
// appearance or their group's most appearing, were right 0.655 of the
// time at 0.500 said (n = 582). Since riders whose counterparty is seen
// spending elsewhere are settled and those in others' payments paid
// (package leak's documentation), none of the three is: reuse's scripts
// in [0.5, 0.8) 0.503 said, 0.578 right (n = 244), mixed's in [0.8,
// 0.95) 0.914 / 0.966 (n = 641), shared-client's in [0.5, 0.8) 0.501 /
// 0.588 (n = 485), each within 0.05 of its Wilson interval. Mixed's
// groups in [0.5, 0.8), right more often than said on other seeds (0.781
// at 0.649 on 7001 and 7002, 0.821 at 0.658 on 9501 and 9502), were so
// since the shifts counted the wallet's own scripts as chance where the
// fetched set met itself (package leak's documentation, self hits): here
// 0.679 / 0.691 (n = 262) before, 0.685 / 0.685 (n = 257) after. Since
// a settled member chained through the others' transactions has 0.7 of
// its group's: reuse's scripts in [0.5, 0.8) 0.527 / 0.577 (n = 220),
// shared-client's 0.518 / 0.556 (n = 455).
var knownUnderConfident = map[string]bool{}

// TestFetchCalibrationReuse, TestFetchCalibrationChange,
// TestFetchCalibrationMixed and TestFetchCalibrationSharedClient score
// the block-download attack ("privacy fetches", then "privacy evaluate")
// on the regimes whose probabilities were over-confident, each on seeds
// no test tunes on (fetchCalibrationSeeds; 24 BIP 157 wallets, 600
// blocks of 30 transactions, fetchCalibrationScenario), and log each
// regime's rows of privacy/README.md, "Scores of the attacks" (go test
// ./privacy/simulate -run TestFetchCalibration -v). One test per regime,
// its seeds simulated and attacked in parallel, keeps each within a
// minute on two cores. See fetchCalibration for what each checks.
func TestFetchCalibrationReuse(t *testing.T) { fetchCalibration(t, simulate.RegimeReuse) }

func TestFetchCalibrationChange(t *testing.T) { fetchCalibration(t, simulate.RegimeChange) }

func TestFetchCalibrationMixed(t *testing.T) { fetchCalibration(t, simulate.RegimeMixed) }

func TestFetchCalibrationSharedClient(t *testing.T) {
	fetchCalibration(t, simulate.RegimeSharedClient)
}

// TestFetchCalibrationMixedSelfHits scores mixed as
// TestFetchCalibrationMixed does on seeds 9501 and 9502, which no rule
// was chosen on: there, before the null left out its self hits (package
// leak's documentation), the groups given P in [0.5, 0.8) were right
// 0.821 of the time at 0.658 said (n = 168, Wilson 0.76 to 0.87), which
// this test fails; after, 0.664 at 0.666 (n = 235).
func TestFetchCalibrationMixedSelfHits(t *testing.T) {
	fetchCalibrationOn(t, simulate.RegimeMixed, []uint64{9501, 9502})
}

// fetchCalibration checks regime r on its seeds: of the scripts and of
// the groups given P >= 0.95, at least 95% must be right, and in mixed (a
// client fetching for several wallets, on a clustered chain, where a
// script of the chain paid and spent in the wallet's blocks took the
// class's probability: 382 of 407 right on seeds 7701 to 7704 before
// pooled nesting) the lower end of their Wilson interval must reach 0.93;
// no bin may say more than the upper end of its Wilson interval and 0.05
// beyond. Scripts short of 95% are allowed only where every wrong one
// given 0.95 or more is in a session warned that its address fetches for
// several wallets (leak.SeveralWallets: shared-client's scripts, 3 of 7
// right on seeds 7701, 7702, 7901 and 7902), and the sessions not so
// warned must meet it alone. Nor may a bin from P 0.5 on say less than
// the lower end and 0.05 below, other than those stated
// (knownUnderConfident).
func fetchCalibration(t *testing.T, r simulate.Regime) {
	fetchCalibrationOn(t, r, fetchCalibrationSeeds[r])
}

// fetchCalibrationOn is fetchCalibration on the given seeds.
func fetchCalibrationOn(t *testing.T, r simulate.Regime, seeds []uint64) {
	runs := make([]fetchRun, len(seeds))
	t.Run("seeds", func(t *testing.T) {
		for i, seed := range seeds {
			t.Run(fmt.Sprint(seed), func(t *testing.T) {
				t.Parallel()
				runs[i] = scoreFetchRun(t, r, seed)
			})
		}
	})
	if t.Failed() {
		return
	}
	var scripts, groups pooledBins
	var sessions, warned, unwarned, unwarnedRight, wrongWarned int
	for _, run := range runs {
		scripts.add(run.score.Candidates)
		groups.add(run.score.CandidateGroups)
		sessions += run.sessions
		warned += run.warned
		unwarned += run.unwarned
		unwarnedRight += run.unwarnedRight
		wrongWarned += run.wrongWarned
	}
	t.Logf("%s: %d of %d sessions warned of several wallets behind one address", r, warned, sessions)
	if unwarned > 0 {
		lo, _ := simulate.Wilson(unwarnedRight, unwarned)
		t.Logf("%s: scripts given P >= 0.95 in sessions not so warned: %d of %d (%.3f), Wilson low %.3f", r, unwarnedRight, unwarned, float64(unwarnedRight)/float64(unwarned), lo)
		if float64(unwarnedRight) < simulate.TargetRight*float64(unwarned) {
			t.Errorf("%s fetches scripts given P >= 0.95 in sessions not warned of several wallets: %d of %d right", r, unwarnedRight, unwarned)
		}
	}
	for _, k := range []struct {
		name string
		p    *pooledBins
	}{{"scripts", &scripts}, {"groups", &groups}} {
		row := fmt.Sprintf("| fetches: %s |", k.name)
		for i := range 5 {
			row += " " + k.p.cell(i) + " |"
			switch over := k.p.overConfident(i); {
			case over && knownOverConfident[fmt.Sprintf("%s %s %d", r, k.name, i)]:
				t.Logf("%s fetches %s: bin %d over-confident, NOT MET (known): %s", r, k.name, i, k.p.cell(i))
			case over:
				t.Errorf("%s fetches %s: bin %d over-confident: %s", r, k.name, i, k.p.cell(i))
			case k.p.underConfident(i) && knownUnderConfident[fmt.Sprintf("%s %s %d", r, k.name, i)]:
				t.Logf("%s fetches %s: bin %d under-confident (right more often than said), NOT MET (known): %s", r, k.name, i, k.p.cell(i))
			case k.p.underConfident(i):
				t.Errorf("%s fetches %s: bin %d under-confident (right more often than said): %s", r, k.name, i, k.p.cell(i))
			}
		}
		n, right := k.p.count[5], k.p.right[5]
		if n == 0 {
			t.Logf("%s\n%s none |", r, row)
			continue
		}
		lo, _ := simulate.Wilson(right, n)
		t.Logf("%s\n%s %d of %d (%.3f), %.3f |", r, row, right, n, float64(right)/float64(n), lo)
		switch {
		case float64(right) >= simulate.TargetRight*float64(n):
		case k.name == "scripts" && n-right == wrongWarned:
			t.Logf("%s fetches scripts given P >= 0.95: %d of %d right, NOT MET, each wrong one in a session warned of several wallets", r, right, n)
		default:
			t.Errorf("%s fetches %s given P >= 0.95: %d of %d right", r, k.name, right, n)
		}
		if r == simulate.RegimeMixed && lo < 0.93 {
			t.Errorf("%s fetches %s given P >= 0.95: %d of %d right, Wilson lower %.3f < 0.93", r, k.name, right, n, lo)
		}
	}
}

// fetchRun is one seed's score of the block-download attack, and of the
// scripts given P >= 0.95 in sessions not warned of several wallets
// behind one address, how many and how many right; wrongWarned counts
// the wrong ones in warned sessions.
type fetchRun struct {
	score                                *simulate.Score
	sessions, warned                     int
	unwarned, unwarnedRight, wrongWarned int
}

// scoreFetchRun simulates regime r from seed, attacks its downloads and
// scores them; a script is right when one of the session's wallets holds
// it, as evaluate has it.
func scoreFetchRun(t *testing.T, r simulate.Regime, seed uint64) fetchRun {
	t.Helper()
	sc, fcapt, index := fetchCalibrationScenario(t, r, seed)
	score, reps := attackFetches(t, sc, fcapt, index, attack.FetchOptions{})
	run := fetchRun{score: score, sessions: len(reps)}
	owns := sessionOwners(sc.Labels.Fetch)
	for _, rep := range reps {
		warned := strings.Contains(strings.Join(rep.Warnings, "\n"), leak.SeveralWallets)
		if warned {
			run.warned++
		}
		for _, m := range rep.Matched {
			if m.Probability < simulate.ConfidentP {
				continue
			}
			right := owns[rep.Session][m.Candidate]
			switch {
			case warned && !right:
				run.wrongWarned++
			case !warned:
				run.unwarned++
				if right {
					run.unwarnedRight++
				}
			}
		}
	}
	return run
}

// sessionOwners maps each session to the scripts of the wallets it
// fetched for.
func sessionOwners(l *simulate.FetchLabels) map[string]map[string]bool {
	wallets := map[string][]string{}
	for _, w := range l.Wallets {
		wallets[w.ID] = w.Scripts
	}
	out := map[string]map[string]bool{}
	for _, s := range l.Sessions {
		set := map[string]bool{}
		for _, w := range append([]string{s.Wallet}, s.Wallets...) {
			for _, x := range wallets[w] {
				set[x] = true
			}
		}
		out[s.ID] = set
	}
	return out
}
