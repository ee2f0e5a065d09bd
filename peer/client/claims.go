package client

import (
	"fmt"
	"slices"

	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/spvfilter/spvfilter/peer/pool"
)

// hashGroup is the peers that state one filter hash at a disputed height, with
// the one asked for the filter.
type hashGroup struct {
	members []*pool.Member
	rep     *pool.Member
	hash    chainhash.Hash
}

// claim is what a group of peers that agree states about a segment: the
// filter hashes from its start.
type claim struct {
	members []*pool.Member
	hashes  []chainhash.Hash
}

// firstSplit returns the first height, from start, at which the claims
// that reach it state different filter hashes, with the claims grouped by
// the hash they state there; -1 if they agree wherever they overlap. A
// height where they differ only as settled says (by filters the block
// could not decide between) is passed over.
func firstSplit(start int32, claims []claim, settled func(int32, []hashGroup) bool) (int32, []hashGroup) {
	for i := 0; ; i++ {
		var gs []hashGroup
		for _, cl := range claims {
			if len(cl.hashes) <= i {
				continue
			}
			j := slices.IndexFunc(gs, func(g hashGroup) bool { return g.hash == cl.hashes[i] })
			if j < 0 {
				gs = append(gs, hashGroup{rep: cl.members[0], hash: cl.hashes[i]})
				j = len(gs) - 1
			}
			gs[j].members = append(gs[j].members, cl.members...)
		}
		switch h := start + int32(i); {
		case len(gs) == 0:
			return -1, nil
		case len(gs) > 1 && !settled(h, gs):
			return h, gs
		}
	}
}

// agreedHashes joins the claims of a segment, which agree wherever they
// overlap (but where the block could not decide between their filters:
// the first claim's is taken), into its filter hashes start..end.
func agreedHashes(start, end int32, claims []claim) ([]chainhash.Hash, error) {
	out := make([]chainhash.Hash, 0, end-start+1)
	for i := 0; i < int(end-start)+1; i++ {
		j := slices.IndexFunc(claims, func(cl claim) bool { return len(cl.hashes) > i })
		if j < 0 {
			return nil, fmt.Errorf("client: %w: no peer serves the compact filter headers of heights %d..%d", ErrNoPeers, start+int32(i), end)
		}
		out = append(out, claims[j].hashes[i])
	}
	return out, nil
}
