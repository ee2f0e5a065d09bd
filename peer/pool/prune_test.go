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
