package simulate_test

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/spvfilter/spvfilter/privacy/attack"
	"github.com/spvfilter/spvfilter/privacy/leak"
	"github.com/spvfilter/spvfilter/privacy/simulate"
)

// TestFetchDump writes every claim of the block-download attack, one a
// tab-separated line, to the file SPVFILTER_FETCH_DUMP names (skipped
// without it), so that the claims can be broken down by what the model
// saw of them: each script (its probability, whether one of its session's
// wallets holds it, its appearances, its group's size, appearances and
// probability, whether it rides, is a passenger, batched or nested, how
// many it is ambiguous with, whether it is paid, settled or escorted, and
// whether its group holds one of the wallets' scripts, whether its
// session is warned of several wallets, and the share of its scanned
// blocks the session fetched), each group, each with its session's
// fetched and scanned blocks and whether it is warned of few blocks, and
// per session each class of
// two or more appearances (kind "class": the null's chance groups in the
// probability column, the groups holding no wallet's script in the right
// column, the class's groups in the size column). On every regime's
// capture of TestCalibrationRegimes (SPVFILTER_FETCH_DUMP_SET=regimes;
// SPVFILTER_FETCH_DUMP_BASE=SEED makes them from other seeds, SEED for the
// first regime, SEED+100k for further capture k), or on the 24-wallet
// captures of SPVFILTER_FETCH_SEEDS (either of the regimes
// SPVFILTER_FETCH_DUMP_REGIMES lists, comma separated, when set):
//
//	SPVFILTER_FETCH_DUMP=claims.tsv SPVFILTER_FETCH_SEEDS=mixed:7701-7704 go test ./privacy/simulate -run TestFetchDump
//
// It asserts nothing of the figures; it fails only when a capture cannot
// be made, scored or written.
func TestFetchDump(t *testing.T) {
	path := os.Getenv("SPVFILTER_FETCH_DUMP")
	if path == "" {
		t.Skip("set SPVFILTER_FETCH_DUMP=FILE")
	}
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	w := bufio.NewWriter(f)
	defer func() {
		if err := w.Flush(); err != nil {
			t.Error(err)
		}
		if err := f.Close(); err != nil {
			t.Error(err)
		}
	}()
	fmt.Fprintln(w, "kind\tregime\tseed\tsession\tp\tright\tk\tsize\tgk\triding\tpassenger\tbatched\tnested\tamb\tgroupP\tmembers\tpaid\tsettled\tescorted\tgroupRight\twarned\tfetchedShare\tfetched\tscanned\tfew")
	dump := func(r simulate.Regime, seed uint64, sc *simulate.Scenario, reps []*attack.FetchReport) {
		owns := sessionOwners(sc.Labels.Fetch)
		for _, rep := range reps {
			own := owns[rep.Session]
			if os.Getenv("SPVFILTER_FETCH_DUMP_PARTNERS") != "" {
				dumpPartners(w, r, seed, rep, own)
				continue
			}
			if os.Getenv("SPVFILTER_FETCH_DUMP_RIDERS") != "" {
				dumpRiders(w, r, seed, rep, own)
				continue
			}
			warned := strings.Contains(strings.Join(rep.Warnings, "\n"), leak.SeveralWallets)
			share := 0.0
			if rep.ScannedBlocks > 0 {
				share = float64(rep.FetchedBlocks) / float64(rep.ScannedBlocks)
			}
			few := strings.Contains(strings.Join(rep.Warnings, "\n"), leak.FewBlocks)
			tail := fmt.Sprintf("\t%d\t%d\t%v", rep.FetchedBlocks, rep.ScannedBlocks, few)
			for _, m := range rep.Matched {
				size, gk, gp, gright := 1, m.Appearances, m.Probability, own[m.Candidate]
				if m.Group > 0 {
					g := rep.Groups[m.Group-1]
					size, gk, gp = len(g.Members), g.Appearances, g.Probability
					gright = slices.ContainsFunc(g.Members, func(c string) bool { return own[c] })
				}
				fmt.Fprintf(w, "script\t%s\t%d\t%s\t%.6f\t%v\t%d\t%d\t%d\t%v\t%v\t%v\t%v\t%d\t%.6f\t-\t%v\t%v\t%v\t%v\t%v\t%.4f%s\n", r, seed, rep.Session, m.Probability, own[m.Candidate], m.Appearances, size, gk, m.CoLocated, m.Passenger, m.Batched, m.Nested, len(m.AmbiguousWith), gp, m.Paid, m.Settled, m.Escorted, gright, warned, share, tail)
			}
			type unitTruth struct {
				k     uint64
				owned bool
			}
			units := map[string]*unitTruth{}
			for _, m := range rep.Matched {
				key := m.Candidate
				if m.Group > 0 {
					key = fmt.Sprint("g", m.Group)
				}
				u := units[key]
				if u == nil {
					u = &unitTruth{}
					units[key] = u
				}
				u.k = max(u.k, m.Appearances)
				u.owned = u.owned || own[m.Candidate]
			}
			chance := map[uint64]int{}
			for _, u := range units {
				if !u.owned {
					chance[u.k]++
				}
			}
			for _, c := range rep.ByAppearances {
				if c.Appearances >= 2 {
					fmt.Fprintf(w, "class\t%s\t%d\t%s\t%.6f\t%d\t%d\t%d\t0\tfalse\tfalse\tfalse\tfalse\t0\t0\t-\tfalse\tfalse\tfalse\tfalse\n", r, seed, rep.Session, c.ExpectedGroupsByShifts, chance[c.Appearances], c.Appearances, c.Groups)
				}
			}
			for _, g := range rep.Groups {
				right, n := false, 0
				for _, c := range g.Members {
					if own[c] {
						right = true
						n++
					}
				}
				rides := strings.HasPrefix(g.Reason, "some appear")
				fmt.Fprintf(w, "group\t%s\t%d\t%s\t%.6f\t%v\t%d\t%d\t%d\t%v\tfalse\tfalse\t%v\t%v\t%.6f\t%d\tfalse\tfalse\tfalse\t%v\t%v\t0%s\n", r, seed, rep.Session, g.Probability, right, g.Appearances, len(g.Members), g.Appearances, rides, g.Nested, g.Ambiguous, g.Probability, n, right, warned, tail)
			}
		}
	}
	if os.Getenv("SPVFILTER_FETCH_DUMP_SET") == "regimes" {
		base := uint64(calibrationSeed)
		if v := os.Getenv("SPVFILTER_FETCH_DUMP_BASE"); v != "" {
			b, err := strconv.ParseUint(v, 10, 64)
			if err != nil {
				t.Fatalf("SPVFILTER_FETCH_DUMP_BASE=%q: %v", v, err)
			}
			base = b
		}
		for i, ri := range simulate.Regimes() {
			r := ri.Regime
			if r == simulate.RegimeCovered {
				continue
			}
			if v := os.Getenv("SPVFILTER_FETCH_DUMP_REGIMES"); v != "" && !slices.Contains(strings.Split(v, ","), string(r)) {
				continue
			}
			sc := regimeScenario(t, r, base+uint64(i))
			var idx, capt bytes.Buffer
			if err := sc.WriteIndex(&idx); err != nil {
				t.Fatal(err)
			}
			if err := sc.WriteFetchCapture(&capt); err != nil {
				t.Fatal(err)
			}
			_, reps := attackFetches(t, sc, &capt, &idx, attack.FetchOptions{})
			dump(r, base+uint64(i), sc, reps)
		}
		return
	}
	_, seeds := fetchSweep(t)
	for _, r := range dumpRegimes(t) {
		for _, seed := range seeds {
			sc, fcapt, index := fetchCalibrationScenario(t, r, seed)
			_, reps := attackFetches(t, sc, fcapt, index, attack.FetchOptions{})
			dump(r, seed, sc, reps)
		}
	}
}

