package client

import (
	"context"
	"time"
)

// A new block reaches the peers within moments of each other, and often
// several blocks in a row do. The service woken by an announcement waits
// for the announcements to settle before it syncs the headers and
// verifies the new filter headers: until none has come for
// announceQuiet, announceSettle at most. The peers that announced
// meanwhile are asked together, each once for the new blocks (a
// getcfheaders of one hash), not once for each block and again as a
// late claimer (see lateClaims) for each peer that announced after the
// verification: the cross-check compares every peer on every new block
// either way.
const (
	announceQuiet  = 250 * time.Millisecond
	announceSettle = time.Second
)

// settle waits, after a wake-up, until no other came for announceQuiet,
// announceSettle at most, or ctx ends.
func (s *service) settle(ctx context.Context) {
	deadline := time.NewTimer(announceSettle)
	defer deadline.Stop()
	quiet := time.NewTimer(announceQuiet)
	defer quiet.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-deadline.C:
			return
		case <-quiet.C:
			return
		case <-s.wake:
			quiet.Reset(announceQuiet)
		}
	}
}
