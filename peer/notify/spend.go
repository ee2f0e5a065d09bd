package notify

import (
	"bytes"
	"fmt"
	"slices"
	"sync"

	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/btcsuite/btcd/wire"
	"github.com/spvfilter/spvfilter/peer/client"
)

// newSpendReg returns a spend registration (see Notifier.RegisterSpend),
// its mailbox running.
func newSpendReg(op *wire.OutPoint, pkScript []byte, safety uint32, drop func(*spendReg), d delivery) *spendReg {
	r := &spendReg{safety: safety, drop: drop, script: bytes.Clone(pkScript),
		spend: make(chan SpendDetail, 1), reorg: make(chan struct{}, 1), done: make(chan struct{}, 1)}
	if op != nil {
		o := *op
		r.op = &o
	}
	r.box = newMailbox(r.name(), maxPending, d, r.cancel)
	return r
}

// name says what the registration watches, for its stalls.
func (r *spendReg) name() string {
	if r.op == nil {
		return fmt.Sprintf("spend of any output paying %x", r.script)
	}
	return fmt.Sprintf("spend of %v paying %x", r.op, r.script)
}

// event returns the registration's channels for its caller.
func (r *spendReg) event() *SpendEvent {
	return &SpendEvent{Spend: r.spend, Reorg: r.reorg, Done: r.done, Cancel: r.cancel, Err: r.box.err}
}

// spendReg is a spend registration. Its fields but the channels are
// guarded by the notifier's mu.
type spendReg struct {
	safety uint32          // ReorgSafety
	drop   func(*spendReg) // removes it from the notifier
	op     *wire.OutPoint
	script []byte
	idx    int // the item's index in the rescan's watch list

	stopHistory func() // ends its history scan

	found *SpendDetail // the spend, in a block on the chain

	box   *mailbox
	spend chan SpendDetail
	reorg chan struct{}
	done  chan struct{}
	once  sync.Once
}

// spent returns the input of m that spends the registration's output,
// and the output, if one does; idx is the item's index in the watch list
// m was found with.
func (r *spendReg) spent(m client.Match, idx int) (int, wire.OutPoint, bool) {
	if r.op != nil {
		for i, in := range m.Tx.TxIn {
			if in.PreviousOutPoint == *r.op {
				return i, *r.op, true
			}
		}
		return 0, wire.OutPoint{}, false
	}
	for _, s := range m.Spends {
		if slices.Contains(s.Items, idx) {
			return s.Input, s.OutPoint, true
		}
	}
	return 0, wire.OutPoint{}, false
}

// seen takes a match of a block on the chain: the first spend found is
// told, and kept until its block leaves the chain.
func (r *spendReg) seen(m client.Match, idx int, onePeer string) {
	if r.found != nil {
		return
	}
	in, op, ok := r.spent(m, idx)
	if !ok {
		return
	}
	r.found = &SpendDetail{OutPoint: op, SpenderTxid: m.Txid, SpendingTx: m.Tx, InputIndex: uint32(in),
		Height: m.Height, BlockHash: m.BlockHash, OnePeer: onePeer}
	r.post(send(r.spend, *r.found), false)
}

// advance ends the registration once the spend is final at tip; it
// reports whether the registration is over.
func (r *spendReg) advance(tip int32) (over bool) {
	if r.found == nil || uint32(tip-r.found.Height)+1 <= r.safety {
		return false
	}
	r.post(finishing(r.done, r.cancel), true)
	return true
}

// disconnected takes a block that left the chain.
func (r *spendReg) disconnected(hash chainhash.Hash) {
	if r.found != nil && r.found.BlockHash == hash {
		r.post(send(r.reorg, struct{}{}), false)
		r.found = nil
	}
}

// post queues a notification; a reader too far behind stalls the
// registration (see mailbox).
func (r *spendReg) post(l letter, last bool) { r.box.put(l, last) }

// cancel ends the registration and closes its channels.
func (r *spendReg) cancel() {
	r.once.Do(func() {
		r.drop(r)
		r.box.stop()
		close(r.spend)
		close(r.reorg)
		close(r.done)
	})
}
