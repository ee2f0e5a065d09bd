package client

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/btcsuite/btcd/wire"
)

// SendUntilMined sends tx (SendTransaction) and then follows the chain,
// announcing it again every interval (one minute when zero), until it is
// seen in a block or ctx ends; a transaction the send finds mined
// already (SendResult.Mined) is returned at once. It finds the block
// with compact filters: the filter of the block that mines tx holds tx's
// output scripts, so tx needs one output that is not OP_RETURN. A block
// only one of several peers' chains reaches (its EventConnected names
// that peer) is not taken: a peer can mine tx in a block it shows nobody
// else. It is taken once another peer holds it (EventRechecked), and a
// ctx that ends first gives an error naming the block and the peer; a
// client of one peer takes that peer's blocks, as its scans do.
func (c *Client) SendUntilMined(ctx context.Context, tx *wire.MsgTx, interval time.Duration) (*Confirmation, error) {
	if interval <= 0 {
		interval = time.Minute
	}
	watch := findable(tx)
	if len(watch) == 0 {
		return nil, errors.New("client: a transaction with only OP_RETURN outputs cannot be found in compact filters")
	}
	// The blocks from the tip the send began at are followed: one that
	// mines tx while the send lasts is found too.
	from := c.Chain().Height() + 1
	res, err := c.SendTransaction(ctx, tx)
	if err != nil {
		return nil, err
	}
	if res.Mined != nil {
		return res.Mined, nil // in the chain already: no block to wait for
	}
	txid := tx.TxHash()
	rctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var conf *Confirmation
	// lone names the peer conf's block rests on while other peers serve
	// filters: one peer's chain alone reached it, so it is not taken
	// until another holds it too (EventRechecked) or it leaves the chain.
	lone := ""
	r := c.NewRescan(RescanOptions{Watch: watch, From: from, Follow: true, OnEvent: func(e Event) {
		switch {
		case e.Kind == EventMatch && e.Match.Txid == txid:
			conf, lone = &Confirmation{Height: e.Height, BlockHash: e.BlockHash}, ""
		case e.Kind == EventDisconnected && conf != nil && conf.BlockHash == e.BlockHash:
			conf, lone = nil, "" // mined in a block that left the chain: wait again
		case (e.Kind == EventConnected || e.Kind == EventRechecked) && conf != nil && conf.BlockHash == e.BlockHash:
			was := lone
			lone = ""
			if e.OnePeer != "" && len(c.pool.Serving(wire.SFNodeCF)) > 1 {
				lone = e.OnePeer
			}
			if was != "" && lone == "" {
				cancel() // another peer holds it now
			}
		case e.Kind == EventTip && conf != nil && lone == "":
			cancel()
		}
	}})
	done := make(chan error, 1)
	go func() { done <- r.Run(rctx) }()
	tick := time.NewTicker(interval)
	defer tick.Stop()
	for {
		select {
		case err := <-done:
			if conf != nil && lone == "" {
				return conf, nil
			}
			if err == nil {
				err = ctx.Err()
			}
			if conf != nil {
				return nil, fmt.Errorf("client: waiting for %v to be mined: block %v at %d holds it, but only %s holds that block: %w", txid, conf.BlockHash, conf.Height, lone, err)
			}
			return nil, fmt.Errorf("client: waiting for %v to be mined: %w", txid, err)
		case <-tick.C:
			c.Announce(rctx, tx)
		}
	}
}

// Announce offers tx to every live peer again (inv), without waiting for
// answers: a peer that asks is served by its connection. A wallet calls it
// for its unmined transactions (at each new block, say); SendTransaction
// is for the first time. A peer whose node ended its connection itself
// is left out unless its next dial is due soon (see pool.Pool.RedialDue).
func (c *Client) Announce(ctx context.Context, tx *wire.MsgTx) {
	for _, m := range c.pool.Serving(0) {
		if err := c.pool.RedialDue(ctx, m); err != nil {
			c.logf("redialing %s: %v", m.Addr(), err)
			continue
		}
		if err := c.pool.Conn(m).Reannounce(ctx, tx); err != nil {
			c.logf("announcing %v again to %s: %v", tx.TxHash(), m.Addr(), err)
		}
	}
}
