package peer

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/btcsuite/btcd/wire"
)

// offer is a transaction announced to the node, served when it asks.
type offer struct {
	tx        *wire.MsgTx
	requested chan struct{} // closed at the node's first getdata for it
	once      bool
	written   bool // the transaction was written to the node once at least
}

// serveOffers has the writer answer a node's getdata for transactions we
// announced, in the encoding it asked for: with the witness for
// InvTypeWitnessTx, without for InvTypeTx. It marks them requested.
func (p *Peer) serveOffers(m *wire.MsgGetData) {
	p.offerMu.Lock()
	defer p.offerMu.Unlock()
	for _, iv := range m.InvList {
		if iv.Type != wire.InvTypeTx && iv.Type != wire.InvTypeWitnessTx {
			continue
		}
		o, ok := p.offers[iv.Hash]
		if !ok {
			continue
		}
		tx, witness := o.tx, iv.Type == wire.InvTypeWitnessTx
		if !witness && tx.HasWitness() {
			tx = tx.Copy()
			for _, in := range tx.TxIn {
				in.Witness = nil
			}
		}
		if !p.w.serve(served{txid: iv.Hash, witness: witness, tx: tx}) {
			p.logf("peer %s: getdata tx %v: %d transactions waiting to be sent already", p.cfg.Addr, iv.Hash, maxServes)
			continue
		}
		if !o.once {
			o.once = true
			close(o.requested)
		}
	}
}

// Announce offers tx to the node (inv) and waits until the node asks for
// it (getdata), which it answers; it reports whether the node asked within
// the timeout. A node that already has the transaction does not ask: use
// HasTx to tell. The transaction stays on offer, answered whenever the
// node asks again, until the connection ends. Ended by ctx, it keeps the
// connection, whether the inv was written or not: no request awaits an
// answer to it, and the node's getdata is served whenever it comes.
func (p *Peer) Announce(ctx context.Context, tx *wire.MsgTx) (requested bool, err error) {
	requested, _, err = p.announce(ctx, tx, p.cfg.Timeout, nil)
	return requested, err
}

// Reannounce offers tx to the node again (inv) and returns without
// waiting: the connection serves it if the node asks.
func (p *Peer) Reannounce(ctx context.Context, tx *wire.MsgTx) error {
	_, _, err := p.announce(ctx, tx, 0, nil)
	return err
}

// announce is Announce waiting at most wait for the node to ask, and
// no longer than until is open (nil: no such bound); told says whether
// the inv was written (the writer took it), whatever the error.
func (p *Peer) announce(ctx context.Context, tx *wire.MsgTx, wait time.Duration, until <-chan struct{}) (requested, told bool, err error) {
	const op = "inv tx"
	txid := tx.TxHash()
	p.offerMu.Lock()
	if p.offers == nil {
		p.offers = make(map[chainhash.Hash]*offer)
	}
	o, ok := p.offers[txid]
	if !ok {
		o = &offer{tx: tx, requested: make(chan struct{})}
		p.offers[txid] = o
	}
	p.offerMu.Unlock()
	inv := wire.NewMsgInv()
	inv.AddInvVect(wire.NewInvVect(wire.InvTypeTx, &txid))
	deadline := p.deadline()
	if taken, err := p.writeTaken(ctx, op, inv, deadline, abandonKeeps); err != nil {
		return false, taken, err
	}
	timer := time.NewTimer(min(wait, time.Until(deadline)))
	defer timer.Stop()
	// A node may drop an inv that comes right after the handshake: btcd
	// registers a new peer with its sync manager asynchronously and drops
	// an inv from a peer it does not know yet ("Received inv message from
	// unknown peer"). The inv is sent again, at growing intervals, while
	// the node has not asked; a node that has the transaction, or rejected
	// it, does not ask again, so the repeats cost it nothing.
	again := firstReannounce
	repeat := time.NewTimer(again)
	defer repeat.Stop()
	for {
		select {
		case <-o.requested:
			return true, true, nil
		case <-timer.C:
			return false, true, nil
		case <-until:
			return false, true, nil
		case <-repeat.C:
			if err := p.write(ctx, op, inv, deadline); err != nil {
				return false, true, err
			}
			again *= 2
			repeat.Reset(again)
		case <-p.done:
			return false, true, p.disconnected(op)
		case <-ctx.Done():
			return false, true, ctx.Err()
		}
	}
}

