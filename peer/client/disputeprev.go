package client

import (
	"errors"
	"fmt"
	"slices"

	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/btcsuite/btcd/wire"
	"github.com/spvfilter/spvfilter/peer"
	"github.com/spvfilter/spvfilter/peer/pool"
)

// A peer asked for filter hashes from a height states its filter header
// before them too. Where that header is not the one verified, it proves
// the peer false only if the peer was bound to the verified one: by its
// own checkpoint at the end of the segment before (a segment asked from
// its start, from the agreed checkpoint), or, where the peers'
// checkpoints part (see cpLimit), by its own filter hashes (each peer is
// asked from its own header there). A segment asked from a height this
// life verified already (see knownPrefix) binds nobody: the verified
// header may have been agreed without the peer (by others while it was
// away or a block behind, and kept since), and no checkpoint says that it
// leads to the agreed one at the segment's end. There the header is
// disputed, not blamed: the segment is asked again from its start, with
// every peer, and the blocks settle where they differ (see settleAt). A
// segment near the tip asked without the checkpoints (see tipPlan) binds
// nobody either at its start: the verification is asked again from the
// checkpoints, where the peer's word on the header at the checkpoint's
// height is compared with the checkpoint it sends (see
// holdToCheckpoints), and the checkpoints with the others'. Either way
// the peer's word is held against what it states then: hashes that do
// not lead to the header it stated, or a checkpoint that is not it, are
// its own contradiction, and ban it. Nothing verified is given up below
// the segment involved.

// noteLateWord keeps m's word on the filter header at height, or its
// filter header before it (err), when it differs from the verified one
// (see lateAgree): the heights are verified again, m's word held against
// them (see holdToWords). Called with opMu held.
func (c *Client) noteLateWord(m *pool.Member, height int32, prev chainhash.Hash, hashes []chainhash.Hash, err error) {
	var pe *prevHeaderError
	switch {
	case errors.As(err, &pe):
		c.holdWords([]headerWord{pe.word})
	case err == nil && len(hashes) == 1:
		c.holdWords([]headerWord{{m: m, height: height, block: c.chain.Hash(height), header: chainHeaders(prev, hashes)}})
	}
}

// takeLateWords returns the words held (see holdWords) and forgets them.
func (c *Client) takeLateWords() []headerWord {
	c.lateWords.mu.Lock()
	defer c.lateWords.mu.Unlock()
	out := c.lateWords.ws
	c.lateWords.ws = nil
	return out
}

// disputedPrev returns the word of the peer whose failure err, asked for
// segment j from from, is a filter header before from that differs from
// the verified one, where from is inside the segment (asked from what
// this life verified already): a dispute, not a proof. (Where the peers'
// checkpoints part, from cpLimit on, each is asked from its own header,
// and a peer stating another contradicts itself.)
func (v *verification) disputedPrev(err error, j int, from int32) (headerWord, bool) {
	var pe *prevHeaderError
	if j >= v.cpLimit || from <= segmentFirst(j) || !errors.As(err, &pe) || pe.word.height != from-1 {
		return headerWord{}, false
	}
	return pe.word, true
}

// holdToWords bans each peer whose claim, stated from prev at start,
// leads to another filter header than its word on a height the claim
// reaches (see disputedPrev), with both its answers as the proof, and
// returns the claims without the banned peers.
func (v *verification) holdToWords(start int32, prev chainhash.Hash, claims []claim) []claim {
	var banned []*pool.Member
	for _, w := range v.words {
		i := int(w.height - start + 1) // the hashes up to w's height
		if w.block != v.c.chain.Hash(w.height) {
			continue // its block left the chain
		}
		for _, cl := range claims {
			if i < 0 || len(cl.hashes) < i || !slices.Contains(cl.members, w.m) {
				continue
			}
			if got := chainHeaders(prev, cl.hashes[:i]); got != w.header {
				v.c.pool.Ban(w.m, peerErr(w.m, "getcfheaders", fmt.Errorf(
					"%w: its filter hashes from height %d lead to filter header %v at height %d, where it stated %v before",
					peer.ErrBadFilterHeader, start, got, w.height, w.header)))
				banned = append(banned, w.m)
			}
		}
	}
	if len(banned) == 0 {
		return claims
	}
	v.keepLive()
	var out []claim
	for _, cl := range claims {
		cl.members = slices.DeleteFunc(slices.Clone(cl.members), func(m *pool.Member) bool { return slices.Contains(banned, m) })
		if len(cl.members) > 0 {
			out = append(out, cl)
		}
	}
	return out
}

// unboundPrev returns a disagreement (errDisputedHeader) in place of err,
// m's filter header before from, the first height of segment j, that
// differs from the verified one where m's own checkpoint before the
// segment does not bind it: the segment was planned without the
// checkpoints (see tipPlan). Nothing verified is given up: m's word, and
// the words held so far, are kept for the verification asked again,
// which is planned from the checkpoints (see heldBelow) and compares the
// word with m's own checkpoint there (see holdToCheckpoints). Nil where
// err is no such failure, or a proof: m's checkpoint before the segment,
// or its own filter header where the peers' checkpoints part (cpLimit),
// binds the header.
func (v *verification) unboundPrev(err error, j int, from int32) error {
	var pe *prevHeaderError
	if !errors.As(err, &pe) || from == 0 || j >= v.cpLimit {
		return nil
	}
	if from == segmentFirst(j) && len(v.cps[pe.word.m]) >= j {
		return nil // its own checkpoint binds the header: a proof
	}
	v.c.holdWords(append(v.words, pe.word))
	return &pool.Failure{Member: pe.word.m, Err: peerErr(pe.word.m, "getcfheaders", fmt.Errorf("%w: at height %d (%s): no proof yet, as no checkpoint it stated binds it; verified again from the checkpoints, its word held against its own",
		errDisputedHeader, pe.word.height, pe.msg))}
}

