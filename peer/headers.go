package peer

import (
	"context"
	"errors"

	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/btcsuite/btcd/wire"
	"github.com/spvfilter/spvfilter/peer/chain"
)

// HeadersResult is what a header sync learnt about the node's chain.
type HeadersResult struct {
	// Update says how the chain changed.
	Update chain.Update
	// Tip is the highest height of the chain (as it is after the sync)
	// that the node showed it holds on its best chain.
	Tip int32
	// Branch, if not nil, is where the node's best chain leaves the chain
	// for a branch of its own with less work; Tip is then the fork.
	Branch *Branch
}

// Branch is where a node's best chain leaves another chain: the two share
// the blocks up to Fork, then the node has its own up to Height, whose
// last block is Hash.
type Branch struct {
	Fork   int32
	Height int32
	Hash   chainhash.Hash
}

// SyncHeaders downloads the node's headers with getheaders and extends c
// with them; c checks every header (see chain.Chain.Extend). It reports
// how c changed and where the node's best chain stands against it.
//
// The first request asks for the headers after the parent of c's tip, so
// a node that holds c's tip answers with at least that header: its tip is
// then confirmed, whatever height its version message announced (a node
// that rolled back, or announced 0, is measured by what it serves). A
// node that answers nothing holds one of the blocks of the request's
// locator as its tip; SyncHeaders finds which with a few more requests,
// each answered with one header (see findTip).
//
// A branch that forks off c is followed over as many messages as it
// takes (at most chain.MaxBranchHeaders headers) and weighed whole: c
// adopts it once it has more work. Headers that break a rule are reported
// with ErrBadHeaders. A valid branch with less work than c leaves c as it
// was and is reported in HeadersResult.Branch, not as an error. A failure of c's store is
// returned as it is (chain.ErrStorage), not blamed on the node.
//
// btcd does not answer getheaders until its tip is less than 24 hours old.
func (p *Peer) SyncHeaders(ctx context.Context, c *chain.Chain) (HeadersResult, error) {
	const op = "getheaders"
	res := HeadersResult{Update: chain.Update{Fork: c.Height()}, Tip: -1}
	end, err := p.begin(ctx, op)
	if err != nil {
		return res, err
	}
	defer end()
	loc := c.LocatorAt(max(c.Height()-1, 0))
	for first := true; ; first = false {
		headers, err := p.getHeaders(ctx, op, loc, chainhash.Hash{})
		if err != nil {
			return res, err
		}
		if len(headers) == 0 {
			if first {
				// The node's tip is a block of the locator below c's.
				res.Tip, err = p.findTip(ctx, op, c, &res.Update)
			}
			return res, err
		}
		last, err := p.extend(op, c, headers, &res)
		if errors.Is(err, chain.ErrLessWork) && len(headers) == wire.MaxBlockHeadersPerMsg {
			// A branch that may go on: weigh it whole.
			last, headers, err = p.followBranch(ctx, op, c, headers, &res)
		}
		if errors.Is(err, chain.ErrLessWork) {
			err = nil
		}
		if err != nil || last < 0 {
			return res, err
		}
		res.Tip = last
		p.logf("headers: tip %d, the node's at %d", c.Height(), last)
		if p.cfg.OnHeaders != nil {
			p.cfg.OnHeaders(c.Height(), max(p.LastBlock(), last))
		}
		if len(headers) < wire.MaxBlockHeadersPerMsg {
			return res, nil
		}
		// A full message: the node has more after its last header.
		loc = c.LocatorAt(last)
	}
}

// getHeaders sends one getheaders and returns the answer.
func (p *Peer) getHeaders(ctx context.Context, op string, loc []*chainhash.Hash, stop chainhash.Hash) ([]*wire.BlockHeader, error) {
	msg := wire.NewMsgGetHeaders()
	for _, h := range loc {
		msg.AddBlockLocatorHash(h)
	}
	msg.HashStop = stop
	if err := ctx.Err(); err != nil && finishesBegun(ctx) {
		// Between two rounds of a sync nothing is outstanding: ended
		// under FinishBegun, the sync ends here, the connection kept.
		return nil, err
	}
	deadline := p.deadline()
	if err := p.send(ctx, op, msg, deadline); err != nil {
		return nil, err
	}
	m, err := p.recv(ctx, op, deadline, is[*wire.MsgHeaders])
	if errors.Is(err, ErrStalled) {
		return nil, p.errorf(op, "%w: no headers within %v (btcd does not answer getheaders while its tip is more than 24 hours old)",
			ErrStalled, p.cfg.Timeout)
	}
	if err != nil {
		return nil, err
	}
	headers := m.(*wire.MsgHeaders).Headers
	if len(headers) > wire.MaxBlockHeadersPerMsg {
		return nil, p.fail(op, "%w: %d headers in one message", ErrBadHeaders, len(headers))
	}
	return headers, nil
}

