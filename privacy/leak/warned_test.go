package leak_test

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/btcsuite/btcd/chaincfg/chainhash"

	"github.com/spvfilter/spvfilter/privacy/leak"
	"github.com/spvfilter/spvfilter/privacy/universe"
)

// TestWarnedScriptsBelowConfident: wallet a's scripts appear in blocks 10
// to 45, wallet b's in 100 to 135, three blocks a script, and a paid b's
// scripts p0 to p5 in blocks 50 to 94 that a fetched. Where the two
// sessions come from two addresses and b fetched the p blocks too, the
// capture looks like one whose wallets pay each other; from one address,
// the sessions are warned of several wallets behind it. In either, no
// script of either session is given 0.95 or more (nor an interval
// reaching it), and each session whose scripts were given less says so
// with the figure. Without payments, from two addresses, nothing is
// warned and the wallets' own scripts keep 0.95 or more.
func TestWarnedScriptsBelowConfident(t *testing.T) {
	// Every script's three blocks drawn apart from every other's, so
	// that the fetched sets shifted along the scan match few of them.
	rng := rand.New(rand.NewPCG(23, 1))
	free := rng.Perm(200)
	var aFetch, bFetch, paid []int32
	var entries []*universe.IndexEntry
	script := func(name string, fetched ...*[]int32) {
		hs := []int32{int32(free[0]), int32(free[1]), int32(free[2])}
		free = free[3:]
		slices.Sort(hs)
		entries = append(entries, &universe.IndexEntry{Candidate: name, Heights: hs, Txs: [][]uint32{{1}, {1}, {1}}})
		for _, f := range fetched {
			*f = append(*f, hs...)
		}
	}
	for i := range 12 {
		script(fmt.Sprintf("a%02d", i), &aFetch)
		script(fmt.Sprintf("b%02d", i), &bFetch)
	}
	for i := range 6 {
		script(fmt.Sprintf("p%d", i), &paid)
	}
	aFetch = append(aFetch, paid...)
	for _, c := range []struct {
		name   string
		a, b   string
		bFetch []int32
		warned string // the warning expected, "" for none
		figure string // what the warning cites
	}{
		{"two addresses, a pays b", "127.0.0.2:1000", "127.0.0.3:1000", append(append([]int32{}, bFetch...), paid...), leak.PayEachOther, "143 of 152"},
		{"two addresses, no payments", "127.0.0.2:1000", "127.0.0.3:1000", bFetch, "", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			src := &entrySource{hd: &universe.IndexHeader{Version: universe.IndexVersion, Hashes: make([]chainhash.Hash, 200)}}
			for i := range 400 {
				h := int32(i % 190)
				src.entries = append(src.entries, &universe.IndexEntry{Candidate: fmt.Sprintf("bg%04d", i), Heights: []int32{h, h + 7}, Txs: [][]uint32{{50}, {51}}})
			}
			src.entries = append(src.entries, entries...)
			all := []leak.HeightRange{{From: 0, To: 199}}
			views := []leak.View{
				{ID: "a", Client: c.a, Scanned: all, Fetched: aFetch},
				{ID: "b", Client: c.b, Scanned: all, Fetched: c.bFetch},
			}
			reps, err := leak.Analyze(views, src, leak.Options{})
			if err != nil {
				t.Fatal(err)
			}
			for _, r := range reps {
				warnings := strings.Join(r.Warnings, "\n")
				confident, top := 0, 0.0
				for _, m := range r.Matched {
					if m.Probability >= 0.95 {
						confident++
					}
					top = max(top, m.Probability, m.ProbabilityHigh)
				}
				if r.Confident != confident {
					t.Errorf("%s: Confident %d, want %d", r.Session, r.Confident, confident)
				}
				if c.warned == "" {
					if strings.Contains(warnings, "no script of this session") {
						t.Errorf("%s: unwarned and capped: %q", r.Session, r.Warnings)
					}
					if confident == 0 {
						t.Errorf("%s: no script given 0.95 or more without payments", r.Session)
					}
					continue
				}
				if !strings.Contains(warnings, c.warned) {
					t.Fatalf("%s: warnings %q, want one that %s", r.Session, r.Warnings, c.warned)
				}
				if top >= 0.95 {
					t.Errorf("%s: a script or interval at %.4f in a warned session, want below 0.95", r.Session, top)
				}
				var capWarning string
				for _, w := range r.Warnings {
					if strings.Contains(w, "no script of this session is given 0.95 or more") {
						capWarning = w
					}
				}
				switch {
				case capWarning == "" && r.Session == "a":
					t.Errorf("%s: no warning that its scripts are kept below 0.95: %q", r.Session, r.Warnings)
				case capWarning != "" && (!strings.Contains(capWarning, c.warned) || !strings.Contains(capWarning, c.figure)):
					t.Errorf("%s: %q, want it to name %q and the figure %s", r.Session, capWarning, c.warned, c.figure)
				}
			}
		})
	}
}
