package client

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/btcsuite/btcd/wire"
	"github.com/spvfilter/spvfilter/gcs"
	"github.com/spvfilter/spvfilter/peer"
	"github.com/spvfilter/spvfilter/peer/pool"
)

// ScanRequest says what a scan looks for and where.
type ScanRequest struct {
	// Watch is the watch list; Match.WatchItems index into it.
	Watch []WatchItem
	// From and To bound the heights scanned, inclusive. A negative To
	// means the highest height a connected peer holds (which may be below
	// the chain's tip: see ScanResult.To).
	From, To int32
	// Progress, if not nil, is called as blocks are done.
	Progress func(done, total int)

	// withHeaders keeps the headers of the blocks scanned in the result
	// (for a rescan, which reports them after the scan returns).
	withHeaders bool
}

// maxAttempts bounds the restarts of a scan after a reorganization or a
// failed peer.
const maxAttempts = 8

// ScanBIP157 scans the blocks req.From..req.To with BIP 157 basic compact
// filters, as the package documentation describes. Before it starts and
// whenever a request fails, it syncs the headers of every peer: if the
// chain has reorganized, the scan starts again on the new chain, the
// blocks that left it are listed in ScanResult.Disconnected, and the
// failed peer is not blamed; otherwise a peer that lied is banned, one that
// stalled or disconnected is dropped, and the scan goes on with the others.
//
// A spend is found when it spends an output found earlier in the scan or a
// watched outpoint, or shows the key or script of a watched P2PKH,
// P2WPKH, P2SH or P2WSH output, or the leaf script and control block of
// a P2TR script-path spend; a block whose filter matched only through an
// output it spends without showing its script (a P2TR key-path, P2PK or
// bare multisig spend) is listed in SpendOnlyBlocks, never counted as a
// false positive.
func (c *Client) ScanBIP157(ctx context.Context, req ScanRequest) (*ScanResult, error) {
	wl := newWatchList(req.Watch)
	return c.scan(ctx, req, "bip157", wire.SFNodeCF, func(ctx context.Context, log *scanLog, req ScanRequest) (*ScanResult, error) {
		return c.scanBIP157(ctx, log, req, wl)
	})
}

// scan runs pass until it succeeds, checking for a reorganization after
// every failure before blaming the peer, as ScanBIP157 describes.
func (c *Client) scan(ctx context.Context, req ScanRequest, mode string, service wire.ServiceFlag,
	pass func(context.Context, *scanLog, ScanRequest) (*ScanResult, error)) (*ScanResult, error) {
	c.opMu.Lock()
	defer c.opMu.Unlock()
	startBytes := c.pool.BytesReceived()
	log := newScanLog()
	want := req
	// With the service running, the chain and the peers' tips are kept
	// current by it, and a reorganization during the scan is seen by the
	// next operation (a rescan reports it): the scan does not sync the
	// headers itself, but after a failure.
	withService := c.started()
	for attempt := 0; ; attempt++ {
		if !withService || attempt > 0 {
			if _, err := c.syncHeaders(ctx, log); err != nil {
				return nil, err
			}
		}
		req, err := c.scanRange(log, want, service)
		if err != nil {
			return nil, err
		}
		res, err := pass(ctx, log, req)
		if err == nil {
			// Blocks scanned may have left the chain meanwhile: a node
			// still serves a block it disconnected.
			if !withService {
				up, err := c.syncHeaders(ctx, log)
				if err != nil {
					return nil, err
				}
				if up.Reorganized() && up.Fork < req.To && attempt < maxAttempts {
					c.logf("chain reorganized at height %d during the scan: starting again", up.Fork)
					continue
				}
			}
			res.BytesReceived = c.pool.BytesReceived() - startBytes
			// The headers of the blocks scanned, as the chain held them:
			// it may change as soon as the scan returns.
			if req.withHeaders {
				if res.headers, err = c.chain.Headers(req.From, req.To); err != nil {
					return nil, fmt.Errorf("client: the chain state: %w", err)
				}
			}
			c.finish(res, log, mode)
			return res, nil
		}
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		if want.To < 0 && errors.Is(err, ErrNoPeers) && c.bestHeld(service) < req.To && attempt < maxAttempts {
			// The peers that held the top of the range were banned or
			// dropped: scan up to what those left hold.
			continue
		}
		var f *pool.Failure
		if !errors.As(err, &f) {
			return nil, err
		}
		if serr := c.chain.Err(); serr != nil {
			return nil, fmt.Errorf("client: the chain state: %w", serr)
		}
		// A reorganization explains stalls, notfound and changed filter
		// headers from an honest node: check before blaming, on a new
		// connection if the failed request dropped the old one.
		if !isLie(f.Err) {
			if err := c.pool.Redial(ctx, f.Member); err != nil {
				c.logf("redialing %s: %v", f.Member.Addr(), err)
			}
		}
		up, serr := c.syncHeaders(ctx, log)
		if serr == nil && up.Reorganized() && up.Fork < req.To && attempt < maxAttempts {
			c.logf("chain reorganized at height %d during the scan: starting again", up.Fork)
			continue
		}
		c.blame(f.Member, f.Err)
		if attempt >= maxAttempts || len(c.pool.Serving(service)) == 0 {
			return nil, f.Err
		}
	}
}

