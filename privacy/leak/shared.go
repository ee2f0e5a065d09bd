package leak

import (
	"fmt"
	"net"
)

// SeveralWallets is in the warning of a report whose client address sent
// another session that fetched for other scripts: see
// warnSharedClients.
const SeveralWallets = "from this client's address (its host, whatever the port) fetch for different scripts"

// hostOf is a report's client address without its port: the host its
// sessions are compared by.
func hostOf(r *Report) string {
	if h, _, err := net.SplitHostPort(r.Client); err == nil {
		return h
	}
	return r.Client
}

// warnSharedClients warns the reports of sessions that come from one
// client address (its host, whatever the port) and fetch for different
// scripts: one fetched every block of a match of two or more
// appearances, given 0.5 or more, that the other scanned and did not
// fetch all of. Sessions of one wallet fetch the same wallet's blocks;
// these are several wallets behind one address, and a session may fetch
// for several of them at once. Their downloads in neighbouring blocks
// then match scripts of the chain more often than the fetched set
// shifted along the scan does (a script paid in blocks of the client's
// different wallets), so that scripts given 0.95 or more are right less
// often than said (on the varied neutrino captures of package
// neutrinocapture with every wallet behind one address, seeds 801 to 816
// and 901 to 916, 311 of 336 times); their groups held. Reports of
// colluding views or a client's own (one client's downloads split over
// its peers) are not compared.
func warnSharedClients(reports []*Report) {
	byHost := map[string][]int{}
	var hosts []string
	claims := make([][]*Match, len(reports))
	for i, r := range reports {
		host := hostOf(r)
		if host == "" {
			continue
		}
		if byHost[host] == nil {
			hosts = append(hosts, host)
		}
		byHost[host] = append(byHost[host], i)
		claims[i] = r.claimed()
	}
	pairs := &sessionPairs{reports: reports, claims: claims, bound: maxSharedWork}
	for _, host := range hosts {
		rs := byHost[host]
		others := make([]int, len(rs))
		for i := range rs {
			for j := i + 1; j < len(rs) && !pairs.spent(); j++ {
				if pairs.apart(rs[i], rs[j]) {
					others[i]++
					others[j]++
				}
			}
		}
		for i, k := range rs {
			if others[i] > 0 {
				r := reports[k]
				r.keepPooledGroups()
				r.severalWallets = true
				r.severalOthers = others[i]
				r.warn(fmt.Sprintf("%d other %s %s: one of the two fetched every block of a script of two or more appearances, given half or more, that the other scanned and did not fetch all of; several wallets behind one address, or one client fetching for several at once: on simulated captures of that kind (privacy simulate --regime shared-client) scripts given 0.95 or more were right less often than said (a script of the chain paid in blocks of the client's different wallets), and on neutrino clients of 16 wallets behind one address 311 of 336 times (0.926, Wilson interval 0.892 to 0.949), their groups as often as said: the groups are the claim to read", others[i], forCount(others[i], "session", "sessions"), SeveralWallets))
			}
		}
	}
}

// maxSharedWork bounds the steps spent comparing the sessions of one
// client address.
const maxSharedWork = 10_000_000

// sessionPairs compares the sessions of a capture two at a time, each
// pair once, whether they fetch for different scripts (see "Several
// wallets behind one address" in the package documentation), within
// bound steps in all: a pair not compared by then is not apart.
type sessionPairs struct {
	reports []*Report
	// claims are each report's claims (Report.claimed, and for coFetch
	// claimedGroups too).
	claims [][]*Match
	// bound is the steps the comparisons may spend, work those spent.
	bound, work int
	// callerChecks leaves the bound to the caller (coFetch.sum, which
	// checks it before each session and warns a cut): apart then
	// compares every pair asked for. Checked in apart, the bound would
	// refuse the pairs coFetch.sum asks for after its own steps, charged
	// just before, reached it, and weigh fewer sessions than it does.
	callerChecks bool
	// someApart and mostApart hold the pairs compared, smaller index
	// first.
	someApart, mostApart map[[2]int]bool
}

// spent reports whether the comparisons have spent their bound.
func (p *sessionPairs) spent() bool { return p.work >= p.bound }

// apart reports whether one of sessions i and j fetched for other
// scripts than a claim of the other (skipped).
func (p *sessionPairs) apart(i, j int) bool {
	key := [2]int{min(i, j), max(i, j)}
	d, ok := p.someApart[key]
	if !ok && (p.callerChecks || !p.spent()) {
		p.work += len(p.claims[i]) + len(p.claims[j]) + 1
		d = p.reports[i].skipped(p.claims[j]) || p.reports[j].skipped(p.claims[i])
		if p.someApart == nil {
			p.someApart = map[[2]int]bool{}
		}
		p.someApart[key] = d
	}
	return d
}

// apartMost reports whether one of sessions i and j fetched for other
// scripts than most of the other's claims it scanned (skippedMost). Each
// call is a step, so that the counts of otherWallets too stop at the
// bound.
func (p *sessionPairs) apartMost(i, j int) bool {
	p.work++
	if p.spent() {
		return false
	}
	key := [2]int{min(i, j), max(i, j)}
	d, ok := p.mostApart[key]
	if !ok {
		p.work += len(p.claims[i]) + len(p.claims[j])
		d = p.reports[i].skippedMost(p.claims[j]) || p.reports[j].skippedMost(p.claims[i])
		if p.mostApart == nil {
			p.mostApart = map[[2]int]bool{}
		}
		p.mostApart[key] = d
	}
	return d
}

// claimed lists r's matches of two or more appearances given 0.5 or
// more and not explained by another's blocks.
func (r *Report) claimed() []*Match {
	var out []*Match
	for i := range r.Matched {
		if m := &r.Matched[i]; m.Appearances >= 2 && m.Probability >= 0.5 && !m.Nested {
			out = append(out, m)
		}
	}
	return out
}

// skipped reports whether r scanned every block of one of another
// session's claimed matches and did not fetch all of them: r fetched for
// other scripts.
func (r *Report) skipped(claims []*Match) bool {
	for _, m := range claims {
		if scanned, fetched := r.scannedFetched(m); scanned && !fetched {
			return true
		}
	}
	return false
}

// skippedMost reports whether, of another session's claimed matches
// whose every block r scanned, r did not fetch all of more than half:
// r fetched for other scripts than most of the other's, not only missed
// a claim its decoys or chance gave it.
func (r *Report) skippedMost(claims []*Match) bool {
	scanned, skipped := 0, 0
	for _, m := range claims {
		if s, f := r.scannedFetched(m); s {
			scanned++
			if !f {
				skipped++
			}
		}
	}
	return 2*skipped > scanned
}

// scannedFetched reports whether r scanned every block of m, and
// whether it fetched every one.
func (r *Report) scannedFetched(m *Match) (scanned, fetched bool) {
	scanned, fetched = true, true
	for _, h := range m.Heights {
		i := int(h - r.first)
		if i < 0 || i >= len(r.scanned)*64 {
			return false, false
		}
		scanned = scanned && bitGet(r.scanned, i)
		fetched = fetched && bitGet(r.fetched, i)
	}
	return scanned, fetched
}
