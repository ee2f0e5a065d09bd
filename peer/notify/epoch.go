package notify

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/spvfilter/spvfilter/peer/client"
)

// epochReg is a block epoch registration.
type epochReg struct {
	drop        func(*epochReg)      // removes it from the notifier
	logf        func(string, ...any) // the notifier's log
	resubscribe func(context.Context, *BlockEpoch) (*client.BlockSubscription, error)
	ctx         context.Context // the subscriptions'; stop ends it
	stop        context.CancelFunc
	sub         *client.BlockSubscription // read by run alone
	epochs      chan BlockEpoch
	ended       chan struct{}
	once        sync.Once
	mu          sync.Mutex
	since       time.Time // when the epoch waiting for the reader began to (zero if none)
}

// epochsName names block epoch registrations in a StallError.
const epochsName = "block epochs"

// maxResubscribes bounds the subscriptions in a row that a
// reorganization too deep for them ends before they tell a block: each
// one is ended by a reorganization, so the bound is only met by a chain
// that changes under the registration faster than it tells a block.
const maxResubscribes = 8

// run hands the subscriptions' connected blocks to the reader. A
// subscription remembers only the blocks it told: one whose first block
// leaves the chain with its parent ends with client.ErrReorgTooDeep;
// another is made from the last block told, which starts from its fork
// (the client remembers the blocks that left the chain; SubscribeBlocks
// waits for the header sync that took them out to record them), so that
// the epochs go on with the new chain, as lnd expects, rather than the
// channel being closed, which lnd reads as the notifier's end.
func (r *epochReg) run() {
	defer close(r.ended)
	defer close(r.epochs)
	var last *BlockEpoch
	for again := 0; ; again++ {
		told, ok := r.tell(&last)
		if !ok {
			return
		}
		if told {
			again = 0
		}
		err := r.sub.Err()
		if !errors.Is(err, client.ErrReorgTooDeep) || again >= maxResubscribes {
			if err != nil {
				r.logf("notify: block epochs ended: %v", err)
			}
			return
		}
		sub, serr := r.resubscribe(r.ctx, last)
		if serr != nil {
			r.logf("notify: block epochs ended: %v; subscribing again from the last block told: %v", err, serr)
			return
		}
		r.logf("notify: block epochs: %v: told again from the fork below the last block told", err)
		r.sub.Cancel() // ended: this frees its context
		r.sub = sub
	}
}

// tell hands the current subscription's connected blocks to the reader
// until it ends, keeping the last in *last; it reports whether it told
// any, and false for ok once the registration is cancelled.
func (r *epochReg) tell(last **BlockEpoch) (told, ok bool) {
	for e := range r.sub.Events() {
		if e.Kind != client.EventConnected {
			continue
		}
		epoch := BlockEpoch{Hash: e.BlockHash, Height: e.Height, Header: e.Header}
		r.waiting(time.Now())
		select {
		case r.epochs <- epoch:
			r.waiting(time.Time{})
			*last, told = &epoch, true
		case <-r.ctx.Done():
			return told, false
		}
	}
	return told, r.ctx.Err() == nil
}

// cancel ends the registration and closes its channel.
func (r *epochReg) cancel() {
	r.once.Do(func() {
		r.drop(r)
		r.stop()
		<-r.ended
	})
}

// waiting records since when an epoch waits for the reader (zero: none).
func (r *epochReg) waiting(since time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.since = since
}

// held returns the stall of the registration's reader, nil if no epoch
// waits for it. Nothing queues behind the epoch: the subscription waits.
func (r *epochReg) held() *StallError {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.since.IsZero() {
		return nil
	}
	return &StallError{Registration: epochsName, Kind: StallReader, Since: r.since, Pending: 1}
}