// firstReannounce is how long announce waits for the node to ask before
// it sends the inv again; each later wait is twice the one before.
const firstReannounce = 250 * time.Millisecond

// HasTx asks the node for the transaction txid (getdata): a node answers
// with it while it is in its mempool, and with notfound otherwise (btcd
// serves no confirmed transaction this way).
func (p *Peer) HasTx(ctx context.Context, txid chainhash.Hash) (bool, error) {
	tx, err := p.getTx(ctx, txid, false)
	return tx != nil, err
}

// HasTxWithin is HasTx with the node's answer waited for within at
// most (Config.Timeout if shorter), counted from when the getdata is written, not from the call: a
// request waiting for the connection (another request in flight, a block
// coming slowly) spends none of it. While it waits for the connection,
// and until the writer takes the getdata, ctx ends it with ctx's error and
// the connection stays: nothing was asked. Once the writer took it, ctx
// no longer counts: the getdata is written (a write that does not end by
// the timeout, to a node that stopped reading, fails with a
// *TimeoutError and drops the connection), and the answer is waited for
// until within passes (and, ctx ended, no later than the timeout after
// the getdata was queued, as its write: a node reading it slowly does
// not make a caller that gave up wait twice the timeout), so that a
// node answering is not dropped mid-answer; one that has not answered
// by then is cut short with a *TimeoutError whose Within is within, and
// the connection is dropped, as after any request abandoned.
func (p *Peer) HasTxWithin(ctx context.Context, txid chainhash.Hash, within time.Duration) (bool, error) {
	const op = "getdata tx"
	end, err := p.beginRequest(ctx, op, true)
	if err != nil {
		return false, err
	}
	defer end()
	within = min(within, p.cfg.Timeout)
	if r := p.req.Load(); r != nil {
		r.within = within
	}
	tx, err := p.askTx(ctx, op, txid, false, within, nil)
	return tx != nil, err
}

// getTx asks the node for the transaction txid (getdata, with its
// witness) and returns the transaction it serves, or nil for a notfound
// of txid. It takes the first transaction that comes if anyTx, whatever
// its txid (the caller compares), else only one whose txid is txid.
func (p *Peer) getTx(ctx context.Context, txid chainhash.Hash, anyTx bool) (*wire.MsgTx, error) {
	const op = "getdata tx"
	end, err := p.begin(ctx, op)
	if err != nil {
		return nil, err
	}
	defer end()
	return p.askTx(ctx, op, txid, anyTx, 0, nil)
}

// askTx is getTx's request, begun by the caller. With within > 0 the
// answer is due within after the getdata is written, and ctx no longer
// ends the request once the writer took the getdata: neither the write
// nor the wait for the answer (see HasTxWithin). written, if not nil, is told
// when the getdata was written.
func (p *Peer) askTx(ctx context.Context, op string, txid chainhash.Hash, anyTx bool, within time.Duration, written func(time.Time)) (*wire.MsgTx, error) {
	req := wire.NewMsgGetData()
	req.AddInvVect(wire.NewInvVect(wire.InvTypeWitnessTx, &txid))
	deadline := p.deadline()
	// With within, a getdata the writer took is out: ctx no longer ends
	// the request (the write, then the answer, are waited for).
	how := abandonFirst
	if within > 0 {
		how = abandonHeld
	}
	if err := p.sendAs(ctx, op, req, deadline, how); err != nil {
		return nil, err
	}
	if written != nil {
		written(time.Now())
	}
	if within > 0 {
		// A caller that gave up while the getdata was written waits no
		// longer than the write's deadline (the timeout) for the answer
		// either: a node reading slowly does not stretch it to twice.
		answerBy := time.Now().Add(within)
		if ctx.Err() != nil && answerBy.After(deadline) {
			answerBy = deadline
		}
		ctx, deadline = context.WithoutCancel(ctx), answerBy
	}
	m, err := p.recv(ctx, op, deadline, func(m wire.Message) bool {
		switch m := m.(type) {
		case *wire.MsgTx:
			return anyTx || m.TxHash() == txid
		case *wire.MsgNotFound:
			for _, iv := range m.InvList {
				if iv.Hash == txid {
					return true
				}
			}
		}
		return false
	})
	if err != nil {
		return nil, err
	}
	tx, _ := m.(*wire.MsgTx)
	return tx, nil
}

