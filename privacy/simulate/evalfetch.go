package simulate

import (
	"fmt"
	"slices"
	"strings"
)

// fetches scores the JSON of "privacy fetches": a listed script is right
// when it is the session's wallet's, and the wallet's scripts are the
// truth (a session scans from its wallet's birthday, so all of them lie in
// its range).
func (e *evaluator) fetches(doc object) error {
	e.s.ReportKind = "fetches"
	if e.t.fetchSessions == nil {
		return fmt.Errorf("%w: a fetches report, but the labels hold no chain", ErrBadReport)
	}
	err := e.sessions(doc.objects("clients"), func(id string) (sessionCase, bool) {
		fs := e.t.fetchSessions[id]
		if fs == nil {
			return sessionCase{}, false
		}
		sc := sessionCase{id: id, wallet: e.sessionWallet(id), kind: fs.Kind, truth: map[string]bool{}, fields: knownFetch}
		var ws []*fetchWalletTruth
		for _, w := range walletsOf(fs.Wallet, fs.Wallets) {
			ws = append(ws, e.t.fetchWallets[w])
		}
		for _, s := range fs.Scripts {
			sc.truth[s] = true
		}
		if len(ws) > 0 {
			sc.owns = func(s string) bool {
				return slices.ContainsFunc(ws, func(w *fetchWalletTruth) bool { return w.scripts[s] })
			}
		}
		sc.counts = func(c object, matched []object) map[string]int { return walletGroups(c, matched, sc.truth) }
		return sc, true
	})
	if err != nil {
		return err
	}
	if e.s.CandidateGroups == nil {
		e.absent("candidate groups: the report has none (scripts that only appear together, claimed as one)")
	}
	return nil
}

// candidateGroups scores a session's groups of candidates, each claimed
// with its probability to hold one of the wallet's: right when it does;
// the wallet's candidates inside attributed groups are found.
func (e *evaluator) candidateGroups(sc sessionCase, groups []object) {
	owns, truth := sc.owns, sc.truth
	if e.s.CandidateGroups == nil {
		e.s.CandidateGroups = newClaimScore()
	}
	cs := e.s.CandidateGroups
	cs.TruthCount += len(truth)
	found := map[string]bool{}
	for _, g := range groups {
		var members []string
		for _, k := range []string{"candidates", "members", "scripts"} {
			if members = g.strs(k); members != nil {
				break
			}
		}
		right := false
		for _, m := range members {
			right = right || owns != nil && owns(m)
		}
		p, attributed, scored := e.claim(cs, "candidate groups", g, knownScriptGroup, right)
		if scored && attributed && !right {
			e.mistake(Mistake{Kind: "candidate group", Where: "candidate groups", Sessions: []string{sc.id},
				Candidate: strings.Join(members, " "), Probability: p})
		}
		if attributed {
			for _, m := range members {
				if truth[m] && !found[m] {
					found[m] = true
					cs.FoundCount++
				}
			}
		}
	}
}

// walletGroups returns the truth of a fetches report's estimated wallet
// groups: of the groups its matches (matched, decoded from its
// "matched") form (those sharing a "group" number,
// each other match alone), the ones whose most appearing member appears
// in two or more blocks and that hold a script of the wallet. Nil when the
// report lists only part of its matches (the count is then unknown).
func walletGroups(c object, matched []object, wallet map[string]bool) map[string]int {
	if t, _ := c.boolean("matched_truncated"); t {
		return nil
	}
	type group struct {
		k      float64
		wallet bool
	}
	var groups []*group
	byID := map[float64]*group{}
	for _, m := range matched {
		id := m.num("group")
		g := byID[ptrOr(id, 0)]
		if g == nil {
			g = &group{}
			groups = append(groups, g)
			if id != nil && *id > 0 {
				byID[*id] = g
			}
		}
		k := m.num("appearance_count")
		if k == nil {
			k = m.num("appearances") // the key before appearance_count
		}
		g.k = max(g.k, ptrOr(k, 0))
		g.wallet = g.wallet || wallet[m.str("candidate")]
	}
	count := 0
	for _, g := range groups {
		if g.k >= 2 && g.wallet {
			count++
		}
	}
	return map[string]int{"estimated_wallet_groups": count}
}

// ptrOr returns *p, or or when p is nil.
func ptrOr(p *float64, or float64) float64 {
	if p == nil {
		return or
	}
	return *p
}
