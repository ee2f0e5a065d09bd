package leak

import (
	"fmt"
	"slices"
)

// The lowering of sharedPaying, fitted on the varied neutrino captures
// of package neutrinocapture with every wallet behind one client address
// (TestNeutrinoCaptureVaried, source "shared"): the package
// documentation, "Wallets behind one address that pay each other", gives
// the seeds and the counts.
const (
	// sharedOneSidedShare and sharedOneSidedMin: a capture's sessions
	// warned of several wallets look like wallets that pay each other
	// when at least sharedOneSidedMin of their contested matches given
	// half or more, and at least sharedOneSidedShare of them, are
	// one-sided. On the fitted captures 0.574 to 1 of them were (5 to
	// 49); on package simulate's fetch regimes, whose sessions fetch for
	// several wallets that do not pay each other (mixed seeds 7001, 7002,
	// 7701 to 7704, 7901 to 7904, 8101 to 8104, 9501, 9502; shared-client
	// 7701, 7702, 7911 to 7914), at most 0.36 where 5 or more were (23 of
	// 64, mixed 9501), 4 of 10 and 4 of 8 where fewer.
	sharedOneSidedShare = 0.5
	sharedOneSidedMin   = 5
)

// sharedCalibration is what the scripts of sessions warned of several
// wallets, in a capture whose such sessions look like wallets that pay
// each other, were right against what they were given after every other
// lowering (as payCalibration, pooled until their fractions right rise):
// every script given 0.3 to 0.95, and the contested ones given 0.95 or
// more (the last knot, kept to 1). Fitted on seeds 501 to 516, 601 to
// 616 and 701 to 716 (21,817 scripts given 0.3 to 0.95, 112 of the 146
// contested ones given 0.95 or more right).
var sharedCalibration = []payKnot{
	{0.3000, 0.3000},
	{0.4309, 0.3319},
	{0.7408, 0.4121},
	{0.9015, 0.5253},
	{0.9759, 0.7671},
	{1, 0.7671},
}

// ManyWallets is in the warning of a report whose scripts sharedPaying
// maps because its address has many wallets behind it: see
// sharedManyOthers.
const ManyWallets = "more wallets behind this client's address than two or three"

// sharedManyOthers: a client address one of whose sessions fetches for
// other scripts than the sessions of sharedManyOthers or more other
// wallets (otherWallets) has more wallets behind it than package
// simulate's shared-client and mixed regimes put there: two or three,
// each fetched for alone or all at once, show a session at most three
// other sets of scripts however many sessions each wallet opens. The
// package documentation, "Many wallets behind one address", gives the
// counts measured. Its sessions are mapped as those of wallets that pay
// each other are, whether or not they look like them (sharedPaying).
const sharedManyOthers = 4

// sharedContest is what sharedPaying needs of a capture's sessions
// warned of several wallets: which of their matches are contested, and
// whether they look like wallets that pay each other.
type sharedContest struct {
	// contested[i] holds the candidates of reports[i] that another
	// session of its client address, warned of several wallets too and
	// fetching for other scripts, lists.
	contested []map[string]bool
	// half counts the contested matches of two or more appearances given
	// 0.5 or more, oneSided those of them no such other session gives
	// 0.5 or more.
	half, oneSided int
	// many holds the client addresses (hostOf) of which a session
	// fetches for other scripts than the sessions of sharedManyOthers or
	// more other wallets, and the most of them (otherWallets).
	many map[string]int
}

// paying reports whether the sessions look like wallets that pay each
// other: sharedOneSidedMin and sharedOneSidedShare of the contested
// matches one-sided.
func (c *sharedContest) paying() bool {
	return c.oneSided >= sharedOneSidedMin && float64(c.oneSided) >= sharedOneSidedShare*float64(c.half)
}

// mapped reports whether sharedPaying maps the scripts of r: r is
// warned of several wallets and the sessions so warned look like
// wallets that pay each other, or r's address has many wallets behind
// it (for a report not warned of several wallets, only where payCapture,
// warnPayingWallets' finding, did not map it already).
func (c *sharedContest) mapped(r *Report, payCapture bool) bool {
	if c.many[hostOf(r)] > 0 && (r.severalWallets || !payCapture) {
		return true
	}
	return r.severalWallets && c.paying()
}