// dumpPartners writes, per script given 0.95 or more that does not ride,
// in how many of its transactions another match sits that has an
// appearance outside its transactions (evidence of its own), against its
// transactions.
func dumpPartners(w *bufio.Writer, r simulate.Regime, seed uint64, rep *attack.FetchReport, own map[string]bool) {
	type key struct {
		h  int32
		tx uint32
	}
	inTx := map[key][]int{}
	for i, m := range rep.Matched {
		for j, txs := range m.Transactions {
			for _, tx := range txs {
				inTx[key{m.Heights[j], tx}] = append(inTx[key{m.Heights[j], tx}], i)
			}
		}
	}
	for i, m := range rep.Matched {
		if m.Probability < 0.95 || m.CoLocated || m.Appearances < 2 {
			continue
		}
		mine := map[key]bool{}
		for j, txs := range m.Transactions {
			for _, tx := range txs {
				mine[key{m.Heights[j], tx}] = true
			}
		}
		txs, withOwn, withPartner := 0, 0, 0
		for k := range mine {
			txs++
			ps := inTx[k]
			if len(ps) > 5 {
				continue
			}
			partner, evidence := false, false
			for _, p := range ps {
				if p == i {
					continue
				}
				partner = true
				pm := rep.Matched[p]
				for j, ptxs := range pm.Transactions {
					for _, tx := range ptxs {
						if !mine[key{pm.Heights[j], tx}] {
							evidence = true
						}
					}
				}
			}
			if partner {
				withPartner++
			}
			if evidence {
				withOwn++
			}
		}
		fmt.Fprintf(w, "partner\t%s\t%d\t%s\t%.6f\t%v\t%d\t%d\t%d\t%d\n", r, seed, rep.Session, m.Probability, own[m.Candidate], m.Appearances, txs, withPartner, withOwn)
	}
}

