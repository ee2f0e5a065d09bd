package client

import (
	"fmt"
	"slices"
	"testing"
)

// plan is one plan's fetches: each peer with the blocks it was asked
// for, all of a share of cap.
type plan struct {
	cap   int
	asked map[string]int
}

// tally returns the fetchTally of p at the share given.
func (p plan) tally(share float64) *fetchTally {
	t := &fetchTally{share: share}
	for addr, n := range p.asked {
		t.count(addr, n, p.cap)
	}
	return t
}

const (
	tallyA = "127.0.0.1:18444"
	tallyB = "127.0.0.1:18445"
)

// TestFetchTallyNote: the note on one plan's fetches is the one a scan
// wrote before it was made from counts (the texts WarningKindOf reads),
// and none when the blocks were spread within the cap or only one was
// fetched.
func TestFetchTallyNote(t *testing.T) {
	tests := []struct {
		name  string
		plan  plan
		share float64
		want  string
	}{
		{"one peer", plan{12, map[string]int{tallyA: 12}}, 0,
			"one peer (" + tallyA + ") was asked for all 12 blocks fetched: spreading them needs several peers (give more peers, or let the client find them)"},
		{"one block", plan{1, map[string]int{tallyA: 1}}, 0, ""},
		{"one peer may serve all", plan{12, map[string]int{tallyA: 12}}, 1, ""},
		{"over", plan{6, map[string]int{tallyA: 10, tallyB: 2}}, 0,
			"the 12 blocks fetched could not be spread evenly over 2 peers: some peer was asked for more than 6 (the others do not hold them)"},
		{"over, a holder asked for none", plan{2, map[string]int{tallyA: 4, tallyB: 0}}, 0,
			"the 4 blocks fetched could not be spread evenly over 2 peers: some peer was asked for more than 2 (the others do not hold them)"},
		{"even", plan{6, map[string]int{tallyA: 6, tallyB: 6}}, 0, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := tt.plan.tally(tt.share).note()
			if got != tt.want {
				t.Errorf("note %q, want %q", got, tt.want)
			}
			if got != "" && WarningKindOf(got) != WarningFetchSpread {
				t.Errorf("note %q of kind %v", got, WarningKindOf(got))
			}
		})
	}
}

// TestRescanFetchesAddUp: a rescan's warnings end with one note on the
// spread of all its steps' fetches, made from their sums, whether or not
// a step wrote one of its own.
func TestRescanFetchesAddUp(t *testing.T) {
	tests := []struct {
		name  string
		steps []plan
		want  string
	}{
		{"one block a step, one peer", []plan{{1, map[string]int{tallyA: 1}}, {1, map[string]int{tallyA: 1}}, {1, map[string]int{tallyA: 1}}},
			"one peer (" + tallyA + ") was asked for all 3 blocks fetched: spreading them needs several peers (give more peers, or let the client find them)"},
		{"one block only", []plan{{1, map[string]int{tallyA: 1}}}, ""},
		{"even steps", []plan{{2, map[string]int{tallyA: 2, tallyB: 2}}, {1, map[string]int{tallyA: 1, tallyB: 1}}}, ""},
		// A step over (5 of a cap of 3) counts with the even ones.
		{"over in one step", []plan{{2, map[string]int{tallyA: 2, tallyB: 2}}, {3, map[string]int{tallyA: 5, tallyB: 1}}},
			"the 10 blocks fetched could not be spread evenly over 2 peers: some peer was asked for more than 5 (the others do not hold them)"},
		// One block a step, each to either peer: neither over its share.
		{"one block a step, two peers", []plan{{1, map[string]int{tallyA: 1, tallyB: 0}}, {1, map[string]int{tallyA: 0, tallyB: 1}}, {1, map[string]int{tallyA: 1, tallyB: 0}}}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var ws rescanWarnings
			first := "the bip157 result rests on one peer, " + tallyA + ": nothing it said was cross-checked with another peer (give several peers)"
			ws.add(first)
			for _, s := range tt.steps {
				ws.fetches.add(s.tally(0))
			}
			want := []string{first}
			if tt.want != "" {
				want = append(want, tt.want)
			}
			if got := ws.list(); !slices.Equal(got, want) {
				t.Errorf("warnings %q\nwant %q", got, want)
			}
		})
	}
}

// TestRescanAddResultReplacesStepNotes: the notes on the spread a step's
// scan wrote are left out of the rescan's warnings, its other warnings
// kept, and its fetches added up into the one note.
func TestRescanAddResultReplacesStepNotes(t *testing.T) {
	r := &Rescan{}
	other := "peer " + tallyB + " was not used: stalled"
	for range 2 {
		var log scanLog
		p := plan{4, map[string]int{tallyA: 4}}.tally(0)
		w := p.note()
		log.note(w)
		log.fetches.notes = append(log.fetches.notes, w)
		log.fetches.tally.add(p)
		r.addResult(&ScanResult{Warnings: append(slices.Clone(log.notes), other), fetches: &log.fetches})
	}
	want := []string{other + " (warned 2 times, the latest shown)",
		"one peer (" + tallyA + ") was asked for all 8 blocks fetched: spreading them needs several peers (give more peers, or let the client find them)"}
	if got := r.Warnings(); !slices.Equal(got, want) {
		t.Errorf("warnings %q\nwant %q", got, want)
	}
}

// TestFetchTallyBounded: past maxTallyPeers peers, the sums count the
// others as one peer.
func TestFetchTallyBounded(t *testing.T) {
	var sum fetchTally
	for i := range maxTallyPeers + 10 {
		sum.add(plan{1, map[string]int{fmt.Sprintf("127.0.0.1:%d", 20000+i): 1}}.tally(0))
	}
	if len(sum.peers) != maxTallyPeers || !sum.hasOthers || sum.others != (peerTally{asked: 10, limit: 10}) || sum.total != maxTallyPeers+10 {
		t.Errorf("%d peers kept apart, others %+v (kept: %v), total %d", len(sum.peers), sum.others, sum.hasOthers, sum.total)
	}
	if w := sum.note(); w != "" {
		t.Errorf("note %q on blocks spread within their shares", w)
	}
}
