package peer

import (
	"context"
	"errors"
	"fmt"

	"github.com/btcsuite/btcd/wire"
	"github.com/spvfilter/spvfilter/peer/chain"
)

// SyncHeaders downloads the node's headers with getheaders from the tip of
// c and extends c with them; c checks every header (see chain.Chain.Extend).
// It returns how c changed and the height of the node's tip in c.
//
// The node must serve headers up to the height it announced in its
// version message, unless c already has more work: a node that announced
// more and served less is reported with ErrWithheldHeaders. Headers that
// break a rule are reported with ErrBadHeaders; a valid branch with less
// work than c leaves c as it was and is reported with chain.ErrLessWork
// wrapped in the *PeerError. A failure of c's store is returned as it is
// (chain.ErrStorage), not blamed on the node.
//
// btcd does not answer getheaders until its tip is less than 24 hours old.
func (p *Peer) SyncHeaders(ctx context.Context, c *chain.Chain) (chain.Update, int32, error) {
	const op = "getheaders"
	total := chain.Update{Fork: c.Height()}
	end, err := p.begin(op)
	if err != nil {
		return total, 0, err
	}
	defer end()
	tip := int32(-1) // the node's tip in c, once known
	for {
		msg := wire.NewMsgGetHeaders()
		for _, h := range c.Locator() {
			msg.AddBlockLocatorHash(h)
		}
		deadline := p.deadline()
		if err := p.send(ctx, op, msg, deadline); err != nil {
			return total, tip, err
		}
		m, err := p.recv(ctx, op, deadline, is[*wire.MsgHeaders])
		if errors.Is(err, ErrStalled) {
			return total, tip, p.errorf(op, "%w: no headers within %v (btcd does not answer getheaders while its tip is more than 24 hours old)",
				ErrStalled, p.cfg.Timeout)
		}
		if err != nil {
			return total, tip, err
		}
		headers := m.(*wire.MsgHeaders).Headers
		if len(headers) > wire.MaxBlockHeadersPerMsg {
			return total, tip, p.fail(op, "%w: %d headers in one message", ErrBadHeaders, len(headers))
		}
		if len(headers) == 0 {
			break
		}
		up, err := c.Extend(headers)
		merge(&total, up)
		if errors.Is(err, chain.ErrLessWork) || errors.Is(err, chain.ErrBelowCheckpoint) {
			return total, tip, p.errorf(op, "%w", err)
		}
		if errors.Is(err, chain.ErrStorage) {
			// Our disk failed, not the peer: nothing to blame it for.
			return total, tip, err
		}
		if err != nil {
			return total, tip, p.fail(op, "%w: %v", ErrBadHeaders, err)
		}
		last, _ := c.HeightOf(headers[len(headers)-1].BlockHash())
		tip = last
		p.logf("headers: tip %d", c.Height())
		if p.cfg.OnHeaders != nil {
			p.cfg.OnHeaders(c.Height(), p.LastBlock())
		}
		if len(headers) < wire.MaxBlockHeadersPerMsg {
			break
		}
	}
	if tip < 0 {
		// Nothing new: the node's tip is at or below ours.
		tip = min(p.LastBlock(), c.Height())
	}
	if announced := p.LastBlock(); tip < announced {
		return total, tip, p.fail(op, "%w: announced height %d in its version message, served headers up to %d",
			ErrWithheldHeaders, announced, tip)
	}
	return total, tip, nil
}

// merge adds the change up to the running total of a sync.
func merge(total *chain.Update, up chain.Update) {
	if up.Fork < total.Fork {
		total.Fork = up.Fork
	}
	total.Disconnected = append(total.Disconnected, up.Disconnected...)
	total.Connected += up.Connected
}

// checkRange validates an inclusive height range against c.
func checkRange(c *chain.Chain, from, to int32) error {
	if c == nil {
		return errors.New("peer: nil header chain")
	}
	if err := c.CheckRange(from, to); err != nil {
		return fmt.Errorf("peer: %w", err)
	}
	return nil
}
