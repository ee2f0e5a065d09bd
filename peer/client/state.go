package client

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/spvfilter/spvfilter/gcs"
	"github.com/spvfilter/spvfilter/peer"
	"github.com/spvfilter/spvfilter/peer/store"
)

// openStore opens the chain state in cfg.DataDir and resumes the chain
// from it; without a DataDir the client keeps nothing.
func (c *Client) openStore() error {
	if c.cfg.DataDir == "" {
		return nil
	}
	opts := store.DefaultOptions()
	switch {
	case c.cfg.FilterCacheBytes > 0:
		opts.FilterCacheBytes = c.cfg.FilterCacheBytes
	case c.cfg.FilterCacheBytes < 0:
		opts.FilterCacheBytes = 0
	}
	st, err := store.OpenWith(c.cfg.DataDir, c.cfg.Params, opts)
	if err != nil {
		return fmt.Errorf("client: %w", err)
	}
	ch, err := st.Chain()
	if err != nil {
		st.Close()
		return fmt.Errorf("client: resuming the chain from %s: %w", st.Dir(), err)
	}
	c.st, c.chain = st, ch
	for _, r := range st.Recovered() {
		c.notes = append(c.notes, "chain state: "+r)
	}
	c.logf("chain state %s: %d headers, filter headers to %d", st.Dir(), ch.Height(), st.FilterHeaderTip())
	return nil
}

// saveChain writes the chain's headers to the store, after a sync.
func (c *Client) saveChain() error {
	if c.st == nil {
		return nil
	}
	if _, err := c.st.SaveChain(c.chain); err != nil {
		return fmt.Errorf("client: saving the chain: %w", err)
	}
	return nil
}

// agreedFilterHeaders returns the verified filter headers of from-1..to
// (see filterHeaders). With a store, those it holds are used as they are
// and only the ones above its tip are asked of the peers, then stored.
func (c *Client) agreedFilterHeaders(ctx context.Context, ms []*member, from, to int32) ([]chainhash.Hash, []*member, error) {
	if c.st == nil {
		return c.filterHeaders(ctx, ms, from, to)
	}
	if !c.comparedStored {
		var err error
		if ms, err = c.compareStored(ctx, ms); err != nil {
			return nil, ms, err
		}
		c.comparedStored = true
	}
	if tip := c.st.FilterHeaderTip(); tip < to {
		start := tip + 1
		fetched, live, err := c.filterHeaders(ctx, ms, start, to)
		if err != nil {
			return nil, live, err
		}
		ms = live
		if start > 0 {
			stored, err := c.st.FilterHeaders(start-1, start-1)
			if err != nil {
				return nil, ms, fmt.Errorf("client: reading the stored filter headers: %w", err)
			}
			if stored[0] != fetched[0] {
				return nil, ms, fmt.Errorf("client: the stored filter header at height %d (%v) is not the one the peers agree on (%v): the chain state in %s is not to be trusted; remove it",
					start-1, stored[0], fetched[0], c.st.Dir())
			}
		}
		if err := c.st.AppendFilterHeaders(start, fetched[1:]); err != nil {
			return nil, ms, fmt.Errorf("client: storing filter headers: %w", err)
		}
	}
	headers, err := c.st.FilterHeaders(max(from-1, 0), to)
	if err != nil {
		return nil, ms, fmt.Errorf("client: reading the stored filter headers: %w", err)
	}
	if from == 0 {
		headers = append([]chainhash.Hash{{}}, headers...)
	}
	return headers, ms, nil
}

// cachedBatch matches batch b from the filter cache, if it holds every
// filter of it, each checked against its header.
func (c *Client) cachedBatch(b filterBatch, base *gcs.Matcher, check func(int32, []byte) error) ([]int32, bool) {
	if c.st == nil {
		return nil, false
	}
	datas := make([][]byte, 0, b.stop-b.start+1)
	for h := b.start; h <= b.stop; h++ {
		data, ok, err := c.st.Filter(c.chain.Hash(h))
		if err != nil || !ok || check(h, data) != nil {
			return nil, false
		}
		datas = append(datas, data)
	}
	var hits []int32
	if base.Len() == 0 {
		return hits, true
	}
	m := base.Clone()
	for i, data := range datas {
		h := b.start + int32(i)
		hash := c.chain.Hash(h)
		hit, err := m.MatchVerifiedBytes(data, gcs.BasicKey(&hash))
		if err != nil {
			return nil, false
		}
		if hit {
			hits = append(hits, h)
		}
	}
	return hits, true
}

// cacheFilters keeps verified filters in the store's cache.
func (c *Client) cacheFilters(blocks []chainhash.Hash, datas [][]byte) {
	if c.st == nil || len(blocks) != len(datas) {
		return
	}
	if err := c.st.PutFilters(blocks, datas); err != nil {
		c.logf("caching filters: %v", err)
	}
}

// storedToCompare is how many of the stored filter headers are compared
// with the peers of a new client (BIP 157 says a client should keep the
// last 100 to check new peers against).
const storedToCompare = 100

// compareStored asks every peer for the filter headers of the last blocks
// the store holds them for. The stored ones may have rested on one peer
// that nobody cross-checked, so a difference bans nobody: the stored
// filter headers are dropped and verified again with every peer, which
// settles who is right.
func (c *Client) compareStored(ctx context.Context, ms []*member) ([]*member, error) {
	start, stored, err := c.st.LastFilterHeaders(storedToCompare + 1)
	if err != nil || len(stored) < 2 {
		return ms, err
	}
	end := start + int32(len(stored)) - 1
	var differ []string
	for _, m := range ms {
		if m.tip < end {
			continue
		}
		got, err := c.segment(ctx, m, start+1, end, stored[0])
		switch {
		case errors.Is(err, peer.ErrBadFilterHeader):
			differ = append(differ, m.addr)
		case err != nil:
			return ms, &failure{m: m, err: err}
		case chainHeaders(stored[0], got) != stored[len(stored)-1]:
			differ = append(differ, m.addr)
		}
	}
	if len(differ) == 0 {
		return ms, nil
	}
	if err := c.st.TruncateFilterHeaders(-1); err != nil {
		return ms, fmt.Errorf("client: %w", err)
	}
	c.notes = append(c.notes, fmt.Sprintf("the filter headers in %s differ from those of %s at heights %d..%d: they were verified again with every peer",
		c.st.Dir(), strings.Join(differ, ", "), start+1, end))
	return ms, nil
}
