package client

import (
	"slices"

	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/spvfilter/spvfilter/peer/pool"
)

// Above a conflict (see Conflict) the peers' chains of filter headers
// part: each side's headers rest on its own filter there. Nothing above
// it is stored or kept as verified, and the checkpoints from its segment
// on are not compared, so a verification planned from the checkpoints
// asks every peer for its own filter hashes from the conflict's segment
// on. Were every new block verified that way, a peer that no block can
// prove wrong would buy, with one undecidable filter, a download of the
// chain above it from every peer on every block.
//
// So the client keeps, for each peer, its own filter headers at the
// heights near the tip it stated last (ownWindow at most): up to the
// highest, the peer's filter hashes were compared height by height with
// the other peers', and differ from theirs only by filters the blocks
// could not decide between. It keeps too the verified filter headers
// from the lowest height a verification returned above a conflict
// (maxFollowed at most): the chain the scans check filters against. A
// verification near the tip (ownPlan) then asks each peer for the new
// filter hashes alone, from its own filter header at the lowest height
// every peer was compared up to, and compares them height by height, as
// ever. A peer whose filter header before them is not the one its own
// filter hashes stated before contradicts itself: both answers, about
// the same block, are the proof, and ban it. Nothing is trusted for
// being in a majority, first or ahead: a peer that has no own filter
// headers there yet (new, or back after long) has the verification
// planned from the checkpoints, once.
type ownHeaders struct {
	peers map[*pool.Member]map[int32]ownHeader
	// base is the height of chain[0]: the verified filter headers above
	// a conflict, base up to base+len(chain)-1.
	base  int32
	chain []chainhash.Hash
}

// ownHeader is a peer's own filter header at a height, of the block
// there.
type ownHeader struct {
	block  chainhash.Hash
	header chainhash.Hash
}

// tipWindow is the most filter headers above those verified already that
// every peer is asked for directly, without the checkpoints (see
// tipPlan): a client following the tip asks for one or a few.
const tipWindow = 100

// ownWindow is how many of a peer's own filter headers below the highest
// verified are kept: a verification that asks a peer from further below
// is planned from the checkpoints. maxFollowed bounds the verified
// filter headers kept above a conflict (about 3 MB): a conflict deeper
// below the tip has every verification planned from the checkpoints.
const (
	ownWindow   = tipWindow
	maxFollowed = 100_000
)

// note keeps m's own filter headers of start, start+1, ..., and forgets
// those of blocks that left the chain and those more than ownWindow below
// the highest kept.
func (o *ownHeaders) note(m *pool.Member, start int32, headers []chainhash.Hash, hashAt func(int32) chainhash.Hash) {
	if o.peers == nil {
		o.peers = map[*pool.Member]map[int32]ownHeader{}
	}
	w := o.peers[m]
	if w == nil {
		w = map[int32]ownHeader{}
		o.peers[m] = w
	}
	for i := max(0, len(headers)-ownWindow); i < len(headers); i++ {
		height := start + int32(i)
		w[height] = ownHeader{block: hashAt(height), header: headers[i]}
	}
	top := int32(-1)
	for height, e := range w {
		if e.block != hashAt(height) {
			delete(w, height)
		} else {
			top = max(top, height)
		}
	}
	for height := range w {
		if height <= top-ownWindow {
			delete(w, height)
		}
	}
}

// at returns m's own filter header at height, if kept and its block is
// still the chain's.
func (o *ownHeaders) at(m *pool.Member, height int32, hashAt func(int32) chainhash.Hash) (chainhash.Hash, bool) {
	e, ok := o.peers[m][height]
	if !ok || e.block != hashAt(height) {
		return chainhash.Hash{}, false
	}
	return e.header, true
}

// top returns the highest height m's own filter header is kept at, or -1.
func (o *ownHeaders) top(m *pool.Member, hashAt func(int32) chainhash.Hash) int32 {
	top := int32(-1)
	for height, e := range o.peers[m] {
		if height > top && e.block == hashAt(height) {
			top = height
		}
	}
	return top
}

// follow keeps the verified filter headers of start, start+1, ... above
// the first conflict (first): those of a verification that returned them.
// Those kept below or above them stay if they join them (they hold the
// same header where they meet), and are dropped otherwise: above a
// conflict, a verification may return another side's filter headers.
// Without a conflict it keeps none.
func (o *ownHeaders) follow(first, start int32, headers []chainhash.Hash) {
	if first < 0 {
		o.chain = nil
		return
	}
	if start < 0 {
		headers, start = headers[min(-start, int32(len(headers))):], 0
	}
	if len(headers) == 0 {
		return
	}
	last := start + int32(len(headers)) - 1
	end := o.base + int32(len(o.chain)) - 1 // the highest kept
	below := len(o.chain) > 0 && o.base <= start && start <= end && o.chain[start-o.base] == headers[0]
	above := len(o.chain) > 0 && o.base <= last && last < end && o.chain[last-o.base] == headers[len(headers)-1]
	switch {
	case below && !above:
		o.chain = append(o.chain[:start-o.base], headers...)
	case below:
		// Inside what is kept, and the same.
	case above:
		o.chain = slices.Concat(headers, o.chain[last-o.base+1:])
		o.base = start
	default:
		o.base, o.chain = start, slices.Clone(headers)
	}
	if n := len(o.chain); n > maxFollowed {
		o.chain = slices.Clone(o.chain[n-maxFollowed:])
		o.base += int32(n - maxFollowed)
	}
}

// followed returns the verified filter headers kept of from..to, if all
// are.
func (o *ownHeaders) followed(from, to int32) ([]chainhash.Hash, bool) {
	if from < o.base || to >= o.base+int32(len(o.chain)) || from > to {
		return nil, false
	}
	return o.chain[from-o.base : to-o.base+1], true
}

// dropAbove forgets what is kept above height h: it is verified again.
func (o *ownHeaders) dropAbove(h int32) {
	for _, w := range o.peers {
		for height := range w {
			if height > h {
				delete(w, height)
			}
		}
	}
	if h < o.base {
		o.chain = nil
	} else if n := h - o.base + 1; n < int32(len(o.chain)) {
		o.chain = o.chain[:n]
	}
}

// keepOnly forgets the own filter headers of the peers other than ms.
func (o *ownHeaders) keepOnly(ms []*pool.Member) {
	for m := range o.peers {
		found := false
		for _, k := range ms {
			found = found || k == m
		}
		if !found {
			delete(o.peers, m)
		}
	}
}