// scanBIP157 runs one pass of the scan over the current chain.
// wl carries the outpoints found before, by earlier passes or scans.
func (c *Client) scanBIP157(ctx context.Context, log *scanLog, req ScanRequest, wl *watchList) (*ScanResult, error) {
	from, to := req.From, req.To
	// btcd v0.24.2 crashes on cfilter requests when it runs without
	// them: peers without the service are never asked.
	ms := c.pool.Serving(wire.SFNodeCF)
	if len(ms) == 0 {
		return nil, fmt.Errorf("client: %w: no peer offers compact filters (NODE_COMPACT_FILTERS)", ErrNoPeers)
	}
	log.startPass()
	headers, ms, err := c.filterHeaders(ctx, log, ms, from, to)
	if err != nil {
		return nil, err
	}
	res := &ScanResult{From: from, To: to, Matches: []Match{}, BlocksScanned: int(to-from) + 1}
	scripts := Scripts(req.Watch)
	matched, received, err := c.matchFilters(ctx, ms, scripts, headers, from, to, req.Progress)
	if err != nil {
		return nil, err
	}
	res.FiltersReceived = received
	// Where the peers (or the store and the peers) disagree and the block
	// cannot decide, the block is scanned whole: what it holds is found
	// whichever side is right.
	res.Conflicts = append(c.conflictsIn(from, to), c.takeStoreConflicts(from, to)...)
	forced := map[int32]bool{}
	for _, k := range res.Conflicts {
		if !slices.Contains(matched, k.Height) {
			matched = append(matched, k.Height)
			forced[k.Height] = true
		}
	}
	slices.Sort(matched)
	blocks, err := c.fetchBlocks(ctx, matched)
	if err != nil {
		return nil, err
	}
	for i, b := range blocks {
		h := matched[i]
		res.BlocksFetched++
		found, pays := false, false
		for _, tx := range b.Transactions {
			if items := wl.involve(tx); len(items) > 0 {
				found = true
				res.Matches = append(res.Matches, Match{
					Txid: tx.TxHash(), Tx: tx, Height: h, BlockHash: c.chain.Hash(h), WatchItems: items,
				})
			}
			pays = pays || wl.pays(tx)
		}
		switch {
		case found, forced[h]:
		case len(scripts) > 0 && !pays && spendsUnrevealed(b):
			// The filter holds a watched script no output pays: an input
			// spends it without revealing it.
			res.SpendOnlyBlocks = append(res.SpendOnlyBlocks, h)
		default:
			res.FalsePositiveBlocks++
		}
	}
	for _, k := range res.Conflicts {
		res.Warnings = append(res.Warnings, k.String())
	}
	if len(res.SpendOnlyBlocks) > 0 {
		res.Warnings = append(res.Warnings, fmt.Sprintf(
			"%d block(s) matched a watched script only through an output they spend without revealing its script (P2TR or P2PK), at heights %v: watch the outpoint (TXID:VOUT) to identify the transaction",
			len(res.SpendOnlyBlocks), res.SpendOnlyBlocks))
	}
	for i, it := range req.Watch {
		if it.IsOutPoint && len(it.Script) == 0 {
			res.Warnings = append(res.Warnings, fmt.Sprintf(
				"watch item %d (outpoint %v) has no script: BIP 158 filters hold scripts, not outpoints, so its spend is found only if its block is fetched for another item; give the script it pays (TXID:VOUT:ADDRESS)", i, it.OutPoint))
		}
	}
	return res, nil
}

