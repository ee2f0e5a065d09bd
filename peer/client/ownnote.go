package client

import (
	"errors"
	"fmt"

	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/spvfilter/spvfilter/peer"
	"github.com/spvfilter/spvfilter/peer/pool"
)

// noteOwn keeps the own filter headers each peer's claim on start..
// states (see ownHeaders), once the claims agree: from prev, or from the
// peer's own filter header before start where the peers' headers part
// (open).
func (v *verification) noteOwn(start int32, prev chainhash.Hash, open bool, claims []claim) {
	for _, cl := range claims {
		if start+int32(len(cl.hashes))-1 <= v.to-ownWindow {
			continue
		}
		for _, m := range cl.members {
			p := prev
			if open {
				p = v.prevOf(m, prev)
			}
			v.c.owns.note(m, start, headersFrom(p, cl.hashes), v.c.chain.Hash)
		}
	}
}

// ownContradiction returns, in place of err, the proof that m
// contradicts itself when err is its filter header before the heights
// asked that is not own, the one its own filter hashes stated before.
func ownContradiction(m *pool.Member, own chainhash.Hash, err error) error {
	var pe *prevHeaderError
	if !errors.As(err, &pe) {
		return err
	}
	return peerErr(m, "getcfheaders", fmt.Errorf("%w: it states filter header %v at height %d (block %v), where it stated %v before, by its own filter hashes",
		peer.ErrBadFilterHeader, pe.word.header, pe.word.height, pe.word.block, own))
}

// contradictsOwn returns the failure of the peer whose filter header
// before the heights asked (err, see cfHeaders) is not its own filter
// header kept there, of the same block (see ownHeaders): its own
// contradiction, a proof, where the header it states would otherwise
// only be disputed (see disputedPrev, unboundPrev). Nil otherwise.
func (v *verification) contradictsOwn(err error) error {
	var pe *prevHeaderError
	if !errors.As(err, &pe) {
		return nil
	}
	m, w := pe.word.m, pe.word
	own, ok := v.c.owns.at(m, w.height, v.c.chain.Hash)
	if !ok || own == w.header || w.block != v.c.chain.Hash(w.height) {
		return nil
	}
	return &pool.Failure{Member: m, Err: ownContradiction(m, own, err)}
}
