package main

import (
	"slices"
	"strings"
	"testing"

	"github.com/spvfilter/spvfilter/privacy/leak"
)

// TestLeakLine: the scan's leak line says what the peers together could
// conclude, with the scripts tied to a group counted apart when they are
// more than those attributed alone, and the single peer that could
// conclude the most.
func TestLeakLine(t *testing.T) {
	addr := func(s string) *string { return &s }
	high := func(p float64) *float64 { return &p }
	for _, tt := range []struct {
		name string
		l    leak.Leak
		want []string
		not  []string
	}{
		{"alone, one peer", leak.Leak{WatchedScripts: 20,
			Peers:     []leak.PeerLeak{{Address: addr("a:1"), BlocksFetched: 40, Confident: 3, GroupConfident: 3}},
			Collusion: leak.PeerLeak{BlocksFetched: 40, Confident: 3, Likely: 5, GroupConfident: 3, Highest: high(1)}},
			[]string{"would attribute 3 of your 20 scripts at >= 0.95 (5 at >= 0.5, highest 1.00); one peer, a:1, saw all 40 blocks"},
			[]string{"among at most"}},
		{"groups", leak.Leak{WatchedScripts: 20,
			Peers: []leak.PeerLeak{{Address: addr("a:1"), BlocksFetched: 20, GroupConfident: 2, LargestConfidentGroup: 2},
				{Address: addr("b:2"), BlocksFetched: 20, GroupConfident: 4, LargestConfidentGroup: 3, Conservative: true}},
			Collusion: leak.PeerLeak{BlocksFetched: 40, Likely: 20, GroupConfident: 20, LargestConfidentGroup: 6, Highest: high(0.5)}},
			[]string{"would attribute 0 of your 20 scripts at >= 0.95 (20 at >= 0.5, highest 0.50), and at >= 0.95 20 of them each among at most 6 scripts one of which is yours",
				"; no single peer more than at most 0, 4 in groups (b:2 saw 20 of 40 blocks)"}, nil},
		{"one script, one block", leak.Leak{WatchedScripts: 1,
			Peers:     []leak.PeerLeak{{Address: addr("a:1"), BlocksFetched: 1}},
			Collusion: leak.PeerLeak{BlocksFetched: 1}},
			[]string{"would attribute 0 of your 1 script at >= 0.95", "saw all 1 block"}, []string{"1 scripts", "1 blocks"}},
		// Every block scanned fetched: the attack matches every
		// candidate and attributes none; before, the line said "none
		// matched" beside the transactions the scan had just found.
		{"every block fetched", leak.Leak{WatchedScripts: 1,
			Peers:     []leak.PeerLeak{{Address: addr("a:1"), BlocksScanned: 3, BlocksFetched: 3}},
			Collusion: leak.PeerLeak{BlocksScanned: 3, BlocksFetched: 3}},
			[]string{"would attribute 0 of your 1 script at >= 0.95 (0 at >= 0.5, every block scanned was fetched: every candidate matches, and the downloads reveal nothing)"},
			[]string{"none matched"}},
		{"some blocks fetched, none matched", leak.Leak{WatchedScripts: 1,
			Peers:     []leak.PeerLeak{{Address: addr("a:1"), BlocksScanned: 30, BlocksFetched: 3}},
			Collusion: leak.PeerLeak{BlocksScanned: 30, BlocksFetched: 3}},
			[]string{"(0 at >= 0.5, none matched)"}, []string{"every candidate matches"}},
		{"no block fetched", leak.Leak{WatchedScripts: 1,
			Peers:     []leak.PeerLeak{{Address: addr("a:1")}},
			Collusion: leak.PeerLeak{}},
			[]string{"would attribute 0 of your 1 script at >= 0.95", "; no block was fetched"}, []string{"saw all 0", "0 blocks"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got := leakLine(&tt.l)
			for _, w := range tt.want {
				if !strings.Contains(got, w) {
					t.Errorf("%q lacks %q", got, w)
				}
			}
			for _, w := range tt.not {
				if strings.Contains(got, w) {
					t.Errorf("%q has %q", got, w)
				}
			}
		})
	}
}

// TestLeakWarningsOf: the warnings of a BIP 157 scan's leak report are
// the scan's too, named as the leak's.
func TestLeakWarningsOf(t *testing.T) {
	few := "the peers together: " + leak.FewBlocks + ": ..."
	for _, tt := range []struct {
		name string
		l    *leak.Leak
		want []string
	}{
		{"few blocks", &leak.Leak{Warnings: []string{few, "b"}}, []string{"leak: " + few, "leak: b"}},
		{"quiet", &leak.Leak{Warnings: []string{}}, []string{}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := leakWarningsOf(tt.l); !slices.Equal(got, tt.want) {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
}
