package client

import "regexp"

// WarningKind is what a warning of a scan (ScanResult.Warnings) or of a
// rescan (Rescan.Warnings) is about, so that a caller can act on a
// warning without reading its words, which are written for people and
// stay free to change (see WarningKindOf).
type WarningKind int

// The kinds of warnings. A warning is of the first kind, in this order,
// whose description fits it.
const (
	// WarningOther is a warning of none of the kinds below.
	WarningOther WarningKind = iota
	// WarningSlowPeer: a peer was left out as too slow (past its grace
	// or its budget, see pool.Each); it is named.
	WarningSlowPeer
	// WarningNotCrossChecked: filter headers were not cross-checked with
	// a peer left out unbanned; they rest on the peers left, named.
	WarningNotCrossChecked
	// WarningOnePeer: the result, or some of its heights, rests on one
	// peer, named: nothing it said there was cross-checked with another.
	WarningOnePeer
	// WarningUndecided: peers disagree on a filter that its block cannot
	// decide (a conflict): nobody could be banned for it.
	WarningUndecided
	// WarningBanned: a peer was banned; its proof or reason is given.
	WarningBanned
	// WarningNotUsed: a peer was not used (stalled, disconnected,
	// unreachable); why is given.
	WarningNotUsed
	// WarningOtherBranch: a peer is on another branch than the chain.
	WarningOtherBranch
	// WarningReorganized: the chain was reorganized during the scan.
	WarningReorganized
	// WarningFetchSpread: the blocks fetched could not be spread over
	// several peers, so one peer learnt more of the wallet. A rescan's
	// warnings hold at most one, on the blocks of all its steps.
	WarningFetchSpread
	// WarningWaiting: a rescan waits for peers, named.
	WarningWaiting
	// WarningRevised: filter headers a rescan scanned against were
	// verified anew, below the blocks it remembers.
	WarningRevised
)

// warningKinds describes each kind but WarningOther by the shape of its
// warnings, in the order WarningKindOf tries them.
var warningKinds = []struct {
	kind  WarningKind
	shape *regexp.Regexp
}{
	{WarningSlowPeer, regexp.MustCompile(`: too slow: `)},
	{WarningNotCrossChecked, regexp.MustCompile(`^the filter headers of heights \d+\.\.\d+ were not cross-checked with `)},
	{WarningOnePeer, regexp.MustCompile(`^the \w+ result rests on one peer|^heights \d+\.\.\d+ rest on one peer: |rests on one peer, \S+: no other peer holds the block yet`)},
	{WarningUndecided, regexp.MustCompile(`^(client: )?peers disagree on the filters? of `)},
	{WarningBanned, regexp.MustCompile(`^peer \S+ was banned: `)},
	{WarningNotUsed, regexp.MustCompile(`^peer \S+ was not used: `)},
	{WarningOtherBranch, regexp.MustCompile(`^peer \S+ is on another branch: `)},
	{WarningReorganized, regexp.MustCompile(`^the chain was reorganized: `)},
	{WarningFetchSpread, regexp.MustCompile(`^one peer \(\S+\) was asked for all \d+ blocks fetched|^the \d+ blocks fetched could not be spread evenly`)},
	{WarningWaiting, regexp.MustCompile(`^waiting since `)},
	{WarningRevised, regexp.MustCompile(`^filter headers from height \d+ were verified anew`)},
}

// WarningKindOf returns the kind of w, a warning of ScanResult.Warnings
// or Rescan.Warnings; WarningOther for one of no kind listed.
func WarningKindOf(w string) WarningKind {
	for _, k := range warningKinds {
		if k.shape.MatchString(w) {
			return k.kind
		}
	}
	return WarningOther
}

// String returns the kind's name, as in "one peer".
func (k WarningKind) String() string {
	if k < 0 || int(k) >= len(warningKindNames) {
		return "unknown"
	}
	return warningKindNames[k]
}

var warningKindNames = []string{
	WarningOther: "other", WarningSlowPeer: "slow peer", WarningNotCrossChecked: "not cross-checked",
	WarningOnePeer: "one peer", WarningUndecided: "undecided", WarningBanned: "banned", WarningNotUsed: "not used",
	WarningOtherBranch: "other branch", WarningReorganized: "reorganized", WarningFetchSpread: "fetch spread",
	WarningWaiting: "waiting", WarningRevised: "revised",
}
