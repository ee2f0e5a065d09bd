package simulate_test

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/spvfilter/spvfilter/privacy/attack"
	"github.com/spvfilter/spvfilter/privacy/leak"
	"github.com/spvfilter/spvfilter/privacy/simulate"
)

// feature is a simple thing an attacker sees of a matched script in one
// session's report.
type feature struct {
	name string
	of   func(r *leak.Report, m *leak.Match) float64
}

// features are the simple features of the distinguisher: appearances, era
// (the decile of the scanned range of the first appearance), type (the
// address's kind: segwit or not), the span from the first appearance to
// the last (when it was spent, as far as the blocks show), and whether it
// rides in other matches' transactions.
var features = []feature{
	{"appearances", func(_ *leak.Report, m *leak.Match) float64 { return float64(m.Appearances) }},
	{"era", func(r *leak.Report, m *leak.Match) float64 {
		if len(m.Heights) == 0 || r.ScannedFrom == nil || *r.ScannedTo <= *r.ScannedFrom {
			return 0
		}
		return float64(min(9, 10*(m.Heights[0]-*r.ScannedFrom)/(*r.ScannedTo-*r.ScannedFrom+1)))
	}},
	{"type", func(_ *leak.Report, m *leak.Match) float64 {
		if strings.HasPrefix(m.Candidate, "bc") || strings.HasPrefix(m.Candidate, "tb") || strings.HasPrefix(m.Candidate, "sb") {
			return 1
		}
		return 0
	}},
	{"span", func(_ *leak.Report, m *leak.Match) float64 {
		if len(m.Heights) == 0 {
			return 0
		}
		return float64(m.Heights[len(m.Heights)-1] - m.Heights[0])
	}},
	{"riding", func(_ *leak.Report, m *leak.Match) float64 {
		if m.CoLocated {
			return 1
		}
		return 0
	}},
	{"group size", func(r *leak.Report, m *leak.Match) float64 {
		if m.Group < 1 || m.Group > len(r.Groups) {
			return 1
		}
		return float64(len(r.Groups[m.Group-1].Members))
	}},
}

// knownDistinguishers are the features that tell the covered regime's
// covers from the wallet's scripts on its seed, stated as targets not
// met; each must still tell them apart: a fixed draw must leave this
// list. None is left on coveredSeed. Group size left it when covers
// were drawn as chains (drawn singly, an AUC of 0.983 [0.972, 0.992]),
// era when leak.Shape took the chain's mean era (its first era: 0.444
// [0.393, 0.494]), riding when the draw matched it: a wallet's script
// of three or more appearances sits in other matches' transactions in
// every one of them, a cover of as many did far less often (over seeds
// 4101 to 4112, 225 of 232 against 44 of 168; folded 0.537 [0.517,
// 0.554] on coveredSeed) while the candidates were profiled without
// riding and their appearances outside the chain sat alone (escort).
// The check below can still fail: any feature that tells them apart
// fails it.
var knownDistinguishers = map[string]bool{}

// auc is the area under the ROC curve of x telling a (positives) from b:
// the chance that a random positive scores above a random negative, ties
// counting half.
func auc(a, b []float64) float64 {
	if len(a) == 0 || len(b) == 0 {
		return 0.5
	}
	bs := slices.Clone(b)
	slices.Sort(bs)
	var sum float64
	for _, x := range a {
		lo, _ := slices.BinarySearch(bs, x)
		hi := lo
		for hi < len(bs) && bs[hi] == x {
			hi++
		}
		sum += float64(lo) + 0.5*float64(hi-lo)
	}
	return sum / float64(len(a)*len(b))
}

// bootstrapAUC is the 95% percentile interval of auc over resamples of a
// and b, with a generator of a fixed seed.
func bootstrapAUC(a, b []float64, seed uint64) (lo, hi float64) {
	rng := rand.New(rand.NewPCG(seed, 1))
	const n = 400
	out := make([]float64, n)
	ra, rb := make([]float64, len(a)), make([]float64, len(b))
	for i := range out {
		for j := range ra {
			ra[j] = a[rng.IntN(len(a))]
		}
		for j := range rb {
			rb[j] = b[rng.IntN(len(b))]
		}
		out[i] = auc(ra, rb)
	}
	slices.Sort(out)
	return out[n*25/1000], out[n*975/1000-1]
}