// Broadcast announces tx and returns once the node holds it in its
// mempool, as getdata tx shows: the node accepted it (or had it already).
// A node that rejects it with a reject message is reported at once, with
// a *RejectError (which wraps ErrRejected) in the *PeerError. A node that
// asked for it but does not hold it within the timeout rejected it
// without a word (a *DroppedError, which wraps ErrRejected): btcd does so with a transaction spending
// outputs it does not know or that are spent in its chain, which it keeps
// as an orphan. One that neither asked nor holds it is reported with
// ErrStalled. A node that is not btcd and neither shows nor announced
// the transaction within the timeout is reported with a
// *NoVerdictError (ErrNoVerdict), whether it asked or not: such a node
// may hold it without saying so.
//
// btcd reads nothing more from a peer while it processes a transaction
// the peer sent (its handler waits for the mempool's verdict), so its
// answer to a getdata sent after the transaction was written is that
// verdict: a node announcing btcd's user agent that answers so without
// the transaction rejected it without a word, reported at once rather
// than after the timeout. Other nodes may not serve by getdata a
// transaction they hold (Bitcoin Core serves one only once it announced
// it, and never announces it to the peer it got it from), so they are
// asked until the timeout: BroadcastWatched learns a Core node's
// acceptance from its announcement instead. Ended by ctx while the node
// is asked whether it holds the transaction, it returns once the node
// answered (within the timeout), its connection kept.
func (p *Peer) Broadcast(ctx context.Context, tx *wire.MsgTx) error {
	_, err := p.BroadcastWatched(ctx, tx, nil)
	return err
}

// ErrWatchMismatch: BroadcastWatched was given the watch of another
// transaction, or of another node; nothing was sent.
var ErrWatchMismatch = errors.New("peer: watch does not match the broadcast")

// BroadcastWatched is Broadcast that also counts w's checked
// announcement of tx as the node's acceptance: w is a TxWatch of tx on
// another connection to the same node (opened before the call), to
// which the node relays the transaction once its mempool took it. It
// returns w's Sighting when the announcement came first, nil when the
// node's mempool showed the transaction (or w is nil). A false
// announcement (see FalseAnnounceError) ends it at once with w's error:
// the node announced the transaction it was given and did not serve it,
// so nothing it says of it is believed. A check that went unanswered
// (an *UnservedAnnounceError, see CheckWithin) tells nothing: from a
// node that is not btcd, whose announcement is the one word it gives
// (its mempool serves the transaction by getdata only to a peer it
// announced it to), it ends the call at once with a *NoVerdictError
// whose Unserved is w's; a btcd node's mempool is asked as without w.
// Acceptance so learnt rests on the node's word, as Broadcast's does.
func (p *Peer) BroadcastWatched(ctx context.Context, tx *wire.MsgTx, w *TxWatch) (*Sighting, error) {
	s, _, err := p.broadcast(ctx, tx, w, nil)
	return s, err
}

