package pool

import (
	"fmt"
	"testing"
	"time"
)

// TestRecordEvictedByOneTimeFailures: an attack on the records of
// forgotten members. A node that hangs up on every connection was
// forgotten with maxFailures+3 failures in a row; its record is due (its
// backoff has passed, the book has not offered it again yet). Then
// maxRecords addresses, each dialled once and refused (a closed port of a
// gossiped address: one failure each, no connection needed), are
// forgotten too. The flapper, found again, must come back with its
// failures, dialled after its doubled backoff, not after redialMin with a
// clean record.
//
// Before (the record due soonest evicted first): the flapper's 6 failures
// in a row became 0 after 1024 one-failure addresses; its next failure
// waited 500ms, not 32s. Now the record with the fewest failures goes
// first, the oldest of those: the flapper keeps its 6.
func TestRecordEvictedByOneTimeFailures(t *testing.T) {
	p := &Pool{}
	now := time.Now()
	flapper := &Member{addr: "127.0.0.1:18444", failures: maxFailures + 3, nextDial: now.Add(-time.Second)}
	p.mu.Lock()
	p.records.remember(flapper)
	for i := range maxRecords {
		m := &Member{addr: fmt.Sprintf("127.0.0.%d:%d", 2+i/60000, 1+i%60000)}
		m.dialFailed(now)
		p.records.remember(m)
	}
	again := p.records.foundAgain(flapper.addr)
	p.mu.Unlock()
	again.dialFailed(now)
	wait, want := again.nextDial.Sub(now), redialBackoff(maxFailures+4)
	t.Logf("after %d one-failure records: the flapper's failures %d -> %d; its next dial after a failure waits %v, want %v",
		maxRecords, maxFailures+3, again.failures-1, wait, want)
	if again.failures-1 != maxFailures+3 {
		t.Errorf("the flapper came back with %d failures in a row, want %d: its record was evicted by %d addresses that failed once",
			again.failures-1, maxFailures+3, maxRecords)
	}
}
