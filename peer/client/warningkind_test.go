package client

import (
	"slices"
	"strings"
	"testing"

	"github.com/btcsuite/btcd/chaincfg/chainhash"
)

// hasKind reports whether ws holds a warning of kind k whose text holds
// every one of parts (the peers it names, say).
func hasKind(ws []string, k WarningKind, parts ...string) bool {
	return slices.ContainsFunc(ws, func(w string) bool {
		if WarningKindOf(w) != k {
			return false
		}
		for _, p := range parts {
			if !strings.Contains(w, p) {
				return false
			}
		}
		return true
	})
}

// TestWarningKindOf: each kind is told from the warnings the client
// writes, the texts of its own types where it has them, and a warning
// that only mentions a kind's words is not of it (a fetch asked of one
// peer is no result resting on one peer).
func TestWarningKindOf(t *testing.T) {
	const a, b = "127.0.0.1:18444", "127.0.0.1:18555"
	conflict := Conflict{Height: 7, Sides: [][]string{{a}, {b}}, Undecided: "no proof"}
	tests := []struct {
		w    string
		want WarningKind
	}{
		{"peer " + a + " was not used: peer " + a + ": too slow: its answers took 5s on average (the last cut short) against 3ms for the fastest peer's, and kept the scan waiting 7.5s, its budget (2 times the scan's own time, 7.5s at least); left out for 1m0s", WarningSlowPeer},
		{"the filter headers of heights 1..100 were not cross-checked with " + a + ", left out unbanned (too slow or gone, see the peers' warnings): they rest on the peers left, " + b, WarningNotCrossChecked},
		{"the bip157 result rests on one peer (" + a + "): nothing it said was cross-checked with another peer (give several peers)", WarningOnePeer},
		{"the bip37 result rests on one peer, " + a + ", which filtered every block: it could leave a match out of a valid proof undetectably, and nothing it sent was cross-checked with another peer", WarningOnePeer},
		{OnePeer{From: 3, To: 9, Peer: a}.String(), WarningOnePeer},
		{(&OnePeerError{Height: 9, Peer: a}).Error(), WarningOnePeer},
		{conflict.String(), WarningUndecided},
		{(&ConflictError{Height: 7, BlockHash: chainhash.Hash{1}, Sides: [][]string{{a}, {b}}}).Error(), WarningUndecided},
		{"peer " + a + " was banned: it lied", WarningBanned},
		{"peer " + a + " was not used: disconnected", WarningNotUsed},
		{"peer " + a + " is on another branch: it leaves the chain after height 5 for its own tip 00ff at height 9", WarningOtherBranch},
		{"the chain was reorganized: 2 block(s) above height 5 left it for a branch with more work", WarningReorganized},
		{"one peer (" + a + ") was asked for all 12 blocks fetched: spreading them needs several peers (give more peers, or let the client find them)", WarningFetchSpread},
		{"the 12 blocks fetched could not be spread evenly over 2 peers: some peer was asked for more than 6 (the others do not hold them)", WarningFetchSpread},
		{"waiting since 10:00:00 for a peer to scan from: " + a + " is down (warned 3 times, the latest shown)", WarningWaiting},
		{"filter headers from height 5 were verified anew (a peer's later word may have proved those first verified false), below the last 100 blocks", WarningRevised},
		{"syncing headers: no usable peer", WarningOther},
	}
	for _, tt := range tests {
		if got := WarningKindOf(tt.w); got != tt.want {
			t.Errorf("WarningKindOf(%q) = %v, want %v", tt.w, got, tt.want)
		}
	}
	if !hasKind([]string{tests[0].w}, WarningSlowPeer, a) || hasKind([]string{tests[12].w}, WarningOnePeer) {
		t.Error("hasKind does not tell the kinds apart")
	}
}
