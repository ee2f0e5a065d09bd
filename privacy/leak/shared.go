package leak

import (
	"cmp"
	"fmt"
	"net"
)

// SeveralWallets is the start of the warning of a report whose client
// address sent another session that fetched for other scripts: see
// warnSharedClients.
const SeveralWallets = "sessions from this client's address fetch for different scripts"

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
// often than said; their groups held. Reports of colluding views or a
// client's own (one client's downloads split over its peers) are not
// compared.
func warnSharedClients(reports []*Report) {
	byHost := map[string][]*Report{}
	var hosts []string
	for _, r := range reports {
		host := r.Client
		if h, _, err := net.SplitHostPort(r.Client); err == nil {
			host = h
		}
		if host == "" {
			continue
		}
		if byHost[host] == nil {
			hosts = append(hosts, host)
		}
		byHost[host] = append(byHost[host], r)
	}
	for _, host := range hosts {
		rs := byHost[host]
		warned := make([]string, len(rs))
		for i, a := range rs {
			for j, b := range rs {
				if i == j || warned[i] != "" && warned[j] != "" {
					continue
				}
				if m := a.skippedBy(b); m != "" {
					why := fmt.Sprintf("session %s fetched every block of %s, which session %s scanned and did not fetch all of", a.Session, m, b.Session)
					warned[i], warned[j] = cmp.Or(warned[i], why), cmp.Or(warned[j], why)
				}
			}
		}
		for i, r := range rs {
			if warned[i] != "" {
				r.warn(fmt.Sprintf("%s (%s; %s): several wallets behind one address, or one client fetching for several at once; on simulated captures of that kind (privacy simulate --regime shared-client) scripts given 0.95 or more were right less often than said (a script of the chain paid in blocks of the client's different wallets), their groups as often as said: the groups are the claim to read", SeveralWallets, host, warned[i]))
			}
		}
	}
}

// skippedBy returns a match of r of two or more appearances, given 0.5
// or more and not explained by another's blocks, every block of which o
// scanned and not all of which o fetched: o fetched for other scripts.
// Empty when there is none.
func (r *Report) skippedBy(o *Report) string {
	if len(o.scanned) != len(r.scanned) || r.first != o.first {
		return ""
	}
	for _, m := range r.Matched {
		if m.Appearances < 2 || m.Probability < 0.5 || m.Nested {
			continue
		}
		scanned, fetched := true, true
		for _, h := range m.Heights {
			i := int(h - o.first)
			scanned = scanned && bitGet(o.scanned, i)
			fetched = fetched && bitGet(o.fetched, i)
		}
		if scanned && !fetched {
			return m.Candidate
		}
	}
	return ""
}
