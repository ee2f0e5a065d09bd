package simulate

import (
	"fmt"
	"maps"
	"slices"
	"strings"
)

// sessionWallets returns the wallets of a labelled session (none for a
// session of no wallet).
func (e *evaluator) sessionWallets(id string) []string {
	if s := e.t.sessions[id]; s != nil {
		return walletsOf(s.Wallet, s.Wallets)
	}
	if s := e.t.fetchSessions[id]; s != nil {
		return walletsOf(s.Wallet, s.Wallets)
	}
	return nil
}

// sessionWallet names a session's wallets, joined by "+" ("" for none).
func (e *evaluator) sessionWallet(id string) string { return strings.Join(e.sessionWallets(id), "+") }

// shareWallet reports whether two sessions are of one wallet: whether
// they share one.
func (e *evaluator) shareWallet(a, b string) bool {
	wb := e.sessionWallets(b)
	return slices.ContainsFunc(e.sessionWallets(a), func(w string) bool { return slices.Contains(wb, w) })
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
		right := e.shareWallet(a, b)
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

// walletSessions lists the report's sessions of each wallet.
func (e *evaluator) walletSessions() map[string][]string {
	per := map[string][]string{}
	for _, id := range e.known {
		for _, w := range e.sessionWallets(id) {
			per[w] = append(per[w], id)
		}
	}
	return per
}

// truePairs counts the pairs of the report's sessions that share a
// wallet.
func (e *evaluator) truePairs() int {
	pairs := map[[2]string]bool{}
	n := 0
	for _, ids := range e.walletSessions() {
		for i, a := range ids {
			for _, b := range ids[i+1:] {
				k := [2]string{min(a, b), max(a, b)}
				if !pairs[k] {
					pairs[k] = true
					n++
				}
			}
		}
	}
	return n
}

// linkGroups scores the groups of linked sessions.
func (e *evaluator) linkGroups(groups []object) {
	gs := &GroupScore{Groups: []GroupReport{}, Candidates: newClaimScore()}
	per := e.walletSessions()
	for _, ids := range per {
		if len(ids) > 1 {
			gs.LinkableWalletCount++
		}
	}
	pairs := map[[2]string]bool{}
	for _, g := range groups {
		gr, claims := e.group("link groups", g)
		gs.GroupCount++
		if gr.Pure {
			gs.PureCount++
			if len(gr.Sessions) == len(per[gr.Majority]) {
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
				if e.shareWallet(a, b) {
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
// --intersect report): its candidates are right when a wallet every
// session is of owns them (else the wallet most of them are of), and its
// estimate is set against the candidates every member's filters hold.
func (e *evaluator) group(where string, g object) (GroupReport, *ClaimScore) {
	gr := GroupReport{Sessions: g.strs("sessions"), SessionWallets: []string{}, EstimatedWallet: g.num("estimated_wallet")}
	if gr.Sessions == nil {
		gr.Sessions = []string{}
	}
	count := map[string]int{}
	var truth map[string]bool
	for i, id := range gr.Sessions {
		gr.SessionWallets = append(gr.SessionWallets, e.sessionWallet(id))
		for _, w := range e.sessionWallets(id) {
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
	// A match is right when a wallet common to all the group's sessions
	// owns it (sessions of a client several wallets share hold each of
	// them), else the majority's wallet.
	var owners []*walletTruth
	for _, w := range slices.Sorted(maps.Keys(count)) {
		if wt := e.t.wallets[w]; wt != nil && count[w] == len(gr.Sessions) {
			owners = append(owners, wt)
		}
	}
	if wt := e.t.wallets[gr.Majority]; wt != nil && len(owners) == 0 {
		owners = append(owners, wt)
	}
	owns := func(c string) bool {
		return slices.ContainsFunc(owners, func(wt *walletTruth) bool { return wt.owns(c) })
	}
	cs := e.claims(claimContext{where + " matches", gr.Sessions}, g.objects("matched"), owns, truth)
	cs.finish()
	gr.Candidates = cs.Counts
	ivs, used := findIntervals(g)
	e.countIntervals(where, ivs, len(truth), nil)
	e.noteUnscored(where, unknownKeys(g, knownSession, used))
	return gr, cs
}
