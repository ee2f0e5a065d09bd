package notify

import (
	"bytes"
	"fmt"
	"sync"

	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/spvfilter/spvfilter/peer/client"
)

// newConfReg returns a confirmation registration (see
// Notifier.RegisterConfirmations), its mailbox running.
func newConfReg(txid *chainhash.Hash, pkScript []byte, numConfs, safety uint32, drop func(*confReg), d delivery) *confReg {
	r := &confReg{safety: safety, drop: drop, script: bytes.Clone(pkScript), numConfs: numConfs,
		confirmed: make(chan Confirmation, 1), updates: make(chan uint32, 1), negative: make(chan int32, 1), done: make(chan struct{}, 1)}
	if txid != nil {
		id := *txid
		r.txid = &id
	}
	r.box = newMailbox(r.name(), maxPending, d, r.cancel)
	return r
}

// name says what the registration watches, for its stalls.
func (r *confReg) name() string {
	if r.txid == nil {
		return fmt.Sprintf("confirmation of any transaction paying %x", r.script)
	}
	return fmt.Sprintf("confirmation of %v paying %x", r.txid, r.script)
}

// event returns the registration's channels for its caller.
func (r *confReg) event() *ConfirmationEvent {
	return &ConfirmationEvent{Confirmed: r.confirmed, Updates: r.updates, NegativeConf: r.negative, Done: r.done, Cancel: r.cancel, Err: r.box.err}
}

// confReg is a confirmation registration. Its fields but the channels are
// guarded by the notifier's mu.
type confReg struct {
	safety   uint32         // ReorgSafety
	drop     func(*confReg) // removes it from the notifier
	txid     *chainhash.Hash
	script   []byte
	numConfs uint32
	idx      int // the item's index in the rescan's watch list

	stopHistory func() // ends its history scan

	found *Confirmation // the block the transaction is in, on the chain
	sent  bool          // Confirmed was sent for found

	box       *mailbox
	confirmed chan Confirmation
	updates   chan uint32
	negative  chan int32
	done      chan struct{}
	once      sync.Once
}

// matches reports whether m's transaction is the registration's: txid
// if it has one, and an output paying the script.
func (r *confReg) matches(m client.Match) bool {
	if r.txid != nil && m.Txid != *r.txid {
		return false
	}
	for _, out := range m.Tx.TxOut {
		if bytes.Equal(out.PkScript, r.script) {
			return true
		}
	}
	return false
}

// seen takes a match of a block on the chain; the first block found is
// kept until it leaves the chain, so the same block counts once.
func (r *confReg) seen(m client.Match, onePeer string) {
	if r.found != nil || !r.matches(m) {
		return
	}
	r.found = &Confirmation{BlockHash: m.BlockHash, Height: uint32(m.Height), TxIndex: uint32(m.TxIndex), Tx: m.Tx, OnePeer: onePeer}
	r.sent = false
}

// advance tells what the tip at height tip means: confirmations left,
// the confirmation, or that the block is deep enough to be final; it
// reports whether the registration is over.
func (r *confReg) advance(tip int32) (over bool) {
	if r.found == nil {
		return false
	}
	confs := uint32(tip-int32(r.found.Height)) + 1
	if !r.sent {
		if confs < r.numConfs {
			r.post(offering(r.updates, r.numConfs-confs), false)
			return false
		}
		r.post(offering(r.updates, 0), false)
		r.post(send(r.confirmed, *r.found), false)
		r.sent = true
	}
	if confs <= r.safety {
		return false
	}
	r.post(finishing(r.done, r.cancel), true)
	return true
}

// disconnected takes a block that left the chain, depth blocks into the
// reorganization.
func (r *confReg) disconnected(hash chainhash.Hash, depth int32) {
	if r.found == nil || r.found.BlockHash != hash {
		return
	}
	if r.sent {
		r.post(send(r.negative, depth), false)
	}
	r.found, r.sent = nil, false
}

// post queues a notification; a reader too far behind stalls the
// registration (see mailbox).
func (r *confReg) post(l letter, last bool) { r.box.put(l, last) }

// cancel ends the registration and closes its channels.
func (r *confReg) cancel() {
	r.once.Do(func() {
		r.drop(r)
		r.box.stop()
		close(r.confirmed)
		close(r.updates)
		close(r.negative)
		close(r.done)
	})
}
