package btcwallet

import (
	"errors"
	"slices"
	"sync"

	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/btcsuite/btcd/wire"
	"github.com/spvfilter/spvfilter/peer"
)

// maxUnmined bounds the transactions the backend sends again; beyond it,
// the oldest is no longer sent (the wallet's own rebroadcast still
// covers it when it restarts).
const maxUnmined = 1000

// unmined is the wallet's transactions sent and not yet seen in a block:
// at each new block they are sent again (Client.SendTransaction), so
// that a peer that lost or never had one gets it, until a block holds it
// or another spend of one of its inputs (it can never be mined then: a
// node keeps it as an orphan, without a reject), or a peer refuses it for
// a reason other than having it already and no other peer accepted or
// holds it. It is safe for concurrent use.
type unmined struct {
	mu    sync.Mutex
	txs   map[chainhash.Hash]*wire.MsgTx
	order []chainhash.Hash                 // oldest first
	spent map[wire.OutPoint]chainhash.Hash // the outputs they spend
	block chan struct{}                    // a new block: send them again
}

func newUnmined() *unmined {
	return &unmined{txs: map[chainhash.Hash]*wire.MsgTx{}, spent: map[wire.OutPoint]chainhash.Hash{},
		block: make(chan struct{}, 1)}
}

// keep adds tx, dropping the oldest beyond maxUnmined; it returns the
// transaction dropped, if one was.
func (u *unmined) keep(tx *wire.MsgTx) (chainhash.Hash, bool) {
	u.mu.Lock()
	defer u.mu.Unlock()
	id := tx.TxHash()
	if _, ok := u.txs[id]; ok {
		return chainhash.Hash{}, false
	}
	u.txs[id] = tx
	u.order = append(u.order, id)
	for _, in := range tx.TxIn {
		u.spent[in.PreviousOutPoint] = id
	}
	if len(u.order) <= maxUnmined {
		return chainhash.Hash{}, false
	}
	old := u.order[0]
	u.drop(old)
	return old, true
}

// drop forgets the kept txid. Called with mu held.
func (u *unmined) drop(txid chainhash.Hash) {
	tx := u.txs[txid]
	delete(u.txs, txid)
	u.order = slices.DeleteFunc(u.order, func(h chainhash.Hash) bool { return h == txid })
	for _, in := range tx.TxIn {
		if u.spent[in.PreviousOutPoint] == txid {
			delete(u.spent, in.PreviousOutPoint)
		}
	}
}

// forget drops txid (mined, or refused); it reports whether it was kept.
// A nil set keeps nothing (a backend not made by New).
func (u *unmined) forget(txid chainhash.Hash) bool {
	if u == nil {
		return false
	}
	u.mu.Lock()
	defer u.mu.Unlock()
	if _, ok := u.txs[txid]; !ok {
		return false
	}
	u.drop(txid)
	return true
}

// forgetConflicts drops the kept transactions other than tx that spend an
// output tx spends (tx is in a block: they can never be mined) and
// returns their ids. A nil set keeps nothing.
func (u *unmined) forgetConflicts(tx *wire.MsgTx) []chainhash.Hash {
	if u == nil {
		return nil
	}
	u.mu.Lock()
	defer u.mu.Unlock()
	id := tx.TxHash()
	var gone []chainhash.Hash
	for _, in := range tx.TxIn {
		other, ok := u.spent[in.PreviousOutPoint]
		if !ok || other == id {
			continue
		}
		u.drop(other)
		gone = append(gone, other)
	}
	return gone
}

// list returns the transactions kept, oldest first.
func (u *unmined) list() []*wire.MsgTx {
	u.mu.Lock()
	defer u.mu.Unlock()
	out := make([]*wire.MsgTx, 0, len(u.order))
	for _, id := range u.order {
		out = append(out, u.txs[id])
	}
	return out
}

// newBlock signals a new block without waiting.
func (u *unmined) newBlock() {
	if u == nil {
		return
	}
	select {
	case u.block <- struct{}{}:
	default:
	}
}

// mined drops from the rebroadcast tx, found in the block at height, and
// the transactions that spend an output it spends.
func (b *Backend) mined(tx *wire.MsgTx, txid chainhash.Hash, height int32) {
	b.unmined.forget(txid)
	for _, other := range b.unmined.forgetConflicts(tx) {
		b.logf("transaction %v is no longer sent again: transaction %v of block %d spends an output it spends", other, txid, height)
	}
}

// rebroadcast sends the unmined transactions again at each new block,
// until the backend stops.
func (b *Backend) rebroadcast() {
	defer b.wg.Done()
	for {
		select {
		case <-b.ctx.Done():
			return
		case <-b.unmined.block:
		}
		for _, tx := range b.unmined.list() {
			if b.ctx.Err() != nil {
				return
			}
			b.sendAgain(tx)
		}
	}
}

// sendAgain sends tx again; a transaction found in a block is dropped,
// and so is one refused by a peer for a reason other than holding it
// already, unless another peer accepted or holds it: one peer's reject
// may be forged, so it alone never stops the rebroadcast (it is logged).
func (b *Backend) sendAgain(tx *wire.MsgTx) {
	ctx, cancel := b.callContext()
	defer cancel()
	txid := tx.TxHash()
	res, err := b.c.SendTransaction(ctx, tx)
	if res != nil && res.Mined != nil {
		b.unmined.forget(txid)
		return
	}
	if res != nil {
		held := len(res.Accepted) > 0 || len(res.Seen) > 0
		for addr, ferr := range res.Failed {
			var rej *peer.RejectError
			if !errors.As(ferr, &rej) || rej.Kind.Held() {
				continue
			}
			if held {
				b.logf("transaction %v is sent again: %s refused it (%v), but another peer holds it", txid, addr, rej)
				continue
			}
			b.unmined.forget(txid)
			b.logf("transaction %v is no longer sent again: %s refused it: %v", txid, addr, rej)
			return
		}
	}
	if err != nil && b.ctx.Err() == nil {
		b.logf("sending %v again at a new block: %v", txid, err)
	}
}