// extend adds headers the node sent to c, recording the change in res,
// and returns the height in c of the last of them. For a branch with less
// work it returns -1 and an error wrapping chain.ErrLessWork, with the
// branch recorded in res.Branch and res.Tip at the fork.
func (p *Peer) extend(op string, c *chain.Chain, headers []*wire.BlockHeader, res *HeadersResult) (int32, error) {
	up, err := c.Extend(headers)
	merge(&res.Update, up)
	switch {
	case errors.Is(err, chain.ErrLessWork):
		// Headers c already holds are skipped: the branch starts at the
		// first one it does not.
		parent, _ := c.HeightOf(headers[0].PrevBlock)
		skip := 0
		for skip < len(headers) && c.Hash(parent+int32(skip)+1) == headers[skip].BlockHash() {
			skip++
		}
		fork := parent + int32(skip)
		res.Tip = fork
		res.Branch = &Branch{Fork: fork, Height: fork + int32(len(headers)-skip), Hash: headers[len(headers)-1].BlockHash()}
		p.logf("headers: the node is on a branch with less work from height %d", fork)
		return -1, err
	case err != nil:
		return -1, p.headersError(op, err)
	}
	res.Branch = nil
	last, ok := c.HeightOf(headers[len(headers)-1].BlockHash())
	if !ok {
		return -1, p.fail(op, "%w: its last header %v is not in the chain it extended", ErrBadHeaders, headers[len(headers)-1].BlockHash())
	}
	return last, nil
}

// headersError turns an error of the chain about the node's headers into
// the sync's: a broken rule is the node's lie; a branch below a
// checkpoint or one too long to hold drops the connection without a
// lie; a failure of the chain's store is returned as it is (chain.ErrStorage),
// not blamed on the node.
func (p *Peer) headersError(op string, err error) error {
	switch {
	case errors.Is(err, chain.ErrStorage):
		return err
	case errors.Is(err, chain.ErrBelowCheckpoint), errors.Is(err, chain.ErrBranchTooLong), errors.Is(err, chain.ErrNotConnected):
		return p.errorf(op, "%w", err)
	}
	return p.fail(op, "%w: %v", ErrBadHeaders, err)
}

// followBranch follows a branch of the node that forks off c and whose
// first message (first, a full one) has less work than c above the fork:
// it asks for the branch's next messages until one is short or the branch
// has more work (then c adopts it). It returns the height in c of the
// last header adopted and the last message, or -1 and an error wrapping
// chain.ErrLessWork for a branch with less work, recorded in res.
func (p *Peer) followBranch(ctx context.Context, op string, c *chain.Chain, first []*wire.BlockHeader, res *HeadersResult) (int32, []*wire.BlockHeader, error) {
	b, err := c.NewBranch(first)
	if err != nil {
		return -1, nil, p.headersError(op, err)
	}
	page := first
	for !b.MoreWork() && len(page) == wire.MaxBlockHeadersPerMsg {
		if page, err = p.getHeaders(ctx, op, b.Locator(), chainhash.Hash{}); err != nil {
			return -1, nil, err
		}
		if len(page) == 0 {
			break
		}
		if err := b.Add(page); err != nil {
			return -1, nil, p.headersError(op, err)
		}
		height, _ := b.Tip()
		p.logf("headers: the node's branch from height %d reaches %d", b.Fork(), height)
	}
	up, err := c.Adopt(b)
	merge(&res.Update, up)
	height, hash := b.Tip()
	switch {
	case errors.Is(err, chain.ErrLessWork):
		res.Tip = b.Fork()
		res.Branch = &Branch{Fork: b.Fork(), Height: height, Hash: hash}
		p.logf("headers: the node is on a branch with less work from height %d to %d", b.Fork(), height)
		return -1, nil, err
	case err != nil:
		return -1, nil, p.headersError(op, err)
	}
	res.Branch = nil
	return height, page, nil
}