// keepLeftWords keeps, for the next verification, the word of each peer
// whose filter header before the heights asked differed from the
// verified one (see disputedPrev) and that left before stating the
// filter hashes leading to it: it hung up, stalled or was too slow. No
// proof exists then, since nothing it stated binds that header, so it is
// not banned; its word is held against what it states once it is back
// (see holdToWords), where hashes that do not lead to it are the proof,
// and the times in a row it left are counted. err is the verification's
// error: the failure of such a peer is returned naming its word, the
// count, and why it is no proof. Called with opMu held.
func (v *verification) keepLeftWords(err error) error {
	var f *pool.Failure
	if errors.Is(err, errDisputedHeader) {
		return err // the words are held already (see unboundPrev)
	}
	failed := errors.As(err, &f) && !isLie(f.Err)
	live := v.c.pool.Keep(v.ms)
	members := v.c.pool.Members()
	kept := map[*pool.Member]bool{}
	for _, w := range v.words {
		m := w.m
		left := failed && f.Member == m || !slices.Contains(live, m)
		if !left || kept[m] || v.c.pool.Status(m).Banned || !slices.Contains(members, m) || w.block != v.c.chain.Hash(w.height) {
			continue
		}
		kept[m] = true
		w.left++
		v.c.holdWords([]headerWord{w})
		if failed && f.Member == m {
			f.Err = fmt.Errorf("%w (it stated filter header %v at height %d, not the verified one, and left before stating the filter hashes leading to it, %s in a row: "+
				"no proof, as nothing it stated binds that header; its word is held against what it states once it is back)", f.Err, w.header, w.height, timesWord(w.left))
		}
		v.c.logf("peer %s left the verification before backing its filter header at height %d (%s in a row): its word is kept", m.Addr(), w.height, timesWord(w.left))
	}
	return err
}

// timesWord says n times in words.
func timesWord(n int) string {
	if n == 1 {
		return "once"
	}
	return fmt.Sprintf("%d times", n)
}

// holdWords keeps ws for the next verification (see takeLateWords), the
// newest maxHeldWords at most.
func (c *Client) holdWords(ws []headerWord) {
	c.lateWords.mu.Lock()
	defer c.lateWords.mu.Unlock()
	c.lateWords.ws = append(c.lateWords.ws, ws...)
	if n := len(c.lateWords.ws); n > maxHeldWords {
		c.lateWords.ws = slices.Clone(c.lateWords.ws[n-maxHeldWords:])
	}
}

// placeWords keeps, of the words held, those of the peers taking part,
// and holds again for a later verification those of the peers absent
// now (dropped, or gone for a while) that are still in the pool, unbanned:
// a peer that left after its word is held to it once back. A word of a
// peer taking part on a height verified already, that is not the
// verified header, has the heights from it asked again (see holdToWords),
// but at a checkpoint's height, which the checkpoints settle (see
// heldBelow, holdToCheckpoints). Words on blocks no longer in the chain
// are forgotten.
func (v *verification) placeWords() {
	var here []headerWord
	members := v.c.pool.Members()
	for _, w := range v.words {
		switch {
		case w.block != v.c.chain.Hash(w.height) || v.c.pool.Status(w.m).Banned || !slices.Contains(members, w.m):
		case !slices.Contains(v.ms, w.m):
			v.c.holdWords([]headerWord{w})
		default:
			here = append(here, w)
			if w.height%wire.CFCheckptInterval == 0 || w.height > v.c.verifiedTo {
				continue
			}
			if known := v.c.knownPrefix(w.height, w.height); len(known) == 1 && known[0] != w.header {
				v.c.giveUpVerified(w.height - 1)
			}
		}
	}
	v.words = here
}

// heldBelow reports whether a word held lies below height first: the
// first height a plan without the checkpoints would ask (see tipPlan),
// which could hold the word against nothing.
func (v *verification) heldBelow(first int32) bool {
	return slices.ContainsFunc(v.words, func(w headerWord) bool { return w.height < first })
}

// holdToCheckpoints bans each peer whose word on the filter header at a
// checkpoint's height is not the checkpoint it sent itself there, with
// both its answers as the proof.
func (v *verification) holdToCheckpoints() {
	banned := false
	for _, w := range v.words {
		i := int(w.height/wire.CFCheckptInterval) - 1
		cps := v.cps[w.m]
		if w.height%wire.CFCheckptInterval != 0 || i < 0 || i >= len(cps) || cps[i] == w.header || w.block != v.c.chain.Hash(w.height) {
			continue
		}
		v.c.pool.Ban(w.m, peerErr(w.m, "getcfcheckpt", fmt.Errorf(
			"%w: its checkpoint at height %d is filter header %v, where it stated %v before",
			peer.ErrBadFilterHeader, w.height, cps[i], w.header)))
		banned = true
	}
	if banned {
		v.keepLive()
	}
}
