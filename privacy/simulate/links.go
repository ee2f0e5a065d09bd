package simulate

import (
	"fmt"
	"maps"
	"slices"
)

// sessionWallet returns the wallet of a labelled session ("" for none).
func (e *evaluator) sessionWallet(id string) string {
	if s := e.t.sessions[id]; s != nil {
		return s.Wallet
	}
	if s := e.t.fetchSessions[id]; s != nil {
		return s.Wallet
	}
	return ""
}

// links scores the pairs and the groups of analyze --link.
func (e *evaluator) links(links object) {
	inReport := map[string]bool{}
	for _, id := range e.known {
		inReport[id] = true
	}
	ls := &LinkScore{ClaimScore: newClaimScore()}
	n := len(e.known)
	ls.PairCount = n * (n - 1) / 2
	ls.TruthCount = e.truePairs()
	threshold := 0.5
	if t := links.num("threshold"); t != nil {
		threshold = *t
	}
	listed := map[[2]string]bool{}
	outside := 0
	for _, p := range links.objects("pairs") {
		a, b := p.str("a"), p.str("b")
		key := [2]string{min(a, b), max(a, b)}
		if !inReport[a] || !inReport[b] || a == b || listed[key] {
			outside++
			continue
		}
		listed[key] = true
		prob := p.num("probability")
		wa := e.sessionWallet(a)
		right := wa != "" && wa == e.sessionWallet(b)
		ivs, used := findIntervals(p)
		e.probIntervals("links", ivs, prob, right)
		e.noteUnscored("link pairs", unknownKeys(p, knownPair, used))
		if prob == nil {
			e.noProb++
			continue
		}
		linked, ok := p.boolean("linked")
		if !ok {
			linked = *prob > threshold
		}
		ls.add(*prob, linked, right)
		if linked && right {
			ls.FoundCount++
		}
		if !right && *prob > ConfidentP {
			ls.WrongAboveConfident++
		}
		if !right && *prob > SureLinkP {
			ls.WrongAboveSure++
		}
		if linked && !right {
			e.mistake(Mistake{Kind: "link", Where: "links", Sessions: []string{a, b}, Probability: *prob})
		}
	}
	if outside > 0 {
		e.warn(fmt.Sprintf("%d link pairs name a session outside the report's labelled sessions, or repeat a pair: left out", outside))
	}
	if shared, _ := links.boolean("pairs_listed_shared_only"); shared {
		e.absent("links: the report lists only the pairs that share a match; the others count as not linked")
	}
	ls.finish()
	e.s.Links = ls
	e.noteUnscored("links", unknownKeys(links, knownLinks, nil))
	e.linkGroups(links.objects("groups"))
}

// walletSessions counts the report's sessions of each wallet.
func (e *evaluator) walletSessions() map[string]int {
	per := map[string]int{}
	for _, id := range e.known {
		if w := e.sessionWallet(id); w != "" {
			per[w]++
		}
	}
	return per
}

// truePairs counts the pairs of the report's sessions that are of one
// wallet.
func (e *evaluator) truePairs() int {
	n := 0
	for _, k := range e.walletSessions() {
		n += k * (k - 1) / 2
	}
	return n
}

// linkGroups scores the groups of linked sessions.
func (e *evaluator) linkGroups(groups []object) {
	gs := &GroupScore{Groups: []GroupReport{}, Candidates: newClaimScore()}
	per := e.walletSessions()
	for _, k := range per {
		if k > 1 {
			gs.LinkableWalletCount++
		}
	}
	pairs := map[[2]string]bool{}
	for _, g := range groups {
		gr, claims := e.group("link groups", g)
		gs.GroupCount++
		if gr.Pure {
			gs.PureCount++
			if len(gr.Sessions) == per[gr.Majority] {
				gs.ExactCount++
			}
		}
		for i, a := range gr.Sessions {
			for _, b := range gr.Sessions[i+1:] {
				key := [2]string{min(a, b), max(a, b)}
				if a == b || pairs[key] {
					continue
				}
				pairs[key] = true
				gs.PairCount++
				if w := e.sessionWallet(a); w != "" && w == e.sessionWallet(b) {
					gs.PairRight++
				}
			}
		}
		gs.Candidates.merge(claims)
		gs.Groups = append(gs.Groups, gr)
	}
	gs.PairPrecision = ratio(gs.PairRight, gs.PairCount)
	gs.PairRecall = ratio(gs.PairRight, e.truePairs())
	gs.Candidates.finish()
	e.s.Groups = gs
}

// group scores a report over several sessions (a linked group, or the
// --intersect report) against the wallet most of them are of: its
// candidates are right when that wallet's, and its estimate is set
// against the candidates every member's filters hold.
func (e *evaluator) group(where string, g object) (GroupReport, *ClaimScore) {
	gr := GroupReport{Sessions: g.strs("sessions"), SessionWallets: []string{}, EstimatedWallet: g.num("estimated_wallet")}
	if gr.Sessions == nil {
		gr.Sessions = []string{}
	}
	count := map[string]int{}
	var truth map[string]bool
	for i, id := range gr.Sessions {
		w := e.sessionWallet(id)
		gr.SessionWallets = append(gr.SessionWallets, w)
		if w != "" {
			count[w]++
		}
		st := map[string]bool{}
		if s := e.t.sessions[id]; s != nil {
			st = e.l.sessionTruth(s)
		}
		if i == 0 {
			truth = st
		} else {
			maps.DeleteFunc(truth, func(a string, _ bool) bool { return !st[a] })
		}
	}
	for _, w := range slices.Sorted(maps.Keys(count)) {
		if count[w] > count[gr.Majority] {
			gr.Majority = w
		}
	}
	gr.Pure = gr.Majority != "" && count[gr.Majority] == len(gr.Sessions)
	gr.WalletCandidates = len(truth)
	var owns func(string) bool
	if wt := e.t.wallets[gr.Majority]; wt != nil {
		owns = wt.owns
	}
	cs := e.claims(claimContext{where + " matches", gr.Sessions}, g.objects("matched"), owns, truth)
	cs.finish()
	gr.Candidates = cs.Counts
	ivs, used := findIntervals(g)
	e.countIntervals(where, ivs, len(truth), nil)
	e.noteUnscored(where, unknownKeys(g, knownSession, used))
	return gr, cs
}
