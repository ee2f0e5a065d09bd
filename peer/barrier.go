package peer

import (
	"context"
	"math/rand/v2"
	"slices"
	"sync"
	"time"

	"github.com/btcsuite/btcd/wire"
)

// maxBarriers bounds the barriers whose pongs are awaited at once (see
// barriers): an honest node's pong follows its answer at once, so one or
// two are.
const maxBarriers = 8

// barriers are the nonces of the last pings sent as barriers (see the
// package documentation) whose pongs did not come yet: a pong that comes
// after its request ended is dropped, not charged as unsolicited.
type barriers struct {
	mu     sync.Mutex
	nonces []uint64 // oldest first, at most maxBarriers
}

// add records nonce, forgetting the oldest beyond maxBarriers.
func (b *barriers) add(nonce uint64) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if len(b.nonces) == maxBarriers {
		b.nonces = slices.Delete(b.nonces, 0, 1)
	}
	b.nonces = append(b.nonces, nonce)
}

// came reports whether nonce is a barrier's, and forgets it.
func (b *barriers) came(nonce uint64) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	i := slices.Index(b.nonces, nonce)
	if i < 0 {
		return false
	}
	b.nonces = slices.Delete(b.nonces, i, i+1)
	return true
}

// sendBarrier sends the ping that follows a request's messages, its
// barrier (see the package documentation), and returns its nonce.
func (p *Peer) sendBarrier(ctx context.Context, op string, deadline time.Time) (uint64, error) {
	nonce := rand.Uint64()
	p.barriers.add(nonce)
	return nonce, p.send(ctx, op, wire.NewMsgPing(nonce), deadline)
}

// isPong reports whether m is the pong of nonce.
func isPong(m wire.Message, nonce uint64) bool {
	pong, ok := m.(*wire.MsgPong)
	return ok && pong.Nonce == nonce
}

// recvBarred is recv for a request followed by the barrier of nonce: it
// returns the answer, or an *UnansweredError when the barrier's pong came
// first.
func (p *Peer) recvBarred(ctx context.Context, op string, deadline time.Time, want func(wire.Message) bool, nonce uint64) (wire.Message, error) {
	m, err := p.recv(ctx, op, deadline, func(m wire.Message) bool { return want(m) || isPong(m, nonce) })
	if err != nil {
		return nil, err
	}
	if isPong(m, nonce) {
		return nil, p.unanswered(op, 0, 1)
	}
	return m, nil
}

// unanswered fails a request of which the node sent got of want
// messages before its barrier's pong, and drops the connection, as a
// timeout does: a node that sends more later would have it taken for the
// next request's answer.
func (p *Peer) unanswered(op string, got, want int) error {
	return p.fail(op, "%w", &UnansweredError{Got: got, Want: want})
}