// BroadcastUntil is BroadcastWatched that stops waiting for the verdict
// of a node that is not btcd once enough is closed (the caller learnt
// what it needed elsewhere: another node proved the transaction
// propagated), returning a *NoVerdictError with Enough set. It still
// gives the node up to a second to ask for the transaction after it
// announced it (as BroadcastWatched does), so that a false announcement
// w hears meanwhile is returned as BroadcastWatched returns it; the node
// is served the transaction whenever it asks, until the connection
// ends. A btcd node's verdict, which comes
// at once, is awaited whatever enough says.
//
// told reports whether the transaction was announced to the node (its
// inv written, or its write begun on a connection that then failed),
// whatever the error: it is false when the call ended before (ctx, a
// failed request, a lost connection), and when the node held the
// transaction already, asked before anything was announced.
func (p *Peer) BroadcastUntil(ctx context.Context, tx *wire.MsgTx, w *TxWatch, enough <-chan struct{}) (s *Sighting, told bool, err error) {
	return p.broadcast(ctx, tx, w, enough)
}

// broadcast is BroadcastUntil; a nil enough is never closed.
func (p *Peer) broadcast(ctx context.Context, tx *wire.MsgTx, w *TxWatch, enough <-chan struct{}) (_ *Sighting, told bool, _ error) {
	txid := tx.TxHash()
	var watched <-chan struct{} // nil without a watch
	if w != nil {
		if w.p.cfg.Addr != p.cfg.Addr || w.txid != txid {
			return nil, false, fmt.Errorf("%w: the watch of %v at %s given to the broadcast of %v to %s", ErrWatchMismatch, w.txid, w.p.cfg.Addr, txid, p.cfg.Addr)
		}
		watched = w.Done()
	}
	rejects, stopRejects := p.waitReject(txid)
	defer stopRejects()
	if has, err := p.HasTxWithin(ctx, txid, p.cfg.Timeout); err != nil || has {
		return nil, false, err
	}
	// A node that got the transaction from elsewhere meanwhile does not
	// ask: wait a little, then look in its mempool until the timeout.
	deadline := p.deadline()
	var checked <-chan struct{} // closed once w checked the node's announcement
	if w != nil {
		checked = w.told
	}
	if p.GivesVerdict() {
		enough = nil
	}
	// The node is given its second to ask (and a false announcement
	// told meanwhile is caught) even once enough is closed.
	requested, told, err := p.announce(ctx, tx, time.Second, checked)
	if err != nil {
		return nil, told, err
	}
	given := time.Now()
	for {
		if s, err := verdict(w); s != nil || err != nil {
			return s, true, err
		}
		if u := unserved(w); u != nil && !p.GivesVerdict() {
			// Its announcement, the one word it gives, went unserved:
			// nothing else it could say within the timeout would tell.
			return nil, true, p.noVerdict(txid, requested, given, false, u)
		}
		written := p.txWritten(txid)
		// Once asked, the answer is waited for, within the timeout, even
		// if ctx ends meanwhile: a caller giving up costs no connection
		// to a node that answers (see HasTxWithin).
		has, err := p.HasTxWithin(ctx, txid, p.cfg.Timeout)
		if err != nil || has {
			return nil, true, err
		}
		if written && p.GivesVerdict() {
			// Its verdict; a reject message for it came before the answer.
			select {
			case e := <-rejects:
				if e.Kind != RejectAlreadyInMempool {
					return nil, true, &PeerError{Peer: p.cfg.Addr, Op: "tx", Err: e}
				}
			default:
			}
			return nil, true, &PeerError{Peer: p.cfg.Addr, Op: "tx", Err: &DroppedError{Txid: txid, Processed: true}}
		}
		if time.Now().After(deadline) {
			break
		}
		select {
		case e := <-rejects:
			// A node that has it already says so: its mempool tells.
			if e.Kind != RejectAlreadyInMempool {
				return nil, true, &PeerError{Peer: p.cfg.Addr, Op: "tx", Err: e}
			}
		case <-watched:
			watched = nil // the verdict is in: sighted looks at it
		case <-enough:
			if s, err := verdict(w); s != nil || err != nil {
				return s, true, err
			}
			return nil, true, p.noVerdict(txid, requested, given, true, unserved(w))
		case <-time.After(50 * time.Millisecond):
		case <-ctx.Done():
			return nil, true, ctx.Err()
		}
	}
	if s, err := verdict(w); s != nil || err != nil {
		return s, true, err
	}
	if !p.GivesVerdict() {
		return nil, true, p.noVerdict(txid, requested, given, false, unserved(w))
	}
	if p.wasRequested(txid) || requested {
		return nil, true, &PeerError{Peer: p.cfg.Addr, Op: "tx", Err: &DroppedError{Txid: txid, Waited: p.cfg.Timeout}}
	}
	return nil, true, p.errorf("inv tx", "%w: transaction %v neither requested within %v nor in the node's mempool", ErrStalled, txid, p.cfg.Timeout)
}

