package notify

import "sync"

// maxPending bounds the notifications of one registration waiting for
// its reader; a reader further behind has its registration cancelled.
const maxPending = 64

// letter is one notification: it delivers itself, waiting for its reader
// until quit is closed (it reports false then).
type letter func(quit <-chan struct{}) bool

// mailbox delivers a registration's notifications in order from a
// goroutine of its own, so that the notifier never waits for a reader.
type mailbox struct {
	mu     sync.Mutex
	queue  []letter
	limit  int
	ending bool // the last letter is queued: the goroutine ends after it

	wake  chan struct{} // a letter was queued
	quit  chan struct{} // closed by stop
	ended chan struct{} // closed when the goroutine ends
	once  sync.Once
}

// newMailbox starts a mailbox of at most limit letters waiting.
func newMailbox(limit int) *mailbox {
	b := &mailbox{limit: limit, wake: make(chan struct{}, 1), quit: make(chan struct{}), ended: make(chan struct{})}
	go b.run()
	return b
}

// put queues l; last ends the mailbox after it. It reports false, and
// queues nothing, when limit letters wait already: the reader is too far
// behind.
func (b *mailbox) put(l letter, last bool) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.ending {
		return true
	}
	if len(b.queue) >= b.limit {
		return false
	}
	b.queue = append(b.queue, l)
	b.ending = last
	select {
	case b.wake <- struct{}{}:
	default:
	}
	return true
}

// run delivers the letters until the last, or until stop.
func (b *mailbox) run() {
	defer close(b.ended)
	for {
		b.mu.Lock()
		var l letter
		if len(b.queue) > 0 {
			l = b.queue[0]
			b.queue[0] = nil
			b.queue = b.queue[1:]
		}
		last := b.ending && len(b.queue) == 0
		b.mu.Unlock()
		if l != nil {
			if !l(b.quit) || last {
				return
			}
			continue
		}
		select {
		case <-b.wake:
		case <-b.quit:
			return
		}
	}
}

// stop ends the delivery and waits for the goroutine; letters not
// delivered are dropped.
func (b *mailbox) stop() {
	b.once.Do(func() { close(b.quit) })
	<-b.ended
}

// send returns a letter sending v on ch.
func send[T any](ch chan T, v T) letter {
	return func(quit <-chan struct{}) bool {
		select {
		case ch <- v:
			return true
		case <-quit:
			return false
		}
	}
}

// offering returns a letter offering v on ch (see offer): it never waits
// for the reader, and keeps its place in the order.
func offering[T any](ch chan T, v T) letter {
	return func(<-chan struct{}) bool {
		offer(ch, v)
		return true
	}
}

// finishing returns the last letter of a registration: it offers the
// done signal, then ends the registration (cancel, from a goroutine of its
// own since cancel waits for the mailbox) so that its channels close.
func finishing(done chan struct{}, cancel func()) letter {
	return func(<-chan struct{}) bool {
		offer(done, struct{}{})
		go cancel()
		return true
	}
}

// offer sends v on ch without waiting: a buffered channel whose reader
// lags loses its oldest value to the newest (confirmations left, a done
// signal: the newest says it all).
func offer[T any](ch chan T, v T) {
	for {
		select {
		case ch <- v:
			return
		default:
		}
		select {
		case <-ch:
		default:
		}
	}
}
