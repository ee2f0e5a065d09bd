package client

import (
	"fmt"
	"strings"
	"testing"
)

// TestSpreadNoteRoundTrip: every note spreadNote makes of peers it names
// all is read back by parseSpreadNote to the same counts, and is of the
// kind WarningFetchSpread.
func TestSpreadNoteRoundTrip(t *testing.T) {
	a, b, c := "127.0.0.1:18444", "127.0.0.1:18445", "[::1]:18446"
	for _, fs := range [][]peerFetches{
		{{a, 1}},
		{{a, 12}},
		{{a, 8}, {b, 2}, {c, 0}},
		{{a, 2}, {b, 2}},
	} {
		w := spreadNote(fs, 0)
		got, ok := parseSpreadNote(w)
		if !ok {
			t.Errorf("%q not read back", w)
			continue
		}
		want := map[string]int{}
		for _, f := range fs {
			want[f.addr] = f.blocks
		}
		for _, f := range got {
			if want[f.addr] != f.blocks {
				t.Errorf("%q read back %v, want %v", w, got, fs)
			}
			delete(want, f.addr)
		}
		if len(want) != 0 {
			t.Errorf("%q read back %v: %v missing", w, got, want)
		}
		if k := WarningKindOf(w); k != WarningFetchSpread {
			t.Errorf("%q of kind %v", w, k)
		}
	}
	if _, ok := parseSpreadNote("the 5 blocks fetched were spread over 2 peers (at most 3 each): a was asked for 2, b for 2"); ok {
		t.Error("a note whose counts do not add up to its total was read")
	}
}

// TestRescanSpreadNoteAddsUp: a rescan keeps one note on the spread,
// counting every step's blocks per peer, in the place of the first.
func TestRescanSpreadNoteAddsUp(t *testing.T) {
	a, b := "127.0.0.1:18444", "127.0.0.1:18445"
	tests := []struct {
		name  string
		steps [][]peerFetches
		want  string // the start of the one note kept
	}{
		{"one peer", [][]peerFetches{{{a, 2}}, {{a, 1}}, {{a, 1}}},
			"one peer (" + a + ") was asked for all 4 blocks fetched"},
		{"uneven", [][]peerFetches{{{a, 2}}, {{a, 3}, {b, 1}}},
			"the 6 blocks fetched could not be spread evenly over 2 peers (at most 3 each): " + a + " was asked for 5, " + b + " for 1"},
		{"even after all", [][]peerFetches{{{a, 2}}, {{b, 2}}},
			"the 4 blocks fetched were spread over 2 peers (at most 2 each): " + a + " was asked for 2, " + b + " for 2"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var ws rescanWarnings
			ws.add("the bip157 result rests on one peer, " + a + ": nothing it said was cross-checked with another peer (give several peers)")
			for _, s := range tt.steps {
				ws.add(spreadNote(s, 0))
			}
			got := ws.list()
			if len(got) != 2 || !strings.HasPrefix(got[1], tt.want) {
				t.Errorf("warnings %q\nwant the first and one note starting %q", got, tt.want)
			}
		})
	}
}

// TestRescanSpreadNoteBounded: past maxSpreadPeers peers, the note counts
// the blocks of the others without naming them.
func TestRescanSpreadNoteBounded(t *testing.T) {
	var ws rescanWarnings
	for i := range maxSpreadPeers + 10 {
		ws.add(spreadNote([]peerFetches{{fmt.Sprintf("127.0.0.1:%d", 20000+i), 2}}, 0))
	}
	got := ws.list()
	if len(ws.fetched) != maxSpreadPeers || len(got) != 1 ||
		!strings.HasPrefix(got[0], fmt.Sprintf("the %d blocks fetched were spread over %d peers", 2*(maxSpreadPeers+10), maxSpreadPeers)) ||
		!strings.Contains(got[0], fmt.Sprintf("peers past these %d for 20", maxSpreadPeers)) {
		t.Errorf("%d peers named; warnings %q", len(ws.fetched), got)
	}
}
