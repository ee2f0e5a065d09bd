package neutrinobench

import (
	"context"
	"errors"
	"net"

	"github.com/btcsuite/btcd/chaincfg"
	"github.com/btcsuite/btcd/chaincfg/chainhash"
	spv "github.com/spvfilter/spvfilter/peer/client"
)

// scanSpvfilter is every use of spvfilter's client in the benchmarks: it
// connects to every address, syncs the headers and scans heights from..to
// (to < 0: the synced tip) with BIP 157 filters for watch, cross-checking
// the peers' filter headers and spreading the filter downloads over them,
// and returns the matched transactions; the caller then releases the
// connections (ScanStats.Release).
func scanSpvfilter(ctx context.Context, addrs []string, params *chaincfg.Params, watch [][]byte, from, to int32) (_ *ScanStats, err error) {
	return scanSpvfilterWrapped(ctx, addrs, params, watch, from, to, nil)
}

// scanSpvfilterWrapped is scanSpvfilter with each connection, if wrap is
// not nil, wrapped by it (to trace what it carries, say).
func scanSpvfilterWrapped(ctx context.Context, addrs []string, params *chaincfg.Params, watch [][]byte, from, to int32,
	wrap func(net.Conn) net.Conn) (_ *ScanStats, err error) {
	return scanSpvfilterVia(ctx, addrs, nil, params, watch, from, to, wrap)
}

// scanSpvfilterVia is scanSpvfilterWrapped with the client given the
// names addrs, each dialled at target[name] when target holds it.
func scanSpvfilterVia(ctx context.Context, addrs []string, target map[string]string, params *chaincfg.Params, watch [][]byte, from, to int32,
	wrap func(net.Conn) net.Conn) (_ *ScanStats, err error) {
	// Only addrs, as neutrino's ConnectPeers, and the bytes read counted
	// by message as neutrino's are (see msgCounter).
	received := newMsgCounter()
	dial := func(ctx context.Context, network, addr string) (net.Conn, error) {
		if a, ok := target[addr]; ok {
			addr = a
		}
		c, err := received.dial(ctx, network, addr)
		if err != nil || wrap == nil {
			return c, err
		}
		return wrap(c), nil
	}
	c, err := spv.Connect(ctx, spv.Config{Peers: addrs, Params: params, ConnectOnly: true, Dialer: dial})
	if err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			c.Close()
		}
	}()
	if _, err := c.SyncHeaders(ctx); err != nil {
		return nil, err
	}
	tip := c.Chain().Height()
	if to < 0 {
		to = tip
	}
	items := make([]spv.WatchItem, len(watch))
	for i, s := range watch {
		items[i] = spv.ScriptItem(s)
	}
	res, err := c.ScanBIP157(ctx, spv.ScanRequest{Watch: items, From: from, To: to})
	if err != nil {
		return nil, err
	}
	st := &ScanStats{
		Matched:       make(map[chainhash.Hash]bool, len(res.Matches)),
		Tip:           tip,
		BlocksFetched: res.BlocksFetched,
		BytesReceived: res.BytesReceived,
		ByCommand:     received.ByCommand(),
		release:       func() { c.Close() },
	}
	for _, m := range res.Matches {
		if m.FalsePositive {
			return nil, errors.New("spvfilter scan: a BIP 157 match marked false positive")
		}
		st.Matched[m.Txid] = true
	}
	return st, nil
}
