package peer

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/btcsuite/btcd/wire"
)

const (
	// writeQueueLen bounds the messages waiting for the writer: requests
	// run one at a time, but announcements may be sent beside them.
	writeQueueLen = 8
	// maxServes bounds the transactions waiting to be served.
	maxServes = 64
)

// outgoing is a message a request waits to have written.
type outgoing struct {
	msg      wire.Message
	deadline time.Time
	state    atomic.Int32 // queued, then taken or withdrawn, whichever comes first
	done     chan error   // buffered: the writer never waits for the request
}

// The states of an outgoing: queued, it is taken by the writer (and
// written, whole or not at all) or withdrawn by its request, which gave
// up; the writer skips a withdrawn one.
const (
	queued int32 = iota
	taken
	withdrawn
)

// take has the writer write o, unless its request withdrew it.
func (o *outgoing) take() bool { return o.state.CompareAndSwap(queued, taken) }

// withdraw takes o back from the writer; it reports false once the
// writer took it: o is written still.
func (o *outgoing) withdraw() bool { return o.state.CompareAndSwap(queued, withdrawn) }

// served is a transaction the node asked for, in the encoding it asked
// for.
type served struct {
	txid    chainhash.Hash
	witness bool
	tx      *wire.MsgTx
}

// writer is a connection's one writer. Requests queue their messages and
// wait for them to be written; a pong and the transactions the node asked
// for are kept aside and written between them: at most one pong (the
// latest ping's), each transaction once however often it was asked for.
type writer struct {
	queue chan *outgoing
	wake  chan struct{} // a pong or a transaction is due

	mu     sync.Mutex
	ponged bool // a pong is due
	nonce  uint64
	serves []served
}

func (w *writer) init() {
	w.queue = make(chan *outgoing, writeQueueLen)
	w.wake = make(chan struct{}, 1)
}

// pong has the writer answer the ping nonce, replacing an older pong not
// yet written.
func (w *writer) pong(nonce uint64) {
	w.mu.Lock()
	w.ponged, w.nonce = true, nonce
	w.mu.Unlock()
	w.signal()
}

// serve has the writer send s.tx, once however often it was asked for;
// it reports false when maxServes transactions are waiting already.
func (w *writer) serve(s served) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, q := range w.serves {
		if q.txid == s.txid && q.witness == s.witness {
			return true
		}
	}
	if len(w.serves) >= maxServes {
		return false
	}
	w.serves = append(w.serves, s)
	w.signal()
	return true
}

func (w *writer) signal() {
	select {
	case w.wake <- struct{}{}:
	default:
	}
}

// due takes the pong and transactions to write.
func (w *writer) due() (*wire.MsgPong, []served) {
	w.mu.Lock()
	defer w.mu.Unlock()
	var pong *wire.MsgPong
	if w.ponged {
		pong, w.ponged = wire.NewMsgPong(w.nonce), false
	}
	serves := w.serves
	w.serves = nil
	return pong, serves
}

// writeLoop writes the queued messages not withdrawn, and the pong and
// transactions due, until the connection ends or a write fails.
func (p *Peer) writeLoop() {
	for {
		select {
		case <-p.done:
			return
		case o := <-p.w.queue:
			if !o.take() {
				break // withdrawn: its request gave up before it was sent
			}
			err := p.writeMsg(o.msg, o.deadline)
			o.done <- err
			if err != nil {
				return
			}
		case <-p.w.wake:
		}
		pong, serves := p.w.due()
		deadline := time.Now().Add(p.cfg.Timeout)
		if pong != nil && p.writeMsg(pong, deadline) != nil {
			return
		}
		for _, s := range serves {
			p.logf("serve tx %v (witness %t)", s.txid, s.witness)
			if p.writeMsg(s.tx, deadline) != nil {
				return
			}
			p.wrote(s.txid)
		}
	}
}

