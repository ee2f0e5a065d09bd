package pool

import "testing"

// TestPrunedMembersKeepTheirBytes: a member found by discovery and
// forgotten after failing too often still counts in the pool's bytes, as
// a removed one does.
func TestPrunedMembersKeepTheirBytes(t *testing.T) {
	p := &Pool{members: []*Member{
		{addr: "127.0.0.1:1", received: 100, sent: 50, failures: maxFailures},
		{addr: "127.0.0.1:2", received: 7, sent: 3, permanent: true, failures: maxFailures},
	}}
	p.mu.Lock()
	p.pruneLocked()
	left := len(p.members)
	p.mu.Unlock()
	if left != 1 {
		t.Fatalf("%d members after pruning, want the permanent one", left)
	}
	if received, sent := p.bytes(); received != 107 || sent != 53 {
		t.Errorf("bytes after pruning: %d received, %d sent; want 107, 53", received, sent)
	}
}

// TestPruneSkipsSlowness: a member found by discovery is forgotten after
// maxFailures dials that failed or connections that did not last in a
// row; its cut-offs as too slow in the row do not count, but
// maxSlowCuts of them do: the first cut after a sit-out of redialMax.
func TestPruneSkipsSlowness(t *testing.T) {
	if redialBackoff(maxSlowCuts-1) != redialMax || redialBackoff(maxSlowCuts-2) == redialMax {
		t.Fatalf("sit-outs %v then %v before the cut that forgets: want the last alone redialMax", redialBackoff(maxSlowCuts-2), redialBackoff(maxSlowCuts-1))
	}
	for _, tt := range []struct {
		name           string
		failures, slow int
		forgotten      bool
	}{
		{"failures only", maxFailures, 0, true},
		{"slow only", maxSlowCuts - 1, maxSlowCuts - 1, false},
		{"slow after a sit-out of the minute", maxSlowCuts, maxSlowCuts, true},
		{"slow and fewer failures", maxFailures + 1, 2, false},
		{"slow and enough failures", maxFailures + 2, 2, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			p := &Pool{members: []*Member{{addr: "127.0.0.1:1", failures: tt.failures, slow: tt.slow}}}
			p.mu.Lock()
			p.pruneLocked()
			forgotten := len(p.members) == 0
			p.mu.Unlock()
			if forgotten != tt.forgotten {
				t.Errorf("%d failures in a row, %d of them slow: forgotten %t, want %t", tt.failures, tt.slow, forgotten, tt.forgotten)
			}
		})
	}
}

// TestRecordKeepsSlowness: a member forgotten, then found again, comes
// back with how many of its failures in a row were cut-offs as too slow,
// so they still do not count toward forgetting it.
func TestRecordKeepsSlowness(t *testing.T) {
	p := &Pool{}
	gone := &Member{addr: "127.0.0.1:1", failures: maxFailures + 4, slow: 4}
	p.records.remember(gone)
	again := p.records.foundAgain(gone.addr)
	if again.failures != gone.failures || again.slow != gone.slow {
		t.Fatalf("found again with %d failures, %d slow; want %d, %d", again.failures, again.slow, gone.failures, gone.slow)
	}
	again.dialing, again.failures = false, again.failures-1 // one failure fewer than forgetting needs
	p.members = []*Member{again}
	p.mu.Lock()
	p.pruneLocked()
	left := len(p.members)
	p.mu.Unlock()
	if left != 1 {
		t.Errorf("forgotten with %d failures in a row, %d of them slow", again.failures, again.slow)
	}
}
