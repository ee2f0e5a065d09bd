package client

import "sync"

// tipSignal tells whoever waits that the chain or a peer's tip may have
// moved, without polling.
type tipSignal struct {
	mu sync.Mutex
	ch chan struct{}
}

// notify wakes whoever waits on changed.
func (t *tipSignal) notify() {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.ch != nil {
		close(t.ch)
	}
	t.ch = make(chan struct{})
}

// changed returns a channel closed at the next notify.
func (t *tipSignal) changed() <-chan struct{} {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.ch == nil {
		t.ch = make(chan struct{})
	}
	return t.ch
}
