package client

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/btcsuite/btcd/txscript"
	"github.com/btcsuite/btcd/wire"
	"github.com/spvfilter/spvfilter/gcs"
	"github.com/spvfilter/spvfilter/peer"
	"github.com/spvfilter/spvfilter/peer/chain"
)

// ConflictError is a disagreement between peers about a block's filter
// that neither the block nor a majority could decide: the scan cannot
// know which peer tells the truth, and says so instead of choosing.
type ConflictError struct {
	Height    int32
	BlockHash chainhash.Hash
	// Sides lists, for each filter the peers served, the peers that
	// served it.
	Sides [][]string
}

func (e *ConflictError) Error() string {
	var sides []string
	for _, s := range e.Sides {
		sides = append(sides, strings.Join(s, ", "))
	}
	return fmt.Sprintf("client: peers disagree on the filter of block %v (height %d) and neither the block nor a majority decides: %s",
		e.BlockHash, e.Height, strings.Join(sides, " against "))
}

// failure is a request that failed at one peer. The scan decides, after
// checking for a reorganization, whether to blame the peer.
type failure struct {
	m   *member
	err error
}

func (f *failure) Error() string { return f.err.Error() }
func (f *failure) Unwrap() error { return f.err }

// eachPeer runs fn for every member at once and returns the first
// failure, if any.
func eachPeer(ms []*member, fn func(m *member) error) error {
	errs := make([]error, len(ms))
	var wg sync.WaitGroup
	for i, m := range ms {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := fn(m); err != nil {
				errs[i] = &failure{m: m, err: err}
			}
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// filterHeaders returns the verified basic filter headers of the blocks
// from-1..to (the first is zero for from 0), agreed by all live peers
// serving up to to, or decided between them block by block; peers proven
// wrong are banned on the way.
func (c *Client) filterHeaders(ctx context.Context, ms []*member, from, to int32) ([]chainhash.Hash, []*member, error) {
	const interval = wire.CFCheckptInterval
	stop := c.chain.Hash(to)
	k := int(to / interval)
	cps := make(map[*member][]chainhash.Hash, len(ms))
	var mu sync.Mutex
	err := eachPeer(ms, func(m *member) error {
		cp, err := m.p.GetCFCheckpt(ctx, stop, k)
		mu.Lock()
		cps[m] = cp
		mu.Unlock()
		return err
	})
	if err != nil {
		return nil, ms, err
	}
	// Hard-coded checkpoints come first: no peer overrules them.
	for _, m := range ms {
		for i, h := range cps[m] {
			if err := chain.CheckFilterHeader(c.cfg.Params, int32(i+1)*interval, h); err != nil {
				c.ban(m, peerErr(m, "getcfcheckpt", fmt.Errorf("%w: %v", peer.ErrBadFilterHeader, err)))
				break
			}
		}
	}
	ms = c.keepLive(ms)
	// Settle every disagreement over the checkpoints, lowest first: a
	// false filter changes every checkpoint after it.
	for {
		if len(ms) == 0 {
			return nil, ms, c.noPeers("getcfcheckpt")
		}
		idx := firstDisagreement(ms, cps, k)
		if idx < 0 {
			break
		}
		start, prev := segmentStart(int32(idx), cps[ms[0]])
		ends := make(map[*member]chainhash.Hash, len(ms))
		for _, m := range ms {
			ends[m] = cps[m][idx]
		}
		if err := c.settle(ctx, ms, start, int32(idx+1)*interval, prev, ends, nil); err != nil {
			return nil, ms, err
		}
		ms = c.keepLive(ms)
	}
	agreed := cps[ms[0]]

	// The segments of from..to: each ends at a checkpoint, but the last.
	headers := make([]chainhash.Hash, 0, to-from+2)
	first := int(max(from-1, 0) / interval)
	for j := first; j <= k; j++ {
		start, prev := segmentStart(int32(j), agreed)
		end := min(int32(j+1)*interval, to)
		if start > end {
			break
		}
		var seg []chainhash.Hash
		if end%interval == 0 && int(end/interval) <= len(agreed) {
			// Bound by an agreed checkpoint: one peer is enough.
			m := c.pick(ms)
			got, err := c.segment(ctx, m, start, end, prev)
			if err == nil && chainHeaders(prev, got) != agreed[end/interval-1] {
				err = peerErr(m, "getcfheaders", fmt.Errorf("%w: filter headers %d..%d do not reach the checkpoint it sent itself",
					peer.ErrBadFilterHeader, start, end))
			}
			if err != nil {
				return nil, ms, &failure{m: m, err: err}
			}
			seg = got
		} else {
			// The tail after the last checkpoint: ask everyone.
			var err error
			seg, ms, err = c.tail(ctx, ms, start, end, prev)
			if err != nil {
				return nil, ms, err
			}
		}
		running := prev
		if start == from {
			headers = append(headers, prev)
		}
		for i := range seg {
			running = gcs.MakeHeader(&seg[i], &running)
			if height := start + int32(i); height >= from-1 {
				headers = append(headers, running)
			}
		}
	}
	return headers, ms, nil
}

// tail gets the filter hashes start..end, past the last checkpoint, from
// every peer and settles any disagreement.
func (c *Client) tail(ctx context.Context, ms []*member, start, end int32, prev chainhash.Hash) ([]chainhash.Hash, []*member, error) {
	segs := make(map[*member][]chainhash.Hash, len(ms))
	var mu sync.Mutex
	err := eachPeer(ms, func(m *member) error {
		got, err := c.segment(ctx, m, start, end, prev)
		mu.Lock()
		segs[m] = got
		mu.Unlock()
		return err
	})
	if err != nil {
		return nil, ms, err
	}
	for {
		ends := make(map[*member]chainhash.Hash, len(ms))
		for _, m := range ms {
			ends[m] = chainHeaders(prev, segs[m])
		}
		if len(distinct(ends)) <= 1 {
			return segs[ms[0]], ms, nil
		}
		if err := c.settle(ctx, ms, start, end, prev, ends, segs); err != nil {
			return nil, ms, err
		}
		if ms = c.keepLive(ms); len(ms) == 0 {
			return nil, ms, c.noPeers("getcfheaders")
		}
	}
}

// segment gets the filter hashes start..end from m and checks that they
// continue from prev.
func (c *Client) segment(ctx context.Context, m *member, start, end int32, prev chainhash.Hash) ([]chainhash.Hash, error) {
	gotPrev, hashes, err := m.p.GetCFHeaders(ctx, start, c.chain.Hash(end), int(end-start)+1)
	if err != nil {
		return nil, err
	}
	if gotPrev != prev {
		return nil, peerErr(m, "getcfheaders", fmt.Errorf("%w: previous filter header %v at height %d, the agreed one is %v",
			peer.ErrBadFilterHeader, gotPrev, start-1, prev))
	}
	return hashes, nil
}

// settle decides a disagreement over the filter headers start..end: ends
// holds each peer's filter header at end, segs (when known) each peer's
// filter hashes. It finds the first block whose filter the sides dispute
// and bans the peers whose filter that block proves false, then, if
// several sides remain, those outvoted by a majority of at least two. It
// fails with a *ConflictError when no side wins.
func (c *Client) settle(ctx context.Context, ms []*member, start, end int32, prev chainhash.Hash,
	ends map[*member]chainhash.Hash, segs map[*member][]chainhash.Hash) error {
	sides := sidesOf(ms, ends)
	// One representative per side states its filter hashes.
	reps := make([]*member, len(sides))
	repHashes := make([][]chainhash.Hash, len(sides))
	for i, side := range sides {
		reps[i] = side[0]
		if segs != nil {
			repHashes[i] = segs[side[0]]
			continue
		}
		got, err := c.segment(ctx, side[0], start, end, prev)
		if err == nil && chainHeaders(prev, got) != ends[side[0]] {
			err = peerErr(side[0], "getcfheaders", fmt.Errorf("%w: filter headers %d..%d do not reach the checkpoint it sent itself",
				peer.ErrBadFilterHeader, start, end))
		}
		if err != nil {
			return &failure{m: side[0], err: err}
		}
		repHashes[i] = got
	}
	// The first block whose filter hash differs between sides.
	at := -1
	for i := 0; at < 0 && i < int(end-start)+1; i++ {
		for s := 1; s < len(sides); s++ {
			if repHashes[s][i] != repHashes[0][i] {
				at = i
				break
			}
		}
	}
	if at < 0 {
		// Same hashes, different headers: impossible for honest peers
		// asked the same range; the representatives' own data disagree.
		return fmt.Errorf("client: filter headers %d..%d differ although their filter hashes agree", start, end)
	}
	height := start + int32(at)
	hash := c.chain.Hash(height)
	c.logf("peers disagree on the filter of block %v (height %d): checking it against the block", hash, height)
	block, err := c.fetchBlock(ctx, height)
	if err != nil {
		return err
	}
	key := gcs.BasicKey(&hash)
	var standing [][]*member
	for i, side := range sides {
		rep := reps[i]
		var data []byte
		err := rep.p.GetCFilters(ctx, height, []chainhash.Hash{hash}, func(_ int, d []byte) error {
			data = d
			return nil
		})
		if err == nil && chainhash.DoubleHashH(data) != repHashes[i][at] {
			err = peerErr(rep, "getcfilters", fmt.Errorf("%w: filter for block %v (height %d) does not hash to the filter header it sent itself",
				peer.ErrBadFilter, hash, height))
		}
		if err != nil {
			return &failure{m: rep, err: err}
		}
		if why := disproves(block, data, key); why != "" {
			for _, m := range side {
				c.ban(m, peerErr(m, "getcfilters", fmt.Errorf("%w: filter for block %v (height %d) %s: the block proves it false",
					peer.ErrBadFilter, hash, height, why)))
			}
			continue
		}
		standing = append(standing, side)
	}
	if len(standing) <= 1 {
		return nil
	}
	// What is left is voted on at this block only among sides that
	// differ here: sides that agree on this filter differ later, and the
	// caller settles that next.
	var voting [][]*member // sides joined by their filter at height
	byHash := map[chainhash.Hash]int{}
	for _, side := range standing {
		h := repHashes[slices.IndexFunc(sides, func(s []*member) bool { return s[0] == side[0] })][at]
		i, ok := byHash[h]
		if !ok {
			i = len(voting)
			byHash[h] = i
			voting = append(voting, nil)
		}
		voting[i] = append(voting[i], side...)
	}
	if len(voting) == 1 {
		return nil
	}
	sort.SliceStable(voting, func(i, j int) bool { return len(voting[i]) > len(voting[j]) })
	if len(voting[0]) >= 2 && len(voting[0]) > len(voting[1]) {
		var losers []string
		for _, side := range voting[1:] {
			for _, m := range side {
				losers = append(losers, m.addr)
				c.ban(m, peerErr(m, "getcfheaders", fmt.Errorf("%w: filter for block %v (height %d) outvoted by %d peers that agree",
					peer.ErrBadFilterHeader, hash, height, len(voting[0]))))
			}
		}
		var winners []string
		for _, m := range voting[0] {
			winners = append(winners, m.addr)
		}
		c.decisions = append(c.decisions, fmt.Sprintf(
			"the filter of block %v (height %d) was decided by a majority (%s against %s), not by the block: if the majority colludes, transactions of that block may be missing",
			hash, height, strings.Join(winners, ", "), strings.Join(losers, ", ")))
		return nil
	}
	ce := &ConflictError{Height: height, BlockHash: hash}
	for _, side := range voting {
		var addrs []string
		for _, m := range side {
			addrs = append(addrs, m.addr)
		}
		ce.Sides = append(ce.Sides, addrs)
	}
	return ce
}

// disproves returns why a block's filter is false on the block's own
// evidence, or "" if the block cannot tell: BIP 158's basic filter holds
// every output script but the empty and OP_RETURN ones, plus the scripts
// the inputs spend, each once.
func disproves(block *wire.MsgBlock, data []byte, key [16]byte) string {
	f, err := gcs.DecodeBasic(data)
	if err != nil {
		return fmt.Sprintf("does not decode (%v)", err)
	}
	outputs := map[string]bool{}
	inputs := 0
	for i, tx := range block.Transactions {
		if i > 0 {
			inputs += len(tx.TxIn)
		}
		for _, out := range tx.TxOut {
			s := out.PkScript
			if len(s) == 0 || s[0] == txscript.OP_RETURN || outputs[string(s)] {
				continue
			}
			outputs[string(s)] = true
			if !f.Match(key, s) {
				return fmt.Sprintf("leaves out output script %x", s)
			}
		}
	}
	if n := int(f.N()); n < len(outputs) || n > len(outputs)+inputs {
		return fmt.Sprintf("holds %d items where the block allows %d to %d", n, len(outputs), len(outputs)+inputs)
	}
	return ""
}

// fetchBlock downloads one block of the chain from a random peer.
func (c *Client) fetchBlock(ctx context.Context, height int32) (*wire.MsgBlock, error) {
	hash := c.chain.Hash(height)
	ms := c.usable(wire.SFNodeWitness, height)
	if len(ms) == 0 {
		return nil, c.noPeers("getdata block")
	}
	m := c.pick(ms)
	var block *wire.MsgBlock
	err := m.p.GetBlocks(ctx, []chainhash.Hash{hash}, func(_ int, b *wire.MsgBlock) error {
		block = b
		return nil
	})
	if err != nil {
		return nil, &failure{m: m, err: err}
	}
	return block, nil
}

// keepLive returns the members of ms still live.
func (c *Client) keepLive(ms []*member) []*member {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []*member
	for _, m := range ms {
		if m.p != nil && !m.banned && m.err == nil {
			out = append(out, m)
		}
	}
	return out
}

// firstDisagreement returns the first checkpoint index at which the
// members' checkpoints differ, or -1.
func firstDisagreement(ms []*member, cps map[*member][]chainhash.Hash, k int) int {
	for i := 0; i < k; i++ {
		for _, m := range ms[1:] {
			if cps[m][i] != cps[ms[0]][i] {
				return i
			}
		}
	}
	return -1
}

// segmentStart returns the first height of checkpoint segment j and the
// filter header before it.
func segmentStart(j int32, checkpoints []chainhash.Hash) (int32, chainhash.Hash) {
	if j == 0 {
		return 0, chainhash.Hash{}
	}
	return j*wire.CFCheckptInterval + 1, checkpoints[j-1]
}

// chainHeaders returns the filter header reached from prev through the
// filter hashes.
func chainHeaders(prev chainhash.Hash, hashes []chainhash.Hash) chainhash.Hash {
	for i := range hashes {
		prev = gcs.MakeHeader(&hashes[i], &prev)
	}
	return prev
}

// sidesOf groups members by the header they state, in first-seen order.
func sidesOf(ms []*member, ends map[*member]chainhash.Hash) [][]*member {
	var sides [][]*member
	pos := map[chainhash.Hash]int{}
	for _, m := range ms {
		h := ends[m]
		i, ok := pos[h]
		if !ok {
			i = len(sides)
			pos[h] = i
			sides = append(sides, nil)
		}
		sides[i] = append(sides[i], m)
	}
	return sides
}

func distinct(ends map[*member]chainhash.Hash) map[chainhash.Hash]bool {
	out := map[chainhash.Hash]bool{}
	for _, h := range ends {
		out[h] = true
	}
	return out
}

// peerErr names m as the peer that did what err says during op.
func peerErr(m *member, op string, err error) error {
	return &peer.PeerError{Peer: m.addr, Op: op, Err: err}
}
