package notify

import (
	"sync"
	"time"
)

// maxPending bounds the notifications of one registration waiting for
// its reader; a reader further behind has its registration cancelled.
const maxPending = 64

// letter is one notification: it delivers itself, waiting for its reader
// until quit is closed or late fires (it reports false then).
type letter func(quit <-chan struct{}, late <-chan time.Time) bool

// delivery is how a registration's notifications reach its reader: how
// long one may wait for it (Options.MaxReaderWait), and the notifier's
// log.
type delivery struct {
	maxWait time.Duration
	logf    func(string, ...any)
}

// mailbox delivers a registration's notifications in order from a
// goroutine of its own, so that the notifier never waits for a reader.
// A reader that lets a notification wait maxWait, or limit of them pile
// up, stalls the registration: the mailbox keeps why (a *StallError),
// logs it and calls onStall, which cancels the registration.
type mailbox struct {
	name    string // the registration's, for its stall
	d       delivery
	onStall func()

	mu     sync.Mutex
	queue  []letter
	limit  int
	ending bool      // the last letter is queued: the goroutine ends after it
	since  time.Time // when the letter being delivered began to wait, zero if none waits
	stall  *StallError

	wake  chan struct{} // a letter was queued
	quit  chan struct{} // closed by stop
	ended chan struct{} // closed when the goroutine ends
	once  sync.Once
}

// newMailbox starts the mailbox of the registration name, of at most
// limit letters waiting.
func newMailbox(name string, limit int, d delivery, onStall func()) *mailbox {
	if d.maxWait <= 0 {
		d.maxWait = DefaultMaxReaderWait
	}
	b := &mailbox{name: name, d: d, onStall: onStall, limit: limit,
		wake: make(chan struct{}, 1), quit: make(chan struct{}), ended: make(chan struct{})}
	go b.run()
	return b
}

// put queues l; last ends the mailbox after it. When limit letters wait
// already, the reader is too far behind: nothing is queued, and the
// registration is stalled.
func (b *mailbox) put(l letter, last bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.ending || b.stall != nil {
		return
	}
	if len(b.queue) >= b.limit {
		b.stalledLocked()
		return
	}
	b.queue = append(b.queue, l)
	b.ending = last
	select {
	case b.wake <- struct{}{}:
	default:
	}
}

// run delivers the letters until the last, or until stop or a stall.
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
			if !b.deliver(l) || last {
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

// deliver delivers l, waiting for the reader at most maxWait: a reader
// that lets it wait longer stalls the registration.
func (b *mailbox) deliver(l letter) bool {
	b.mu.Lock()
	b.since = time.Now()
	b.mu.Unlock()
	late := time.NewTimer(b.d.maxWait)
	defer late.Stop()
	ok := l(b.quit, late.C)
	b.mu.Lock()
	defer b.mu.Unlock()
	if !ok && !b.stopped() {
		b.stalledLocked()
	}
	b.since = time.Time{}
	return ok
}

// stopped reports whether stop was called.
func (b *mailbox) stopped() bool {
	select {
	case <-b.quit:
		return true
	default:
		return false
	}
}

// held returns the stall of a reader that has not taken a notification
// waiting for it, or nil.
func (b *mailbox) held() *StallError {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.since.IsZero() {
		return nil
	}
	return &StallError{Registration: b.name, Kind: StallReader, Since: b.since, Pending: len(b.queue) + 1}
}

// stalledLocked records that the reader stalled the registration, logs
// it and has it cancelled (from a goroutine of its own: cancelling waits
// for the mailbox). Called with mu held.
func (b *mailbox) stalledLocked() {
	if b.stall != nil {
		return
	}
	now := time.Now()
	since := b.since
	if since.IsZero() {
		since = now
	}
	b.stall = &StallError{Registration: b.name, Kind: StallReader, Since: since, At: now, Pending: len(b.queue) + 1}
	b.d.logf("%v: cancelled", b.stall)
	go b.onStall()
}

// err returns why the reader stalled the registration, or nil.
func (b *mailbox) err() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.stall.asError()
}

// stop ends the delivery and waits for the goroutine; letters not
// delivered are dropped.
func (b *mailbox) stop() {
	b.once.Do(func() { close(b.quit) })
	<-b.ended
}

// send returns a letter sending v on ch.
func send[T any](ch chan T, v T) letter {
	return func(quit <-chan struct{}, late <-chan time.Time) bool {
		select {
		case ch <- v:
			return true
		case <-quit:
			return false
		case <-late:
			return false
		}
	}
}

// offering returns a letter offering v on ch (see offer): it never waits
// for the reader, and keeps its place in the order.
func offering[T any](ch chan T, v T) letter {
	return func(<-chan struct{}, <-chan time.Time) bool {
		offer(ch, v)
		return true
	}
}

// finishing returns the last letter of a registration: it offers the
// done signal, then ends the registration (cancel, from a goroutine of its
// own since cancel waits for the mailbox) so that its channels close.
func finishing(done chan struct{}, cancel func()) letter {
	return func(<-chan struct{}, <-chan time.Time) bool {
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
