package client

import (
	"fmt"
	"strings"
	"testing"
)

// TestRescanWarningsBounded: a following rescan that warns block after
// block (the warning names the height it waits at) keeps one warning of
// the kind, its latest text with how many times it came; warnings about
// other peers or of other kinds are kept apart, and the kinds are
// bounded, those past the bound counted.
func TestRescanWarningsBounded(t *testing.T) {
	r := &Rescan{}
	const blocks = 10000
	for h := range blocks {
		r.addWarnings([]string{
			fmt.Sprintf("no peer left to scan from height %d (waiting for a peer dropped to be dialled again): peer 127.0.0.1:18444: too slow: its answers took %dms", 100+h, h%997),
			fmt.Sprintf("no peer left to scan from height %d (waiting for a peer dropped to be dialled again): peer 127.0.0.1:18445: too slow: its answers took %dms", 100+h, h%991),
			fmt.Sprintf("filter header of block 00000000000000000001%044x differs", h),
		})
	}
	ws := r.Warnings()
	if len(ws) != 3 {
		t.Fatalf("%d warnings after %d blocks, want 3 (one a kind and peer): %q", len(ws), blocks, ws[:min(len(ws), 5)])
	}
	for i, want := range []string{"height 10099 ", "height 10099 ", "differs"} {
		if !strings.Contains(ws[i], want) || !strings.Contains(ws[i], fmt.Sprintf("warned %d times", blocks)) {
			t.Errorf("warning %d = %q, want its latest text (%q) and the times it came", i, ws[i], want)
		}
	}
	if !strings.Contains(ws[0], "18444") || !strings.Contains(ws[1], "18445") {
		t.Errorf("the warnings about two peers merged: %q", ws)
	}

	r = &Rescan{}
	for i := range 2 * maxWarningKinds {
		r.addWarnings([]string{strings.Repeat("x", i+1)})
	}
	ws = r.Warnings()
	if len(ws) != maxWarningKinds+1 || !strings.Contains(ws[maxWarningKinds], fmt.Sprintf("%d more warnings", maxWarningKinds)) {
		t.Errorf("%d warnings of %d kinds, the last %q; want %d kinds and a count of those left out", len(ws), 2*maxWarningKinds, ws[len(ws)-1], maxWarningKinds)
	}
}