// contestShared compares the sessions warned of several wallets of each
// client address (warnSharedClients), as contestOf compares the others:
// a match of two or more appearances is contested when another such
// session of its address lists it too and one of the two fetched for
// other scripts (skipped). Where the wallets behind the address only
// share a client, a script contested is a wallet's of both sessions,
// given half or more by both; where they pay each other, it is often the
// payee's, listed by the payer's session below half (one-sided). At
// most maxSharedWork steps' worth of pairs are compared.
func contestShared(reports []*Report) *sharedContest {
	c := &sharedContest{contested: make([]map[string]bool, len(reports))}
	host := make([]string, len(reports))
	claims := make([][]*Match, len(reports))
	listed := map[string][]int{} // a candidate of two or more appearances -> the several-wallets reports listing it
	given := make([]map[string]float64, len(reports))
	for i, r := range reports {
		if !r.severalWallets {
			continue
		}
		host[i] = hostOf(r)
		claims[i] = r.claimed()
		given[i] = map[string]float64{}
		for _, m := range r.Matched {
			if m.Appearances >= 2 {
				listed[m.Candidate] = append(listed[m.Candidate], i)
				given[i][m.Candidate] = max(given[i][m.Candidate], m.Probability)
			}
		}
	}
	pairs := &sessionPairs{reports: reports, claims: claims, bound: maxSharedWork}
	byHost := map[string][]int{}
	for i, r := range reports {
		if r.severalWallets {
			byHost[host[i]] = append(byHost[host[i]], i)
		}
	}
	for i, r := range reports {
		// Other wallets are no more than other sessions.
		if !r.severalWallets || r.severalOthers < sharedManyOthers {
			continue
		}
		if n := otherWallets(i, byHost[host[i]], pairs.apartMost); n >= sharedManyOthers {
			if c.many == nil {
				c.many = map[string]int{}
			}
			c.many[host[i]] = max(c.many[host[i]], n)
		}
	}
	for i, r := range reports {
		if !r.severalWallets {
			continue
		}
		for _, m := range r.Matched {
			if m.Appearances < 2 {
				continue
			}
			contested, oneSided := false, true
			for _, j := range listed[m.Candidate] {
				if j == i || host[j] != host[i] {
					continue
				}
				if pairs.apart(i, j) {
					contested = true
					oneSided = oneSided && given[j][m.Candidate] < 0.5
				}
			}
			if !contested {
				continue
			}
			if c.contested[i] == nil {
				c.contested[i] = map[string]bool{}
			}
			c.contested[i][m.Candidate] = true
			if m.Probability >= 0.5 {
				c.half++
				if oneSided {
					c.oneSided++
				}
			}
		}
	}
	return c
}

// otherWallets counts the wallets behind the client address of session
// i, other than its own, that the address's sessions (host, i among
// them) show: a session that fetches for other scripts than i (apart:
// one of the two did not fetch most of the other's claims it scanned,
// skippedMost, so that a claim of decoys or chance does not set apart
// two sessions of one wallet) is counted when it fetches for other
// scripts than every session counted before it, in the order of host.
// Sessions of one wallet fetch for the same scripts, so however many
// sessions a wallet opens it is counted once; sessions that fetch for
// different scripts are of different wallets, or of different sets of
// them (a client fetching for all its wallets at once counts as one
// more), so the count is never more than the sets of wallets fetched
// for, and where every pair of sessions of different sets is told apart
// it is all of them but i's own.
func otherWallets(i int, host []int, apart func(i, j int) bool) int {
	var counted []int
	for _, j := range host {
		if j == i || !apart(i, j) {
			continue
		}
		if !slices.ContainsFunc(counted, func(k int) bool { return !apart(j, k) }) {
			counted = append(counted, j)
		}
	}
	return len(counted)
}

// sharedCalibrated is p through sharedCalibration for a script
// contested or given less than 0.95; a script not contested given 0.95
// or more keeps p (such scripts were right 325 of 333 times on seeds
// 501 to 516, 601 to 616 and 701 to 716).
func sharedCalibrated(p float64, contested bool) float64 {
	if !contested && p >= 0.95 {
		return p
	}
	return knotCalibrated(sharedCalibration, p)
}

