package peer

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/btcsuite/btcd/wire"
)

// ErrFalseAnnouncement: a node announced a transaction (inv) and did not
// serve it when asked right after (see FalseAnnounceError).
var ErrFalseAnnouncement = errors.New("transaction announced but not served")

// FalseAnnounceError is a node that announced the transaction Txid and
// then answered the getdata for it with notfound (Served nil) or with
// another transaction (Served its txid). Either way the announcement
// proves nothing. Serving another transaction for the txid asked, on a
// connection that asked for nothing else and in a message whose
// checksum holds, proves a lie (no honest node sends a transaction
// unasked: Core and btcd send one only in answer to a getdata of it);
// notfound alone is not proof of one (an honest node may have dropped
// the transaction in between, a replacement say). It wraps
// ErrFalseAnnouncement; test with errors.As.
type FalseAnnounceError struct {
	Txid   chainhash.Hash
	Served *chainhash.Hash // the txid of what was served instead; nil for notfound
}

func (e *FalseAnnounceError) Error() string {
	if e.Served != nil {
		return fmt.Sprintf("%v: the node announced transaction %v, and served transaction %v when asked for it", ErrFalseAnnouncement, e.Txid, *e.Served)
	}
	return fmt.Sprintf("%v: the node announced transaction %v, and answered notfound when asked for it", ErrFalseAnnouncement, e.Txid)
}

// Unwrap returns ErrFalseAnnouncement.
func (e *FalseAnnounceError) Unwrap() error { return ErrFalseAnnouncement }

// UnservedAnnounceError is a node that announced the transaction Txid
// and served nothing for it (neither a transaction nor notfound) within
// Within after the getdata asking for it was written (see CheckWithin).
// Silence proves no lie: the node may be slow, or its connection lost
// the request; the announcement counts for nothing, and the watch's
// connection is closed. It wraps the request's *TimeoutError, so
// ErrStalled; test with errors.As.
type UnservedAnnounceError struct {
	Txid   chainhash.Hash
	Within time.Duration
	Err    error // the request's *TimeoutError
}

func (e *UnservedAnnounceError) Error() string {
	return fmt.Sprintf("%v: the node announced transaction %v, and served nothing within %v of being asked for it", ErrStalled, e.Txid, e.Within)
}

// Unwrap returns the request's error, which wraps ErrStalled.
func (e *UnservedAnnounceError) Unwrap() error { return e.Err }

// WatchOption sets how a TxWatch checks the announcement (see WatchTx).
type WatchOption func(*TxWatch)

// CheckWithin bounds the check of the node's announcement: the node must
// serve the transaction it announced (or say notfound) within d after
// the getdata asking for it is written, not after the announcement
// came (a getdata waiting to be written spends none of it), or the watch
// ends with a *PeerError wrapping an *UnservedAnnounceError (ErrStalled)
// and its connection is closed. d is cut to Config.Timeout if longer;
// without the option, or with d <= 0, the check is bounded by
// Config.Timeout from just before the getdata is written.
func CheckWithin(d time.Duration) WatchOption {
	return func(w *TxWatch) { w.within = d }
}

// Sighting is a node's announcement of a transaction, checked: asked for
// the transaction it announced, the node served one with that txid (its
// witness is not compared: a txid does not commit to it).
type Sighting struct {
	Peer string         // the node's address
	Txid chainhash.Hash // the transaction
	// After is how long after WatchTx returned the transaction was
	// served.
	After time.Duration
	// At is when the transaction was served: the announcement checked.
	At time.Time
}

// TxWatch is a connection to a node, of its own, that asks the node to
// announce the transactions entering its mempool (the version message's
// relay flag, Config.RelayTx) and waits for one transaction among them.
// A node announces a transaction only once its mempool took it, and
// never to the peer it got it from; it announces it to its other peers,
// this connection among them, whether the transaction came from another
// node or from another connection of this client. The announcement is
// checked by asking for the transaction (a node serves by getdata what
// it announced to the connection: Bitcoin Core serves nothing else from
// its mempool, for two minutes): only a transaction with the watched
// txid makes it a Sighting.
//
// What it proves rests on the node's word: a node that was given the
// transaction can announce and serve it without having accepted it.
//
// The node announces every transaction that enters its mempool: the
// connection keeps none but the watched txid (the announcements waiting
// to be looked at are bounded as for Config.OnAnnounce), and a node
// announcing beyond the inv budget (see the package documentation) ends
// it with ErrFlooding.
type TxWatch struct {
	p      *Peer
	txid   chainhash.Hash
	start  time.Time
	ctx    context.Context
	cancel context.CancelFunc
	within time.Duration // the check's bound (CheckWithin); 0: the timeout

	mu      sync.Mutex
	heardAt time.Time // the first announcement of txid
	askedAt time.Time // the check's getdata written

	announced     chan struct{} // closed at the first announcement of txid
	announcedOnce sync.Once
	done          chan struct{} // closed once the verdict is in
	told          chan struct{} // closed once the node's announcement is checked, before done
	sighting      *Sighting
	err           error
}