// distinguish is, per feature, the AUC of the wallet's matched scripts
// against its covers' over the wallet sessions of reps, with a bootstrap
// interval, as a Markdown table, and the best feature's AUC (as
// max(AUC, 1-AUC)) and interval.
func distinguish(t *testing.T, sc *simulate.Scenario, reps []*attack.FetchReport) (table string, folded map[string][2]float64, nWallet, nCover int) {
	t.Helper()
	type truth struct{ wallet, covers map[string]bool }
	byWallet := map[string]truth{}
	for _, w := range sc.Labels.Fetch.Wallets {
		tr := truth{map[string]bool{}, map[string]bool{}}
		for _, s := range w.Scripts {
			tr.wallet[s] = true
		}
		for _, s := range w.Covers {
			tr.covers[s] = true
		}
		byWallet[w.ID] = tr
	}
	sessionWallet := map[string]string{}
	for _, s := range sc.Labels.Fetch.Sessions {
		sessionWallet[s.ID] = s.Wallet
	}
	xs := make([][2][]float64, len(features))
	for _, r := range reps {
		tr, ok := byWallet[sessionWallet[r.Session]]
		if !ok {
			continue
		}
		for i := range r.Matched {
			m := &r.Matched[i]
			side := -1
			switch {
			case tr.wallet[m.Candidate]:
				side = 0
			case tr.covers[m.Candidate]:
				side = 1
			}
			if side < 0 {
				continue
			}
			for f, ft := range features {
				xs[f][side] = append(xs[f][side], ft.of(r, m))
			}
		}
	}
	var b strings.Builder
	b.WriteString("| feature | AUC wallet vs cover | bootstrap 95% |\n|---|---|---|\n")
	folded = map[string][2]float64{}
	for f, ft := range features {
		a := auc(xs[f][0], xs[f][1])
		lo, hi := bootstrapAUC(xs[f][0], xs[f][1], uint64(f)+1)
		fmt.Fprintf(&b, "| %s | %.3f | [%.3f, %.3f] |\n", ft.name, a, lo, hi)
		// Either direction tells them apart: fold about 0.5.
		if a >= 0.5 {
			folded[ft.name] = [2]float64{lo, hi}
		} else {
			folded[ft.name] = [2]float64{1 - hi, 1 - lo}
		}
	}
	return b.String(), folded, len(xs[0][0]), len(xs[0][1])
}

// TestCoverDistinguisher measures how well the simple features of a
// matched script (appearances, era, type, span, riding, the size of its
// group) tell the wallet's scripts from the covers the covered regime
// draws as chains of their chains' shapes, on its sessions, by the AUC of each feature
// with a bootstrap 95% interval (go test ./privacy/simulate -run
// TestCoverDistinguisher -v prints the table). The target, for each
// feature drawn by profile: an interval (AUC folded about 0.5) that
// reaches 0.5 and ends at most at 0.6. The features of
// knownDistinguishers must still miss it, so the measure can fail (and
// group size, not among them, failed it at an AUC of 0.98 when covers
// were drawn singly).
func TestCoverDistinguisher(t *testing.T) {
	sc, fcapt, index := fetchScenario(t, simulate.RegimeCovered, coveredSeed, 0.5)
	_, reps := attackFetches(t, sc, fcapt, index, attack.FetchOptions{CoverTarget: 0.5, MaxMatches: 1 << 20})
	table, folded, nw, nc := distinguish(t, sc, reps)
	t.Logf("wallet scripts against covers, %d and %d matches:\n%s", nw, nc, table)
	if nw < 30 || nc < 30 {
		t.Fatalf("too few matches to measure: %d of the wallet, %d covers", nw, nc)
	}
	for _, f := range features {
		iv := folded[f.name]
		tells := iv[0] > 0.5 || iv[1] > 0.6
		switch {
		case tells && !knownDistinguishers[f.name]:
			t.Errorf("%s tells covers from the wallet's scripts: folded AUC in [%.3f, %.3f], want an interval reaching 0.5 and ending at most at 0.6", f.name, iv[0], iv[1])
		case !tells && knownDistinguishers[f.name]:
			t.Errorf("%s no longer tells covers from the wallet's scripts (folded AUC in [%.3f, %.3f]): take it out of knownDistinguishers", f.name, iv[0], iv[1])
		case tells:
			t.Logf("NOT MET: %s tells covers from the wallet's scripts: folded AUC in [%.3f, %.3f]", f.name, iv[0], iv[1])
		}
	}
}