// sharedRider is what sharedPaying gives a leading rider of two
// appearances (leadingRider) given half or more: its odds times
// payRider, as warnPayingWallets lowers such a script of a session of
// its own address, then through sharedCalibration as a contested script
// (never kept at 0.95 or more). Such a script is often an outside
// payer's change, created in a payment to the wallet and spent in the
// next, whatever address the wallet's client dials from: under one
// address the leading riders kept at 0.95 or more were the wallet's 6 of
// 8 times on seeds 801 to 816 and 2 of 7 on 901 to 916 (every one wrong
// there at 0.95 or more was such a rider), against payRider's 52 of 192
// on captures of separate addresses.
func sharedRider(p float64) float64 {
	return knotCalibrated(sharedCalibration, OddsTimes(p, payRider))
}

// sharedPaying maps, where the sessions warned of several wallets look
// like wallets that pay each other (c.paying), the probability and
// interval of every script of each such session through
// sharedCalibrated (a leading rider of two appearances given half or
// more through sharedRider) once every other lowering is done, and warns
// each report whose scripts it lowered of how many, naming the measured
// figures. Where they do not, it does so for every session of an address
// with many wallets behind it (c.many), warned of several wallets or not
// (but for those payCapture mapped: the capture looks like one whose
// wallets pay each other, warnPayingWallets), with a warning of its own
// (ManyWallets). A client's own report and colluding views are not
// compared.
func sharedPaying(reports []*Report, c *sharedContest, payCapture bool) {
	paying := c.paying()
	if !paying && len(c.many) == 0 {
		return
	}
	for i, r := range reports {
		if r.label != nil || !c.mapped(r, payCapture) {
			continue
		}
		riders := map[int]bool{}
		for k := range r.Matched {
			if m := &r.Matched[k]; m.Probability >= 0.5 && r.leadingRider(m) {
				riders[k] = true
			}
		}
		lowered := r.mapScripts(func(k int, p float64) float64 {
			if riders[k] {
				return sharedRider(p)
			}
			return sharedCalibrated(p, c.contested[i][r.Matched[k].Candidate])
		})
		if lowered == 0 {
			continue
		}
		var rode string
		if len(riders) > 0 {
			rode = fmt.Sprintf("; %d leading scripts of two appearances riding in other matches' transactions (a payer's change created in a payment and spent in the next rides in the payee's blocks) have their odds, given half or more, times %.2f first, as in a capture of separate addresses, and are never kept at 0.95 or more", len(riders), payRider)
		}
		if paying && r.severalWallets {
			r.warn(fmt.Sprintf("%s: %s, of the %d scripts of two or more appearances given half or more that another session of this address warned alike lists too, %d are given less than half by every such session (a payer's blocks carry its payee's script); "+
				"on neutrino clients of 16 wallets behind one address that pay each other (seeds 501 to 516, 601 to 616 and 701 to 716) the scripts given 0.3 to 0.95 were right about a third to a half of the time, those listed too given 0.95 or more 112 of 146 times, "+
				"so %d of its scripts are given what scripts given as much were right there (their intervals through the same map)%s",
				SeveralWallets, PayEachOther, c.half, c.oneSided, lowered, rode))
		} else {
			r.warn(fmt.Sprintf("%s: a session of this address fetches for other scripts than the sessions of %d other wallets (sessions that do not fetch for other scripts than each other counted once, as one wallet's; %d or more; two or three wallets behind an address, as privacy simulate --regime shared-client and mixed put there, gave at most 3 with up to four sessions each, but for one mixed capture in ten of four sessions a wallet, 4), "+
				"and of the %d scripts of two or more appearances given half or more that another session of this address warned of several wallets lists too, %d are given less than half by every such session (%d and half of them make the sessions look like wallets that pay each other); "+
				"on neutrino clients of six wallets behind one address whose sessions did not look so (8 captures of seeds 1401 to 1416 and 1501 to 1516) the scripts given 0.8 to 0.95 were right 134 of 223 times at 0.898 said (mostly an outside payer's change, created in a payment to one wallet and spent in its next payment, to any of them, and the other wallets' scripts), "+
				"so %d of its scripts are given what scripts given as much were right on neutrino clients of 16 wallets behind one address that pay each other (their intervals through the same map)%s",
				ManyWallets, c.many[hostOf(r)], sharedManyOthers, c.half, c.oneSided, sharedOneSidedMin, lowered, rode))
		}
		if r.FetchedBlocks < r.ScannedBlocks {
			r.Verdict = r.verdict()
		}
	}
}