// writeMsg writes msg by deadline. A failed write ends the connection: a
// message cut short would corrupt the stream.
func (p *Peer) writeMsg(msg wire.Message, deadline time.Time) error {
	p.logf("send %s", msg.Command())
	p.conn.SetWriteDeadline(deadline)
	n, err := wire.WriteMessageWithEncodingN(p.conn, msg, p.pver.Load(), p.cfg.Params.Net, wire.WitnessEncoding)
	p.sent.Add(uint64(n))
	if err == nil || errors.Is(err, net.ErrClosed) {
		return err
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		err = &TimeoutError{What: "could not send " + msg.Command(), Within: p.cfg.Timeout}
	} else {
		err = fmt.Errorf("%w: sending %s: %v", ErrDisconnected, msg.Command(), err)
	}
	p.closeWith(err)
	return err
}

// write queues msg, a message no request awaits an answer to (an inv:
// the node's getdata for it is served by the read loop whenever it
// comes), for the writer and waits until it is written, giving up at
// deadline. Ended by ctx, it keeps the connection: msg is withdrawn if
// the writer has not taken it, else written still, and nothing can
// mistake what the node says of it for another request's answer.
func (p *Peer) write(ctx context.Context, op string, msg wire.Message, deadline time.Time) error {
	_, err := p.writeTaken(ctx, op, msg, deadline, abandonKeeps)
	return err
}

// abandon says what a write ended by its context does with the
// connection (see writeFirst).
type abandon int

const (
	// abandonDrops: msg belongs to a request under way whose first
	// message was sent: the connection is dropped, since an answer to
	// what was sent could come late.
	abandonDrops abandon = iota
	// abandonFirst: msg is the first message of the request in flight:
	// withdrawn before the writer took it, nothing was sent and the
	// connection stays; taken, it is written still and the connection
	// is dropped.
	abandonFirst
	// abandonHeld: msg is the first message of a request whose answer is
	// awaited, within its bound, whatever the context says once msg is
	// out (see HasTxWithin): withdrawn before the writer took it, as
	// abandonFirst; taken, the context no longer counts, and the write
	// is waited for (until deadline), so that the request goes on.
	abandonHeld
	// abandonKeeps: no request awaits an answer to msg (see write): the
	// connection stays whether the writer took msg or not.
	abandonKeeps
)

// writeFirst queues msg for the writer and waits until it is written,
// giving up at deadline; how ends tells what ctx ending first does (see
// abandon). A request waiting for room in the queue or in the queue is
// withdrawn (msg never sent) when ctx ends before the writer took msg.
func (p *Peer) writeFirst(ctx context.Context, op string, msg wire.Message, deadline time.Time, how abandon) error {
	_, err := p.writeTaken(ctx, op, msg, deadline, how)
	return err
}

// writeTaken is writeFirst that also reports whether the writer took
// msg: it was written, or its write began (and failed, the connection
// ending); whatever the error, msg was not sent unless taken.
func (p *Peer) writeTaken(ctx context.Context, op string, msg wire.Message, deadline time.Time, how abandon) (taken bool, err error) {
	if err := ctx.Err(); err != nil {
		if how == abandonDrops {
			p.drop()
		}
		return false, err
	}
	o := &outgoing{msg: msg, deadline: deadline, done: make(chan error, 1)}
	timer := time.NewTimer(time.Until(deadline))
	defer timer.Stop()
	queue, cancelled := p.w.queue, ctx.Done()
	for {
		select {
		case queue <- o:
			queue = nil // queued: now wait for the write
		case err := <-o.done:
			if err != nil {
				return true, p.disconnected(op)
			}
			return true, nil
		case <-p.done:
			select {
			case err := <-o.done:
				if err == nil {
					return true, nil
				}
				return true, p.disconnected(op)
			default:
			}
			return !o.withdraw(), p.disconnected(op)
		case <-cancelled:
			unsent := o.withdraw() // false once the writer took it
			switch {
			case !unsent && how == abandonHeld:
				cancelled = nil // written still: its answer is awaited
				continue
			case how == abandonDrops || !unsent && how == abandonFirst:
				p.drop() // the writer sends it still; or not first
			}
			return !unsent, ctx.Err()
		case <-timer.C:
			return !o.withdraw(), p.fail(op, "%w", &TimeoutError{What: "could not send " + msg.Command(), Within: p.cfg.Timeout})
		}
	}
}
