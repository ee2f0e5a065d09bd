package notify

import (
	"context"
	"errors"

	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/btcsuite/btcd/wire"
	"github.com/spvfilter/spvfilter/peer/client"
)

// RegisterConfirmations tells when the transaction txid (nil or the zero
// hash: any transaction), paying pkScript, has numConfs confirmations,
// searching from heightHint: what was mined from there before the call is
// found by a scan of those blocks, run apart (the call returns at once).
// numConfs must be in 1..ReorgSafety.
func (n *Notifier) RegisterConfirmations(txid *chainhash.Hash, pkScript []byte, numConfs, heightHint uint32) (*ConfirmationEvent, error) {
	if numConfs < 1 || numConfs > n.opt.ReorgSafety {
		return nil, ErrNumConfs
	}
	if len(pkScript) == 0 {
		return nil, ErrNoScript
	}
	if txid != nil && *txid == (chainhash.Hash{}) {
		txid = nil // lnd asks for a script alone with the zero hash
	}
	r := newConfReg(txid, pkScript, numConfs, n.opt.ReorgSafety, n.dropConf, n.delivery())
	err := n.watch(r.name(), client.ScriptItem(pkScript), heightHint, func(idx int, stop context.CancelFunc) {
		n.confs[r], r.idx, r.stopHistory = true, idx, stop
	}, func(m client.Match, onePeer string, tip int32) {
		if n.confs[r] {
			r.seen(m, onePeer)
			if r.advance(tip) {
				delete(n.confs, r)
			}
		}
	})
	if err != nil {
		r.cancel()
		return nil, err
	}
	return r.event(), nil
}

// RegisterSpend tells when outpoint (nil or the zero outpoint: any output
// paying pkScript) is spent in a block, searching from heightHint: a
// spend mined from there before the call is found by a scan of those
// blocks, run apart (the call returns at once). pkScript is the script of
// the output: compact filters find the spending block by it. A spend of
// a script alone is found when the input shows the script it spends (see
// client.Match.Spends).
func (n *Notifier) RegisterSpend(outpoint *wire.OutPoint, pkScript []byte, heightHint uint32) (*SpendEvent, error) {
	if len(pkScript) == 0 {
		return nil, ErrNoScript
	}
	if outpoint != nil && *outpoint == (wire.OutPoint{}) {
		outpoint = nil // lnd asks for a script alone with the zero outpoint
	}
	item := client.ScriptItem(pkScript)
	if outpoint != nil {
		item = client.OutPointItem(*outpoint, pkScript)
	}
	r := newSpendReg(outpoint, pkScript, n.opt.ReorgSafety, n.dropSpend, n.delivery())
	err := n.watch(r.name(), item, heightHint, func(idx int, stop context.CancelFunc) {
		n.spends[r], r.idx, r.stopHistory = true, idx, stop
	}, func(m client.Match, onePeer string, tip int32) {
		if n.spends[r] {
			r.seen(m, 0, onePeer) // the history's watch list is the item alone
			if r.advance(tip) {
				delete(n.spends, r)
			}
		}
	})
	if err != nil {
		r.cancel()
		return nil, err
	}
	return r.event(), nil
}

// RegisterBlockEpochs tells of every block connected to the chain after
// best: the blocks since best first (from the fork, if best left the
// chain: for a block the client never had, the fork is its parent, named
// by its header, if the chain holds it, or else the tip, with a log
// line), then each new one. A nil best starts with the tip. It is built
// on client.SubscribeBlocks: a reader that lags only delays its own
// epochs. A reorganization deeper than the subscription remembers (the
// first block told leaving the chain with its parent) does not end it:
// the epochs go on from the fork, the blocks of the new chain told from
// there (see epochReg.run).
func (n *Notifier) RegisterBlockEpochs(best *BlockEpoch) (*BlockEpochEvent, error) {
	n.mu.Lock()
	ctx, running := n.ctx, n.running
	n.mu.Unlock()
	if !running {
		return nil, ErrStopped
	}
	if best == nil {
		if h := n.c.Chain().Height(); h > 0 {
			best = &BlockEpoch{Height: h - 1, Hash: n.c.Chain().Hash(h - 1)}
		}
	}
	ctx, stop := context.WithCancel(ctx)
	sub, err := n.subscribeEpochs(ctx, best)
	if err != nil {
		stop()
		return nil, err
	}
	r := &epochReg{drop: n.dropEpoch, logf: n.logf, resubscribe: n.subscribeEpochs, ctx: ctx, stop: stop, sub: sub,
		epochs: make(chan BlockEpoch), ended: make(chan struct{})}
	n.mu.Lock()
	n.epochs[r] = true
	n.mu.Unlock()
	go r.run()
	return &BlockEpochEvent{Epochs: r.epochs, Cancel: r.cancel}, nil
}

// subscribeEpochs subscribes to the blocks after best (nil: from the
// tip), or after its fork if it left the chain (see forkOf).
func (n *Notifier) subscribeEpochs(ctx context.Context, best *BlockEpoch) (*client.BlockSubscription, error) {
	var from *client.Stamp
	if best != nil {
		from = &client.Stamp{Height: best.Height, Hash: best.Hash, Header: best.Header}
	}
	sub, err := n.c.SubscribeBlocks(ctx, from)
	if best != nil && errors.Is(err, client.ErrUnknownBlock) {
		// best left the chain before the client knew it (the caller's
		// best block of an earlier run): start after the fork.
		sub, err = n.c.SubscribeBlocks(ctx, n.forkOf(best))
	}
	return sub, err
}

// forkOf returns the block to tell epochs after for best, a block the
// client's chain never held: its parent, if the chain holds it, or else
// the tip's parent (with a log line: the blocks from the fork to the tip
// are not told).
func (n *Notifier) forkOf(best *BlockEpoch) *client.Stamp {
	chain := n.c.Chain()
	if h := best.Height - 1; h >= 0 && h <= chain.Height() && chain.Hash(h) == best.Header.PrevBlock {
		return &client.Stamp{Height: h, Hash: best.Header.PrevBlock, Header: chain.Header(h)}
	}
	tip := chain.Height()
	n.logf("notify: block epochs: the best block %v (height %d) left the chain before the client knew it, and its parent is not on the chain: they start from the tip %d, the blocks between the fork and the tip are not told",
		best.Hash, best.Height, tip)
	if tip == 0 {
		return nil
	}
	return &client.Stamp{Height: tip - 1, Hash: chain.Hash(tip - 1), Header: chain.Header(tip - 1)}
}
