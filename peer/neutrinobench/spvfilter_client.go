package neutrinobench

import (
	"context"
	"errors"
	"fmt"

	"github.com/btcsuite/btcd/chaincfg"
	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/spvfilter/spvfilter/peer"
)

// errOnePeer is the refusal of a scan over several peers.
var errOnePeer = errors.New("the client scans with exactly one peer")

// scanSpvfilter is every use of spvfilter's client in the benchmarks: it
// connects, syncs the headers and scans heights from..to (to < 0: the
// synced tip) with BIP 157 filters for watch, returning the matched
// transactions; the caller then releases the connection
// (ScanStats.Release). Today's client talks to one peer, so it refuses
// more than one address rather than quietly measuring one.
func scanSpvfilter(ctx context.Context, addrs []string, params *chaincfg.Params, watch [][]byte, from, to int32) (_ *ScanStats, err error) {
	if len(addrs) != 1 {
		return nil, fmt.Errorf("spvfilter scan: %d peers given: %w", len(addrs), errOnePeer)
	}
	p, err := peer.Dial(ctx, peer.Config{Addr: addrs[0], Params: params})
	if err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			p.Close()
		}
	}()
	chain, err := p.SyncHeaders(ctx)
	if err != nil {
		return nil, err
	}
	if to < 0 {
		to = chain.Height()
	}
	res, err := p.ScanBIP157(ctx, chain, watch, from, to, nil)
	if err != nil {
		return nil, err
	}
	st := &ScanStats{
		Matched:       make(map[chainhash.Hash]bool, len(res.Matches)),
		Tip:           chain.Height(),
		BlocksFetched: res.BlocksFetched,
		BytesReceived: p.BytesReceived(),
		release:       func() { p.Close() },
	}
	for _, m := range res.Matches {
		if m.FalsePositive {
			return nil, errors.New("spvfilter scan: a BIP 157 match marked false positive")
		}
		st.Matched[m.Txid] = true
	}
	return st, nil
}