// noVerdict is the error of a broadcast of txid to a node that gives no
// verdict of its own (see NoVerdictError), given the transaction at
// given: requested says whether it asked for it while it was announced
// (a later request counts too); enough, whether the caller ended the
// wait before the timeout; u, the watch's unserved check of the node's
// announcement, if there was one.
func (p *Peer) noVerdict(txid chainhash.Hash, requested bool, given time.Time, enough bool, u *UnservedAnnounceError) error {
	return &PeerError{Peer: p.cfg.Addr, Op: "tx", Err: &NoVerdictError{Txid: txid,
		Requested: requested || p.wasRequested(txid), Waited: time.Since(given), Enough: enough, Unserved: u}}
}

// unserved returns w's unserved check of the node's announcement (see
// CheckWithin), or nil: w is nil, its verdict is not in, or it is
// another.
func unserved(w *TxWatch) *UnservedAnnounceError {
	if w == nil {
		return nil
	}
	var u *UnservedAnnounceError
	if _, err := w.Result(); errors.As(err, &u) {
		return u
	}
	return nil
}

// verdict returns what w (which may be nil) tells of the node's
// acceptance: its sighting, or its false announcement of the
// transaction (the node announced it and did not serve it: it lied, or
// dropped it). Nothing else ends a broadcast: a watch that failed
// otherwise leaves the node's mempool to tell.
func verdict(w *TxWatch) (*Sighting, error) {
	if w == nil {
		return nil, nil
	}
	s, err := w.Result()
	if !errors.Is(err, ErrFalseAnnouncement) {
		err = nil
	}
	return s, err
}

// txWritten reports whether the offered txid was written to the node.
func (p *Peer) txWritten(txid chainhash.Hash) bool {
	p.offerMu.Lock()
	defer p.offerMu.Unlock()
	o, ok := p.offers[txid]
	return ok && o.written
}

// wrote records that the writer wrote the offered txid.
func (p *Peer) wrote(txid chainhash.Hash) {
	p.offerMu.Lock()
	defer p.offerMu.Unlock()
	if o, ok := p.offers[txid]; ok {
		o.written = true
	}
}

// GivesVerdict reports whether the node gives a verdict of its own, at
// once, on a transaction it is given: a reject, or a drop known from its
// answer to a later request. Only btcd is known to, and it is recognized
// by its user agent ("/btcwire:0.5.0/btcd:0.24.2/"); any other node, as
// Bitcoin Core, may take or refuse one without a word (see
// NoVerdictError).
func (p *Peer) GivesVerdict() bool { return strings.Contains(p.remote.UserAgent, "/btcd:") }

// wasRequested reports whether the node has asked for the offered txid.
func (p *Peer) wasRequested(txid chainhash.Hash) bool {
	p.offerMu.Lock()
	defer p.offerMu.Unlock()
	o, ok := p.offers[txid]
	return ok && o.once
}