// spendsUnrevealed reports whether some input of the block spends without
// revealing the script it spends (so that a filter may hold a watched
// script no output pays).
func spendsUnrevealed(b *wire.MsgBlock) bool {
	for _, tx := range b.Transactions[1:] {
		for _, in := range tx.TxIn {
			if typ, _ := gcs.SpendCandidates(in); !typ.Reveals() {
				return true
			}
		}
	}
	return false
}

// fetchBlocks downloads the blocks at heights, each request from a peer
// chosen at random among those that serve them, and returns them in the
// order of heights.
func (c *Client) fetchBlocks(ctx context.Context, heights []int32) ([]*wire.MsgBlock, error) {
	out := make([]*wire.MsgBlock, 0, len(heights))
	for start := 0; start < len(heights); start += peer.MaxBlocksPerRequest {
		batch := heights[start:min(start+peer.MaxBlocksPerRequest, len(heights))]
		ms := c.reaching(wire.SFNodeWitness, batch[len(batch)-1])
		if len(ms) == 0 {
			return nil, c.noPeers("getdata block")
		}
		m := c.pool.PickFast(ms)
		hashes := make([]chainhash.Hash, len(batch))
		for i, h := range batch {
			hashes[i] = c.chain.Hash(h)
		}
		err := c.pool.Conn(m).GetBlocks(ctx, hashes, func(_ int, b *wire.MsgBlock) error {
			out = append(out, b)
			return nil
		})
		if err != nil {
			return nil, &pool.Failure{Member: m, Err: err}
		}
	}
	return out, nil
}

// scanRange resolves req's range on the chain as it is now: a negative To
// becomes the highest height a live peer offering service holds, and an
// explicit To must be held by one.
func (c *Client) scanRange(log *scanLog, req ScanRequest, service wire.ServiceFlag) (ScanRequest, error) {
	if len(c.pool.Serving(service)) == 0 {
		return req, fmt.Errorf("client: %w: no peer offers %s", ErrNoPeers, serviceName(service))
	}
	best := c.bestHeld(service)
	if req.To < 0 {
		req.To = best
		if best < c.chain.Height() {
			log.note(fmt.Sprintf("the chain's tip %d is held by no connected peer (it came from the data directory or a peer no longer used): scanned to %d",
				c.chain.Height(), best))
		}
	}
	if err := c.chain.CheckRange(req.From, req.To); err != nil {
		return req, fmt.Errorf("client: %w", err)
	}
	if req.To > best {
		return req, fmt.Errorf("client: %w: no connected peer holds the chain up to height %d (the highest one holds %d)", ErrNoPeers, req.To, best)
	}
	return req, nil
}

// serviceName names the service a scan needs.
func serviceName(service wire.ServiceFlag) string {
	switch service {
	case wire.SFNodeCF:
		return "compact filters (NODE_COMPACT_FILTERS)"
	case wire.SFNodeBloom:
		return "BIP 37 filtering (NODE_BLOOM)"
	}
	return service.String()
}

