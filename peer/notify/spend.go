package notify

import (
	"bytes"
	"slices"
	"sync"

	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/btcsuite/btcd/wire"
	"github.com/spvfilter/spvfilter/peer/client"
)

// RegisterSpend tells when outpoint (nil: any output paying pkScript) is
// spent in a block, searching from heightHint: a spend mined from there
// before the call is found by a scan of those blocks. pkScript is the
// script of the output: compact filters find the spending block by it.
// A spend of a script alone is found when the input shows the script it
// spends (see client.Match.Spends).
func (n *Notifier) RegisterSpend(outpoint *wire.OutPoint, pkScript []byte, heightHint uint32) (*SpendEvent, error) {
	if len(pkScript) == 0 {
		return nil, ErrNoScript
	}
	n.regMu.Lock()
	defer n.regMu.Unlock()
	r := &spendReg{n: n, script: bytes.Clone(pkScript), box: newMailbox(maxPending),
		spend: make(chan SpendDetail, 1), reorg: make(chan struct{}, 1), done: make(chan struct{}, 1)}
	item := client.ScriptItem(pkScript)
	if outpoint != nil {
		op := *outpoint
		r.op = &op
		item = client.OutPointItem(op, pkScript)
	}
	n.mu.Lock()
	if !n.running {
		n.mu.Unlock()
		r.cancel()
		return nil, ErrStopped
	}
	r.idx = n.items
	n.spends[r] = true
	n.mu.Unlock()
	err := n.watch(item, heightHint, func(m client.Match, tip int32) {
		if n.spends[r] {
			r.seen(m, 0, "") // the history's watch list is the item alone
			r.advance(tip)
		}
	})
	if err != nil {
		r.cancel()
		return nil, err
	}
	return &SpendEvent{Spend: r.spend, Reorg: r.reorg, Done: r.done, Cancel: r.cancel}, nil
}

// spendReg is a spend registration. Its fields but the channels are
// guarded by the notifier's mu.
type spendReg struct {
	n      *Notifier
	op     *wire.OutPoint
	script []byte
	idx    int // the item's index in the rescan's watch list

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

// advance ends the registration once the spend is final at tip.
func (r *spendReg) advance(tip int32) {
	if r.found != nil && uint32(tip-r.found.Height)+1 > r.n.opt.ReorgSafety {
		r.post(finishing(r.done, r.cancel), true)
		delete(r.n.spends, r)
	}
}

// disconnected takes a block that left the chain.
func (r *spendReg) disconnected(hash chainhash.Hash) {
	if r.found != nil && r.found.BlockHash == hash {
		r.post(send(r.reorg, struct{}{}), false)
		r.found = nil
	}
}

// post queues a notification; a reader too far behind has its
// registration cancelled.
func (r *spendReg) post(l letter, last bool) {
	if !r.box.put(l, last) {
		r.n.logf("notify: a spend registration's reader is %d notifications behind: cancelled", maxPending)
		delete(r.n.spends, r)
		go r.cancel()
	}
}

// cancel ends the registration and closes its channels.
func (r *spendReg) cancel() {
	r.once.Do(func() {
		r.n.mu.Lock()
		delete(r.n.spends, r)
		r.n.mu.Unlock()
		r.box.stop()
		close(r.spend)
		close(r.reorg)
		close(r.done)
	})
}
