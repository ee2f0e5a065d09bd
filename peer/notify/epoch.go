package notify

import (
	"sync"
	"time"

	"github.com/spvfilter/spvfilter/peer/client"
)

// epochReg is a block epoch registration.
type epochReg struct {
	drop   func(*epochReg)      // removes it from the notifier
	logf   func(string, ...any) // the notifier's log
	sub    *client.BlockSubscription
	epochs chan BlockEpoch
	quit   chan struct{}
	ended  chan struct{}
	once   sync.Once
	mu     sync.Mutex
	since  time.Time // when the epoch waiting for the reader began to (zero if none)
}

// epochsName names block epoch registrations in a StallError.
const epochsName = "block epochs"

// run hands the subscription's connected blocks to the reader.
func (r *epochReg) run() {
	defer close(r.ended)
	defer close(r.epochs)
	for e := range r.sub.Events() {
		if e.Kind != client.EventConnected {
			continue
		}
		r.waiting(time.Now())
		select {
		case r.epochs <- BlockEpoch{Hash: e.BlockHash, Height: e.Height, Header: e.Header}:
			r.waiting(time.Time{})
		case <-r.quit:
			return
		}
	}
	if err := r.sub.Err(); err != nil {
		r.logf("notify: block epochs ended: %v", err)
	}
}

// cancel ends the registration and closes its channel.
func (r *epochReg) cancel() {
	r.once.Do(func() {
		r.drop(r)
		close(r.quit)
		r.sub.Cancel()
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