// bestHeld returns the highest height of the chain a live peer offering
// service holds, or -1.
func (c *Client) bestHeld(service wire.ServiceFlag) int32 {
	best := int32(-1)
	for _, m := range c.pool.Serving(service) {
		best = max(best, c.reachOf(m, c.chain.Height()))
	}
	return best
}

// finish fills in what every scan result says about its peers and the
// chain. Called with opMu held.
func (c *Client) finish(res *ScanResult, log *scanLog, mode string) {
	c.takeStoreNotes()
	res.Warnings = append(res.Warnings, c.notes...)
	res.Warnings = append(res.Warnings, log.notes...)
	res.Disconnected = append([]chainhash.Hash{}, c.disconnected...)
	res.Warnings = append(res.Warnings, c.forks...)
	res.Warnings = append(res.Warnings, c.pool.TakeNotes()...)
	c.disconnected, c.forks = nil, nil
	c.views.setCompared(log.compared)
	res.Peers = c.peerStatus(func(m *pool.Member) bool { return log.compared[m] })
	compared := 0
	for _, st := range res.Peers {
		if st.Compared {
			compared++
		}
	}
	// BIP 37 filters at one peer however many there are; its pass says
	// which.
	if mode != "bip37" {
		// Heights only one of several peers held are named; a single
		// peer's whole result rests on it.
		// (within the range: a verification may have compared heights
		// below it again).
		for _, o := range log.oneVoice {
			o.From, o.To = max(o.From, res.From), min(o.To, res.To)
			if o.From <= o.To {
				res.OnePeer = append(res.OnePeer, o)
				res.Warnings = append(res.Warnings, o.String())
			}
		}
		if compared <= 1 && len(res.OnePeer) == 0 {
			res.Warnings = append(res.Warnings, fmt.Sprintf(
				"the %s result rests on one peer: nothing it said was cross-checked with another peer (give several peers)", mode))
		}
	}
	for _, st := range res.Peers {
		switch {
		case st.Banned:
			res.Warnings = append(res.Warnings, fmt.Sprintf("peer %s was banned: %s", st.Address, st.Reason))
		case st.Reason != "" && st.Reason != "connecting":
			res.Warnings = append(res.Warnings, fmt.Sprintf("peer %s was not used: %s", st.Address, st.Reason))
		case st.Branch != nil:
			res.Warnings = append(res.Warnings, fmt.Sprintf("peer %s is on another branch: it leaves the chain after height %d for its own tip %v at height %d",
				st.Address, st.Branch.Fork, st.Branch.Hash, st.Branch.Height))
		}
	}
}

func (c *Client) logf(format string, args ...any) {
	if c.cfg.Log != nil {
		fmt.Fprintf(c.cfg.Log, format+"\n", args...)
	}
}

// FetchBlocks downloads the blocks from..to of the chain, each request
// from a peer chosen at random, checks each against its header, and calls
// fn for each in height order. An error from fn stops the download and is
// returned as is.
func (c *Client) FetchBlocks(ctx context.Context, from, to int32, fn func(height int32, b *wire.MsgBlock) error) error {
	c.opMu.Lock()
	defer c.opMu.Unlock()
	if err := c.chain.CheckRange(from, to); err != nil {
		return fmt.Errorf("client: %w", err)
	}
	for start := from; start <= to; start += peer.MaxBlocksPerRequest {
		var heights []int32
		for h := start; h <= min(to, start+peer.MaxBlocksPerRequest-1); h++ {
			heights = append(heights, h)
		}
		blocks, err := c.fetchBlocks(ctx, heights)
		if err != nil {
			var f *pool.Failure
			if errors.As(err, &f) {
				c.blame(f.Member, f.Err)
				return f.Err
			}
			return err
		}
		for i, b := range blocks {
			if err := fn(heights[i], b); err != nil {
				return err
			}
		}
	}
	return nil
}
