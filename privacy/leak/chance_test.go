package leak_test

import (
	"bytes"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/spvfilter/spvfilter/privacy/attack"
	"github.com/spvfilter/spvfilter/privacy/capture"
	"github.com/spvfilter/spvfilter/privacy/simulate"
	"github.com/spvfilter/spvfilter/privacy/universe"
)

// TestChanceCountSweep scores each session's interval on its wallet's
// groups (Report.EstimatedWalletGroupsLow..High) on the regimes' 12-wallet
// captures made as the calibration test makes them, from the first seeds
// SPVFILTER_CHANCE_BASES lists (comma separated; seed base+i for the i-th
// regime), and logs per regime the sessions covered against the level
// stated, and each session missed, or every session with
// SPVFILTER_CHANCE_ALL set (skipped without SPVFILTER_CHANCE_BASES):
//
//	SPVFILTER_CHANCE_BASES=6101,6201 go test ./privacy/leak -run TestChanceCountSweep -v
//
// With SPVFILTER_CHANCE_SINGLES set it scores instead each session's
// interval on its wallet's matches of one appearance riding in no other's
// transactions (Report.EstimatedWalletSinglesLow..High).
//
// It asserts nothing of the figures; it fails only when a capture cannot
// be made or analysed.
func TestChanceCountSweep(t *testing.T) {
	v := os.Getenv("SPVFILTER_CHANCE_BASES")
	if v == "" {
		t.Skip("set SPVFILTER_CHANCE_BASES=SEED,SEED")
	}
	type row struct {
		covered, n int
		level      float64
		misses     []string
	}
	singles := os.Getenv("SPVFILTER_CHANCE_SINGLES") != ""
	rows := map[simulate.Regime]*row{}
	var mu sync.Mutex
	var wg sync.WaitGroup
	sem := make(chan struct{}, 2)
	for _, part := range strings.Split(v, ",") {
		base, err := strconv.ParseUint(part, 10, 64)
		if err != nil {
			t.Fatalf("SPVFILTER_CHANCE_BASES=%q: %v", v, err)
		}
		for i, ri := range simulate.Regimes() {
			r := ri.Regime
			if r == simulate.RegimeCovered {
				continue
			}
			seed := base + uint64(i)
			wg.Add(1)
			go func() {
				defer wg.Done()
				sem <- struct{}{}
				defer func() { <-sem }()
				res := chanceSessions(t, r, seed, singles)
				mu.Lock()
				defer mu.Unlock()
				rw := rows[r]
				if rw == nil {
					rw = &row{}
					rows[r] = rw
				}
				for _, s := range res {
					rw.n++
					rw.level += s.level
					if s.covered {
						rw.covered++
					}
					if !s.covered || os.Getenv("SPVFILTER_CHANCE_ALL") != "" {
						rw.misses = append(rw.misses, s.line)
					}
				}
			}()
		}
	}
	wg.Wait()
	var all, covered int
	var level float64
	for _, ri := range simulate.Regimes() {
		rw := rows[ri.Regime]
		if rw == nil {
			continue
		}
		all += rw.n
		covered += rw.covered
		level += rw.level
		t.Logf("%-14s %3d of %3d covered (%.3f) at %.3f stated", ri.Regime, rw.covered, rw.n, float64(rw.covered)/float64(rw.n), rw.level/float64(rw.n))
		for _, m := range rw.misses {
			t.Logf("    missed: %s", m)
		}
	}
	t.Logf("all            %3d of %3d covered (%.3f) at %.3f stated", covered, all, float64(covered)/float64(all), level/float64(all))
}

// chanceSession is one session's interval on its wallet's groups held
// to the truth.
type chanceSession struct {
	covered bool
	level   float64
	line    string
}

