package client

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"

	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/spvfilter/spvfilter/gcs"
	"github.com/spvfilter/spvfilter/peer"
	"github.com/spvfilter/spvfilter/peer/pool"
)

// checkStored compares the filter headers start..start+len(headers)-1 the
// peers agree on (of the filter hashes given) with those the store holds,
// and settles the first difference with the peers ms. It reports whether
// peers were banned.
func (c *Client) checkStored(ctx context.Context, log *scanLog, ms []*pool.Member, start int32, headers, hashes []chainhash.Hash) (banned bool, err error) {
	if c.st == nil {
		return false, nil
	}
	end := min(start+int32(len(headers))-1, c.st.FilterHeaderTip())
	if u := c.conflicts.first(0); u >= 0 {
		end = min(end, u-1) // dropped (dropUndecidedStored)
	}
	if end < start {
		return false, nil
	}
	stored, err := c.st.FilterHeaders(start, end)
	if err != nil {
		return false, fmt.Errorf("client: reading the stored filter headers: %w", err)
	}
	for i := range stored {
		if stored[i] != headers[i] {
			return c.settleStored(ctx, log, start+int32(i), hashes[i], ms)
		}
	}
	return false, nil
}

// settleStored settles a difference at height h between the stored filter
// headers, which agree with the peers' below h, and the peers, which agree
// among themselves on the filter hash hash. The block decides first: if it
// proves the peers' filter false (gcs.CheckBasic), they are banned with the
// proof and the store kept. Otherwise the stored filter headers from h on
// are dropped and the peers' taken: the peers can be asked again, the
// store only holds what earlier ones said. When the block does not prove
// the stored filter false either (or the cache no longer holds it to
// check), the difference is a Conflict with the data directory as a side:
// the scan downloads block h and scans it whole, so that it finds what
// the block holds whichever side was right. Being stored buys the store's
// side no trust, nor does being several buy the peers'.
func (c *Client) settleStored(ctx context.Context, log *scanLog, h int32, hash chainhash.Hash, ms []*pool.Member) (banned bool, err error) {
	blockHash := c.chain.Hash(h)
	var witnesses []*pool.Member
	for _, m := range ms {
		if c.reachOf(m, h) >= h {
			witnesses = append(witnesses, m)
		}
	}
	if len(witnesses) == 0 {
		return false, fmt.Errorf("client: %w: no peer serves the filter of block %v (height %d), whose stored filter header differs", ErrNoPeers, blockHash, h)
	}
	block, err := c.disputedBlock(ctx, log, h)
	if err != nil {
		return false, err
	}
	rep := witnesses[rand.IntN(len(witnesses))]
	var data []byte
	// Checked inside fn, where a filter damaged on the way is told from a
	// lie (peer.ErrDamaged).
	err = c.conn(rep).GetCFilters(ctx, h, []chainhash.Hash{blockHash}, func(_ int, d []byte) error {
		if chainhash.DoubleHashH(d) != hash {
			return peerErr(rep, "getcfilters", fmt.Errorf("%w: filter for block %v (height %d) does not hash to the filter header it sent itself",
				peer.ErrBadFilter, blockHash, h))
		}
		data = d
		return nil
	})
	if err != nil {
		return false, &pool.Failure{Member: rep, Err: err}
	}
	check := gcs.CheckBasicBytes(block, data)
	if proof := check.Contradiction; proof != nil {
		for _, m := range witnesses {
			c.pool.Ban(m, peerErr(m, "getcfilters", fmt.Errorf("%w: filter for block %v (height %d): the block proves it false: %v (the filter headers in %s hold another)",
				peer.ErrBadFilter, blockHash, h, proof, c.st.Dir())))
		}
		return true, nil
	}
	stored, ok, err := c.st.Filter(blockHash)
	why := ""
	var storedCheck *gcs.BasicCheck
	switch {
	case err != nil:
		why = fmt.Sprintf("the stored filter cannot be read (%v)", err)
	case ok && c.st.CheckFilter(h, stored) != nil:
		why = "the cached filter does not match them"
	case ok:
		sc := gcs.CheckBasicBytes(block, stored)
		storedCheck = &sc
		if proof := sc.Contradiction; proof != nil {
			why = fmt.Sprintf("the block proves the stored filter false: %v", proof)
		}
	}
	if err := c.st.TruncateFilterHeaders(h - 1); err != nil {
		return false, fmt.Errorf("client: %w", err)
	}
	if why != "" {
		log.note(fmt.Sprintf(
			"the filter headers stored in %s differ from those of %s from height %d (block %v): %s; they were dropped from there and verified again with the peers",
			c.st.Dir(), strings.Join(addrs(witnesses), ", "), h, blockHash, why))
		return false, nil
	}
	c.blocks.put(blockHash, block)
	sides := [][]string{{"the filter headers stored in " + c.st.Dir()}, addrs(witnesses)}
	c.conflicts.addStored(Conflict{Height: h, BlockHash: blockHash,
		Sides: sides, Undecided: undecidedOf(sides, []*gcs.BasicCheck{storedCheck, &check})})
	log.note(fmt.Sprintf(
		"the filter headers stored in %s from height %d (block %v) differ from those of %s, and the block decides neither: the stored ones were dropped from there and verified again with the peers, and the block scanned whole",
		c.st.Dir(), h, blockHash, strings.Join(addrs(witnesses), ", ")))
	return false, nil
}

// dropUndecidedStored drops the stored filter headers from the lowest
// conflict's height on: they rest on a filter the block there could not
// decide. They are verified again, with the peers of every side.
func (c *Client) dropUndecidedStored(log *scanLog) error {
	u := c.conflicts.first(0)
	if u < 0 || c.st.FilterHeaderTip() < u {
		return nil
	}
	if err := c.st.TruncateFilterHeaders(u - 1); err != nil {
		return fmt.Errorf("client: %w", err)
	}
	log.note(fmt.Sprintf(
		"the filter headers stored in %s from height %d on rest on a filter the block there cannot decide (the conflict at that height): dropped, and verified again with the peers",
		c.st.Dir(), u))
	return nil
}