// dumpRegimes are the regimes of SPVFILTER_FETCH_DUMP_REGIMES, a comma
// separated list, or else SPVFILTER_FETCH_SEEDS's one.
func dumpRegimes(t *testing.T) []simulate.Regime {
	t.Helper()
	r, _ := fetchSweep(t)
	v := os.Getenv("SPVFILTER_FETCH_DUMP_REGIMES")
	if v == "" {
		return []simulate.Regime{r}
	}
	var out []simulate.Regime
	for _, name := range strings.Split(v, ",") {
		ri, err := simulate.ParseRegime(name)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, ri)
	}
	return out
}

// dumpRiders writes, per paid or settled rider of a group, what the
// group shows of it: its appearances, the group's, the matches in each of
// its transactions, whether the group's first member (its most
// appearing) sits in each of them, how many of the group's blocks it
// appears in, the group's probability, and whether it and the group's
// first member are right.
func dumpRiders(w *bufio.Writer, r simulate.Regime, seed uint64, rep *attack.FetchReport, own map[string]bool) {
	type key struct {
		h  int32
		tx uint32
	}
	inTx := map[key][]int{}
	index := map[string]int{}
	for i, m := range rep.Matched {
		index[m.Candidate] = i
		for j, txs := range m.Transactions {
			for _, tx := range txs {
				inTx[key{m.Heights[j], tx}] = append(inTx[key{m.Heights[j], tx}], i)
			}
		}
	}
	for _, m := range rep.Matched {
		if m.Group == 0 || !(m.Paid || m.Settled) {
			continue
		}
		g := rep.Groups[m.Group-1]
		lead := index[g.Members[0]]
		blocks := map[int32]bool{}
		for _, c := range g.Members {
			for _, h := range rep.Matched[index[c]].Heights {
				blocks[h] = true
			}
		}
		var sizes []string
		withLead, leadPaired := 0, 0
		for j, txs := range m.Transactions {
			for _, tx := range txs {
				ps := inTx[key{m.Heights[j], tx}]
				sizes = append(sizes, strconv.Itoa(len(ps)))
				if slices.Contains(ps, lead) {
					withLead++
				}
			}
		}
		lm := rep.Matched[lead]
		leadTxs := 0
		for j, txs := range lm.Transactions {
			for _, tx := range txs {
				leadTxs++
				if len(inTx[key{lm.Heights[j], tx}]) == 2 {
					leadPaired++
				}
			}
		}
		// The other matches of its transactions: their appearances, whether
		// they first appear there, the matches of their later
		// transactions, and whether they are right.
		var hosts []string
		for j, txs := range m.Transactions {
			for _, tx := range txs {
				for _, p := range inTx[key{m.Heights[j], tx}] {
					hm := rep.Matched[p]
					if hm.Candidate == m.Candidate {
						continue
					}
					later := []string{}
					for hj, htxs := range hm.Transactions {
						if hm.Heights[hj] <= m.Heights[j] {
							continue
						}
						for _, htx := range htxs {
							later = append(later, strconv.Itoa(len(inTx[key{hm.Heights[hj], htx}])))
						}
					}
					hosts = append(hosts, fmt.Sprintf("%d/%v/%s/%v/%v", hm.Appearances, hm.Heights[0] == m.Heights[j], strings.Join(later, ":"), own[hm.Candidate], hm.CoLocated))
				}
			}
		}
		warned := strings.Contains(strings.Join(rep.Warnings, "\n"), leak.SeveralWallets)
		fmt.Fprintf(w, "rider\t%s\t%d\t%s\t%.6f\t%v\t%d\t%d\t%d\t%v\t%v\t%.6f\t%s\t%d\t%d\t%d\t%d\t%v\t%d\t%d\t%d\t%d\t%v\t%s\n", r, seed, rep.Session, m.Probability, own[m.Candidate], m.Appearances, len(g.Members), g.Appearances, m.Paid, m.Settled, g.Probability, strings.Join(sizes, ","), withLead, len(blocks), leadTxs, leadPaired, own[g.Members[0]], len(lm.AmbiguousWith), len(m.Heights), rep.FetchedBlocks, rep.ScannedBlocks, warned, strings.Join(hosts, " "))
	}
}
