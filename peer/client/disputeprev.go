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
// the peer false only if the peer was bound to the verified one. Up to
// the chain's last checkpoint height it was: every peer's checkpoints
// were compared, and an agreed checkpoint binds the headers below it (so
// a liar cannot have the heights there disputed without end). Above, the
// verified header may have been agreed without the peer: by others while
// it was away or a block behind, and kept since. There the header is
// disputed, not blamed: the heights from the last checkpoint are
// verified again with every peer, from the agreed checkpoint's header,
// and the blocks settle where they differ (see settleAt). The peer's
// word is held against what it states then: hashes that do not lead to
// the header it stated are its own contradiction, and ban it.

// prevHeaderError is a peer's filter header before the heights it was
// asked for that is not the verified one (see cfHeaders).
type prevHeaderError struct {
	word headerWord
	msg  string
}

func (e *prevHeaderError) Error() string { return e.msg }

// Unwrap makes the error a peer.ErrBadFilterHeader unless the header is
// disputed (see disputedPrev).
func (e *prevHeaderError) Unwrap() error { return peer.ErrBadFilterHeader }

// headerWord is a peer's word on the filter header at one height, of
// the block there.
type headerWord struct {
	m      *pool.Member
	height int32
	block  chainhash.Hash
	header chainhash.Hash
	// left counts the verifications in a row the peer left before
	// stating the filter hashes leading to it (see keepLeftWords).
	left int
}

// noteLateWord keeps m's word on the filter header at height, or its
// filter header before it (err), when it differs from the verified one
// (see lateAgree): the heights are verified again, m's word held against
// them (see holdToWords). Called with opMu held.
func (c *Client) noteLateWord(m *pool.Member, height int32, prev chainhash.Hash, hashes []chainhash.Hash, err error) {
	var pe *prevHeaderError
	switch {
	case errors.As(err, &pe):
		c.lateWords = append(c.lateWords, pe.word)
	case err == nil && len(hashes) == 1:
		c.lateWords = append(c.lateWords, headerWord{m: m, height: height, block: c.chain.Hash(height), header: chainHeaders(prev, hashes)})
	}
}

// takeLateWords returns the late words noted and forgets them. Called
// with opMu held.
func (c *Client) takeLateWords() []headerWord {
	out := c.lateWords
	c.lateWords = nil
	return out
}

// disputedPrev returns the word of the peer whose failure err, asked for
// segment j from from, is a filter header before from that differs from
// the verified one above the chain's last checkpoint height: a dispute,
// not a proof. (Where the peers' checkpoints part, from cpLimit on, each
// is asked from its own header, and a peer stating another contradicts
// itself.)
func (v *verification) disputedPrev(err error, j int, from int32) (headerWord, bool) {
	var pe *prevHeaderError
	if j >= v.cpLimit || !errors.As(err, &pe) {
		return headerWord{}, false
	}
	lastCheckpoint := v.c.chain.Height() / wire.CFCheckptInterval * wire.CFCheckptInterval
	if pe.word.height != from-1 || pe.word.height <= lastCheckpoint {
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
// m's filter header before from that differs from the verified one up to
// the chain's last checkpoint height, where m's own checkpoints do not
// bind that header: the peers that agreed on it may have done so without
// m (a tip plan compares none). The filter headers verified are given up,
// so that the verification asked again compares every peer's
// checkpoints and the block settles where they part. Nil where err is
// no such failure.
func (v *verification) unboundPrev(err error, j int, from int32) error {
	var pe *prevHeaderError
	if !errors.As(err, &pe) || from == 0 {
		return nil
	}
	stated := len(v.cps[pe.word.m])
	if j < v.cpLimit && (stated > j || from == segmentFirst(j) && stated >= j) {
		return nil // its own checkpoint binds the header: a proof
	}
	v.c.giveUpVerified(-1)
	return &pool.Failure{Member: pe.word.m, Err: peerErr(pe.word.m, "getcfheaders", fmt.Errorf("%w: at height %d (%s): no proof, as it stated no checkpoint binding it; verified again from the checkpoints",
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
		v.c.lateWords = append(v.c.lateWords, w)
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