// chanceSessions analyses the fetch capture of the regime's 12-wallet
// scenario at seed and holds each session's interval on its wallet's
// groups to the truth: the report's groups (and lone matches) whose most
// appearing member appears twice or more and that hold a wallet's script;
// with singles, its interval on its wallet's matches of one appearance
// riding in no other's transactions to the count of such matches that are
// a wallet's.
func chanceSessions(t *testing.T, r simulate.Regime, seed uint64, singles bool) []chanceSession {
	t.Helper()
	o, err := simulate.RegimeOptions(r)
	if err != nil {
		t.Error(err)
		return nil
	}
	o.Seed, o.Wallets = seed, 30
	o.Addresses.Max = min(o.Addresses.Max, 2000)
	o.Chain = simulate.ChainOptions{Blocks: 600, TxsPerBlock: 30}
	o.Fetch.Wallets = 12
	sc, err := simulate.Generate(o)
	if err != nil {
		t.Error(err)
		return nil
	}
	var index, fcapt bytes.Buffer
	if err := sc.WriteIndex(&index); err != nil {
		t.Error(err)
		return nil
	}
	if err := sc.WriteFetchCapture(&fcapt); err != nil {
		t.Error(err)
		return nil
	}
	recs, err := capture.Read(&fcapt)
	if err != nil {
		t.Error(err)
		return nil
	}
	sessions, err := capture.FetchSessions(recs)
	if err != nil {
		t.Error(err)
		return nil
	}
	ir, err := universe.NewIndexReader(bytes.NewReader(index.Bytes()))
	if err != nil {
		t.Error(err)
		return nil
	}
	reps, err := attack.AnalyzeFetches(sessions, ir, attack.FetchOptions{})
	if err != nil {
		t.Error(err)
		return nil
	}
	scripts := map[string][]string{}
	for _, w := range sc.Labels.Fetch.Wallets {
		scripts[w.ID] = w.Scripts
	}
	owns := map[string]map[string]bool{}
	for _, s := range sc.Labels.Fetch.Sessions {
		set := map[string]bool{}
		for _, w := range append([]string{s.Wallet}, s.Wallets...) {
			for _, x := range scripts[w] {
				set[x] = true
			}
		}
		owns[s.ID] = set
	}
	var out []chanceSession
	for _, rep := range reps {
		if singles {
			if rep.MatchedTruncated || rep.EstimatedWalletSinglesLevel == 0 {
				continue
			}
			alone, wallet := 0, 0
			for _, m := range rep.Matched {
				if m.Appearances == 1 && !m.CoLocated {
					alone++
					if owns[rep.Session][m.Candidate] {
						wallet++
					}
				}
			}
			w := float64(wallet)
			in := w >= rep.EstimatedWalletSinglesLow && w <= rep.EstimatedWalletSinglesHigh
			out = append(out, chanceSession{covered: in, level: rep.EstimatedWalletSinglesLevel,
				line: fmt.Sprintf("covered %v, seed %d %s: %d singles alone, %d the wallet's; said %.1f [%g, %g] at %.3f; fetched %d of %d blocks",
					in, seed, rep.Session, alone, wallet, rep.EstimatedWalletSingles, rep.EstimatedWalletSinglesLow, rep.EstimatedWalletSinglesHigh, rep.EstimatedWalletSinglesLevel, rep.FetchedBlocks, rep.ScannedBlocks)})
			continue
		}
		if rep.MatchedTruncated || rep.EstimatedWalletGroupsLevel == 0 {
			continue
		}
		type unit struct {
			k      uint64
			wallet bool
		}
		units := map[string]*unit{}
		for _, m := range rep.Matched {
			key := m.Candidate
			if m.Group > 0 {
				key = fmt.Sprint("g", m.Group)
			}
			u := units[key]
			if u == nil {
				u = &unit{}
				units[key] = u
			}
			u.k = max(u.k, m.Appearances)
			u.wallet = u.wallet || owns[rep.Session][m.Candidate]
		}
		groups, wallet := 0, 0
		for _, u := range units {
			if u.k >= 2 {
				groups++
				if u.wallet {
					wallet++
				}
			}
		}
		w := float64(wallet)
		out = append(out, chanceSession{
			covered: w >= rep.EstimatedWalletGroupsLow && w <= rep.EstimatedWalletGroupsHigh,
			level:   rep.EstimatedWalletGroupsLevel,
			line: fmt.Sprintf("covered %v, seed %d %s: %d groups, %d the wallet's, chance %d against %.1f; said %.1f [%g, %g] at %.3f; fetched %d of %d blocks",
				w >= rep.EstimatedWalletGroupsLow && w <= rep.EstimatedWalletGroupsHigh, seed, rep.Session, groups, wallet, groups-wallet, float64(groups)-rep.EstimatedWalletGroups, rep.EstimatedWalletGroups, rep.EstimatedWalletGroupsLow, rep.EstimatedWalletGroupsHigh, rep.EstimatedWalletGroupsLevel, rep.FetchedBlocks, rep.ScannedBlocks),
		})
	}
	return out
}