// findTip finds the tip of a node that answered a getheaders from the
// parent of c's tip with nothing: its tip is then the highest block of
// that locator on its best chain, and every block below that is on it too
// (searchTip). Other peers' syncs may change c meanwhile: a tip found on
// the chain as it was is one of c only while c still holds the block the
// node showed there, so the search is run again when c no longer does, at
// most maxTipSearches times.
func (p *Peer) findTip(ctx context.Context, op string, c *chain.Chain, up *chain.Update) (int32, error) {
	for range maxTipSearches {
		tip, held, err := p.searchTip(ctx, op, c, up)
		if err != nil || c.Hash(tip) == held {
			return tip, err
		}
		p.logf("headers: the chain changed during the search for the node's tip (%d): searching again", tip)
	}
	return -1, p.errorf(op, "peer: the chain changed during each of %d searches for the node's tip", maxTipSearches)
}

// maxTipSearches bounds the searches of findTip.
const maxTipSearches = 3

// searchTip is one search of findTip: it returns the tip found and the
// hash of the node's block there. A binary search over the locator's
// heights asks, for a height L, for the headers after L-1 up to L
// (hashStop): a node whose best chain holds L answers with exactly that
// header. Anything else it answers (a branch of its own, or blocks it
// mined meanwhile) is added to c as SyncHeaders would, and how c changed
// is merged into up.
func (p *Peer) searchTip(ctx context.Context, op string, c *chain.Chain, up *chain.Update) (int32, chainhash.Hash, error) {
	var heights []int32 // the locator's heights, lowest first
	for _, h := range c.LocatorAt(max(c.Height()-1, 0)) {
		height, _ := c.HeightOf(*h)
		heights = append(heights, height)
	}
	for i, j := 0, len(heights)-1; i < j; i, j = i+1, j-1 {
		heights[i], heights[j] = heights[j], heights[i]
	}
	lo, hi := 0, len(heights)-1 // heights[lo] is held (genesis); the tip is in heights[lo..hi]
	held := c.Hash(heights[lo])
	// moved reports whether c no longer holds the node's block at
	// heights[lo]: what the search found is then of another chain, and
	// headers after that block may not connect to c (findTip searches
	// again).
	moved := func() bool { return c.Hash(heights[lo]) != held }
	for lo < hi {
		if moved() {
			return heights[lo], held, nil
		}
		mid := (lo + hi + 1) / 2
		l := heights[mid]
		want := c.Hash(l)
		loc := []*chainhash.Hash{hashPtr(c.Hash(l - 1)), hashPtr(held)}
		headers, err := p.getHeaders(ctx, op, loc, want)
		if err != nil {
			return -1, held, err
		}
		if len(headers) == 1 && headers[0].BlockHash() == want {
			lo, held = mid, want
			continue
		}
		if len(headers) > 0 {
			_, err := p.extendFound(op, c, headers, up)
			if errors.Is(err, chain.ErrNotConnected) && moved() {
				return heights[lo], held, nil
			}
			if err != nil && !errors.Is(err, chain.ErrLessWork) {
				return -1, held, err
			}
		}
		hi = mid - 1
	}
	// The node holds heights[lo]; whatever it has after it (nothing, for
	// a node that answered as the protocol says) ends its chain.
	headers, err := p.getHeaders(ctx, op, []*chainhash.Hash{hashPtr(held)}, chainhash.Hash{})
	if err != nil || len(headers) == 0 {
		return heights[lo], held, err
	}
	last, err := p.extendFound(op, c, headers, up)
	if errors.Is(err, chain.ErrLessWork) || errors.Is(err, chain.ErrNotConnected) && moved() {
		return heights[lo], held, nil
	}
	if err != nil || last < 0 {
		return heights[lo], held, err
	}
	return last, headers[len(headers)-1].BlockHash(), nil
}

// extendFound is extend for the headers findTip is sent: how c changed is
// merged into up; the tip and branch extend records are not the sync's.
func (p *Peer) extendFound(op string, c *chain.Chain, headers []*wire.BlockHeader, up *chain.Update) (int32, error) {
	res := HeadersResult{Update: chain.Update{Fork: c.Height()}}
	last, err := p.extend(op, c, headers, &res)
	merge(up, res.Update)
	return last, err
}

func hashPtr(h chainhash.Hash) *chainhash.Hash { return &h }

// merge adds the change up to the running total of a sync.
func merge(total *chain.Update, up chain.Update) {
	if up.Fork < total.Fork {
		total.Fork = up.Fork
	}
	total.Disconnected = append(total.Disconnected, up.Disconnected...)
	total.Connected += up.Connected
}
