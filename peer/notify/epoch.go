package notify

import (
	"sync"

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
}

// run hands the subscription's connected blocks to the reader.
func (r *epochReg) run() {
	defer close(r.ended)
	defer close(r.epochs)
	for e := range r.sub.Events() {
		if e.Kind != client.EventConnected {
			continue
		}
		select {
		case r.epochs <- BlockEpoch{Hash: e.BlockHash, Height: e.Height, Header: e.Header}:
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