// WatchTx connects to cfg.Addr with the relay flag set (cfg.RelayTx,
// cfg.OnAnnounce and cfg.OnAddresses are its own), waits for the node's
// pong to a ping (it then read the handshake's end), and watches for the
// node's announcement of txid; Close ends it. Open it before the
// transaction is given to any node: a node announces a transaction to the
// peers it has when it takes it. opts set how the announcement is
// checked (see CheckWithin).
func WatchTx(ctx context.Context, cfg Config, txid chainhash.Hash, opts ...WatchOption) (*TxWatch, error) {
	w := &TxWatch{txid: txid, announced: make(chan struct{}), done: make(chan struct{}), told: make(chan struct{})}
	for _, o := range opts {
		o(w)
	}
	cfg.RelayTx = true
	cfg.OnAnnounce = w.onAnnounce
	cfg.OnAddresses = nil
	p, err := Dial(ctx, cfg)
	if err != nil {
		return nil, err
	}
	if err := p.heard(ctx); err != nil {
		p.Close()
		return nil, err
	}
	w.p, w.start = p, time.Now()
	w.ctx, w.cancel = context.WithCancel(context.Background())
	go w.run()
	return w, nil
}

// heard returns once the node answered a ping sent after the
// handshake: it read this connection's verack before. A node may take a
// peer in among those it relays to only then (btcd does, and
// asynchronously even then), while the handshake ends for this side when
// the node's verack comes: a transaction given right after could be
// taken before the node knows the watch, and never announced to it.
func (p *Peer) heard(ctx context.Context) error {
	const op = "ping"
	end, err := p.begin(ctx, op)
	if err != nil {
		return err
	}
	defer end()
	deadline := p.deadline()
	nonce, err := p.sendBarrier(ctx, op, deadline)
	if err != nil {
		return err
	}
	_, err = p.recv(ctx, op, deadline, func(m wire.Message) bool { return isPong(m, nonce) })
	return err
}

// onAnnounce keeps the watched txid of a node's announcements and drops
// the rest.
func (w *TxWatch) onAnnounce(a Announcement) {
	for _, h := range a.Txs {
		if h == w.txid {
			w.announcedOnce.Do(func() {
				w.mu.Lock()
				w.heardAt = time.Now()
				w.mu.Unlock()
				close(w.announced)
			})
			return
		}
	}
}

// run waits for the announcement, checks it and records the verdict.
func (w *TxWatch) run() {
	defer close(w.done)
	select {
	case <-w.announced:
	case <-w.p.Done():
		w.err = w.p.disconnected("watch tx")
		return
	case <-w.ctx.Done():
		w.err = w.ctx.Err()
		return
	}
	w.p.logf("peer %s: announced transaction %v after %v", w.p.cfg.Addr, w.txid, time.Since(w.start).Round(time.Millisecond))
	tx, err := w.check()
	var te *TimeoutError
	switch {
	case err != nil && errors.As(err, &te) && !w.AskedAt().IsZero():
		w.err = &PeerError{Peer: w.p.cfg.Addr, Op: "inv tx", Err: &UnservedAnnounceError{Txid: w.txid, Within: te.Within, Err: te}}
	case err != nil:
		w.err = err
	case tx == nil:
		w.err = &PeerError{Peer: w.p.cfg.Addr, Op: "inv tx", Err: &FalseAnnounceError{Txid: w.txid}}
	case tx.TxHash() != w.txid:
		served := tx.TxHash()
		w.err = &PeerError{Peer: w.p.cfg.Addr, Op: "inv tx", Err: &FalseAnnounceError{Txid: w.txid, Served: &served}}
	default:
		now := time.Now()
		w.sighting = &Sighting{Peer: w.p.cfg.Addr, Txid: w.txid, After: now.Sub(w.start), At: now}
	}
	if err == nil {
		close(w.told)
	}
}

// check asks the node for the announced transaction and returns what it
// serves: the first transaction that comes, whatever its txid (the
// caller compares), or nil for a notfound of it. A connection that asks
// for nothing else gets no other transaction from an honest node. The
// answer is due w.within after the getdata is written when that is set
// (see CheckWithin), and when it was written is recorded (AskedAt).
func (w *TxWatch) check() (*wire.MsgTx, error) {
	const op = "getdata tx"
	end, err := w.p.begin(w.ctx, op)
	if err != nil {
		return nil, err
	}
	defer end()
	var within time.Duration
	if w.within > 0 {
		within = min(w.within, w.p.cfg.Timeout)
		if r := w.p.req.Load(); r != nil {
			r.within = within
		}
	}
	return w.p.askTx(w.ctx, op, w.txid, true, within, func(at time.Time) {
		w.mu.Lock()
		w.askedAt = at
		w.mu.Unlock()
	})
}

// HeardAt returns when the node first announced the watched
// transaction; the zero time if it has not.
func (w *TxWatch) HeardAt() time.Time {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.heardAt
}

// AskedAt returns when the getdata checking the node's announcement was
// written: the start of CheckWithin's bound; the zero time if it was
// not yet.
func (w *TxWatch) AskedAt() time.Time {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.askedAt
}

// Heard reports whether the node has announced the watched transaction:
// its check (the transaction fetched) may still be under way, Done
// closing once it is in.
func (w *TxWatch) Heard() bool {
	select {
	case <-w.announced:
		return true
	default:
		return false
	}
}

// Done is closed once the verdict is in: the announcement checked, or the
// watch ended without one.
func (w *TxWatch) Done() <-chan struct{} { return w.done }

// Result returns the verdict once Done is closed: the node's checked
// announcement, or why there is none (a *PeerError wrapping a
// *FalseAnnounceError for an announcement not borne out, one wrapping
// an *UnservedAnnounceError for one whose check got no answer in time
// (see CheckWithin), the
// connection's failure, or context.Canceled after Close). Before, it
// returns nil, nil.
func (w *TxWatch) Result() (*Sighting, error) {
	select {
	case <-w.done:
		return w.sighting, w.err
	default:
		return nil, nil
	}
}

// Close ends the watch and its connection.
func (w *TxWatch) Close() error {
	w.cancel()
	err := w.p.Close()
	<-w.done
	return err
}
