package client

import (
	"fmt"
	"strings"

	"github.com/btcsuite/btcd/wire"
	"github.com/spvfilter/spvfilter/bip37"
	"github.com/spvfilter/spvfilter/peer"
)

// BIP37Peer is what one peer received from a BIP 37 scan and sent back.
// A peer keeps what it saw whether or not its pass ended the scan: every
// filter it got can be intersected with the others, and an outpoint sent
// in clear names an output of the watch list.
type BIP37Peer struct {
	Address string
	// Filters are the filters loaded into the peer (filterload), as
	// sent, in order: the first of each pass and every reload.
	Filters []*bip37.Filter
	// Added are the outpoints sent with filteradd (update rules other
	// than BloomUpdateAll): each is an output paying a watch item, and
	// AddedItems are the indexes, into the watch list, of the items
	// they pay, which the peer can name with certainty.
	Added      []wire.OutPoint
	AddedItems []int
	// MerkleBlocks counts the merkle blocks the peer sent, and Txs the
	// transactions it sent as matches, false positives and blocks asked
	// for again included; FalsePositiveTxs are those of Txs that involve
	// no watch item. A connection that failed mid-answer counts the
	// blocks read whole before the failure: the peer may have sent more.
	MerkleBlocks, Txs, FalsePositiveTxs int
	// Abandoned is set when a pass filtering at the peer did not end the
	// scan (the peer failed, stalled or lied, or the chain reorganized):
	// the scan went on elsewhere or started again.
	Abandoned bool
}

// bip37Peers records, across the passes of one BIP 37 scan, what each
// peer received.
type bip37Peers struct {
	order []*BIP37Peer
	by    map[string]*BIP37Peer
	// current is the peer of the pass under way.
	current *BIP37Peer
}

// start begins a pass at addr: the pass before it, if any, did not end
// the scan.
func (r *bip37Peers) start(addr string) *BIP37Peer {
	if r.current != nil {
		r.current.Abandoned = true
	}
	if r.by == nil {
		r.by = map[string]*BIP37Peer{}
	}
	p, ok := r.by[addr]
	if !ok {
		p = &BIP37Peer{Address: addr, Filters: []*bip37.Filter{}}
		r.by[addr] = p
		r.order = append(r.order, p)
	}
	r.current = p
	return p
}

// loaded records a filter sent to the peer.
func (p *BIP37Peer) loaded(f *bip37.Filter) { p.Filters = append(p.Filters, f.Clone()) }

// added records an outpoint paying the watch items items sent in clear.
func (p *BIP37Peer) added(op wire.OutPoint, items []int) {
	p.Added = append(p.Added, op)
	p.AddedItems = add(p.AddedItems, items)
}

// received counts a batch of merkle blocks the peer sent.
func (p *BIP37Peer) received(blocks []peer.FilteredBlock) {
	p.MerkleBlocks += len(blocks)
	for _, b := range blocks {
		p.Txs += len(b.Txs)
	}
}

// peers returns every peer that received a filter, in the order they
// were first asked.
func (r *bip37Peers) peers() []BIP37Peer {
	out := make([]BIP37Peer, 0, len(r.order))
	for _, p := range r.order {
		out = append(out, *p)
	}
	return out
}

// BIP37ScanError is a BIP 37 scan that failed, or was cancelled, after
// loading filters into peers: they keep what they received (Peers, every
// pass abandoned). It wraps the scan's error.
type BIP37ScanError struct {
	Err   error
	Peers []BIP37Peer
}

func (e *BIP37ScanError) Error() string {
	addrs := make([]string, len(e.Peers))
	for i, p := range e.Peers {
		addrs[i] = p.Address
	}
	return fmt.Sprintf("%v (BIP 37 filters were loaded into %s, which keep them)", e.Err, strings.Join(addrs, ", "))
}

// Unwrap returns the scan's error.
func (e *BIP37ScanError) Unwrap() error { return e.Err }

// failed wraps err, the scan's, with what the peers received, if any
// received a filter.
func (r *bip37Peers) failed(err error) error {
	if r.current == nil {
		return err
	}
	r.current.Abandoned = true
	return &BIP37ScanError{Err: err, Peers: r.peers()}
}
