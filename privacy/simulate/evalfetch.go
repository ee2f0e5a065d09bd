package simulate

import (
	"fmt"
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
	var unknown []string
	for _, c := range doc.objects("clients") {
		id := c.str("session")
		fs := e.t.fetchSessions[id]
		if fs == nil {
			unknown = append(unknown, id)
			continue
		}
		e.known = append(e.known, id)
		e.fetchSession(c, fs)
	}
	if err := e.checkKnown(unknown); err != nil {
		return err
	}
	if e.s.CandidateGroups == nil {
		e.absent("candidate groups: the report has none (scripts that only appear together, claimed as one)")
	} else {
		e.s.CandidateGroups.finish()
	}
	return nil
}

// fetchSession scores one session of a fetches report.
func (e *evaluator) fetchSession(c object, fs *FetchSession) {
	truth := map[string]bool{}
	var owns func(string) bool
	if wt := e.t.fetchWallets[fs.Wallet]; wt != nil {
		truth, owns = wt.scripts, func(s string) bool { return wt.scripts[s] }
	}
	matched := c.objects("matched")
	cs := e.claims(claimContext{"session matches", []string{fs.ID}}, matched, owns, truth)
	e.truncated(c, fs.ID, len(truth))
	if owns != nil {
		w := e.wallet(fs.Wallet, owns)
		w.sessions++
		for s := range truth {
			w.truth[s] = true
		}
		e.attribute(w, matched)
	}
	if groups := c.objects("groups"); groups != nil {
		e.scriptGroups(fs.ID, groups, owns, truth)
	}
	ivs, used := findIntervals(c)
	e.countIntervals("sessions", ivs, len(truth))
	e.noteUnscored("session reports", unknownKeys(c, knownFetch, used))
	e.s.Candidates.merge(cs)
	cs.finish()
	e.s.Sessions = append(e.s.Sessions, SessionScore{Session: fs.ID, Kind: fs.Kind, Wallet: fs.Wallet,
		EstimatedWallet: c.num("estimated_wallet"), WalletCandidates: len(truth), Counts: cs.Counts})
}

// scriptGroups scores groups of scripts, each claimed with its
// probability to hold one of the wallet's: right when it does; the
// wallet's scripts inside attributed groups are found.
func (e *evaluator) scriptGroups(session string, groups []object, owns func(string) bool, truth map[string]bool) {
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
		p := g.num("probability")
		ivs, used := findIntervals(g)
		e.probIntervals("candidate groups", ivs, p, right)
		e.noteUnscored("candidate groups", unknownKeys(g, knownScriptGroup, used))
		if p == nil {
			e.noProb++
			continue
		}
		attributed := *p >= e.thr
		cs.add(*p, attributed, right)
		if attributed && !right {
			e.mistake(Mistake{Kind: "candidate group", Where: "candidate groups", Sessions: []string{session},
				Candidate: strings.Join(members, " "), Probability: *p})
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
