package notify

import (
	"sync"

	"github.com/spvfilter/spvfilter/peer/client"
)

// RegisterBlockEpochs tells of every block connected to the chain after
// best: the blocks since best first (from the fork, if best left the
// chain), then each new one. A nil best starts with the tip. It is built
// on client.SubscribeBlocks: a reader that lags only delays its own
// epochs.
func (n *Notifier) RegisterBlockEpochs(best *BlockEpoch) (*BlockEpochEvent, error) {
	n.mu.Lock()
	ctx, running := n.ctx, n.running
	n.mu.Unlock()
	if !running {
		return nil, ErrStopped
	}
	var from *client.Stamp
	if best != nil {
		from = &client.Stamp{Height: best.Height, Hash: best.Hash, Header: best.Header}
	} else if h := n.c.Chain().Height(); h > 0 {
		from = &client.Stamp{Height: h - 1, Hash: n.c.Chain().Hash(h - 1)}
	}
	sub, err := n.c.SubscribeBlocks(ctx, from)
	if err != nil {
		return nil, err
	}
	r := &epochReg{n: n, sub: sub, epochs: make(chan BlockEpoch), quit: make(chan struct{}), ended: make(chan struct{})}
	n.mu.Lock()
	n.epochs[r] = true
	n.mu.Unlock()
	go r.run()
	return &BlockEpochEvent{Epochs: r.epochs, Cancel: r.cancel}, nil
}

// epochReg is a block epoch registration.
type epochReg struct {
	n      *Notifier
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
		r.n.logf("notify: block epochs ended: %v", err)
	}
}

// cancel ends the registration and closes its channel.
func (r *epochReg) cancel() {
	r.once.Do(func() {
		r.n.mu.Lock()
		delete(r.n.epochs, r)
		r.n.mu.Unlock()
		close(r.quit)
		r.sub.Cancel()
		<-r.ended
	})
}
