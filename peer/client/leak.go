package client

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"

	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/btcsuite/btcd/wire"
	"github.com/spvfilter/spvfilter/gcs"
	"github.com/spvfilter/spvfilter/peer/cover"
	"github.com/spvfilter/spvfilter/peer/pool"
	"github.com/spvfilter/spvfilter/privacy/leak"
)

// A BIP 157 scan's result says what the peers could conclude about its
// watch list from everything the ledger (ledger.go) says they were
// asked, since the client connected and, with a data directory, in
// earlier runs: leak.Compute, the block-download attack per peer and all
// of them colluding, labelled by the client's knowledge of its own
// scripts. Its inputs are the ledger's views, the blocks fetched (those
// of the scan, those GetBlock keeps, and those of earlier scans or runs
// asked again of a live peer that was asked for them before, which
// learns nothing new) and the verified filters the cache still holds.

// leakSeed draws the sample of scripts seen once (leak.Input.Seed): one
// for every report, so that a report is the same for the same ledger.
const leakSeed = 1

// leakOf computes the scan's leak (see above) for the scripts of the
// watch items; each script's WatchItem is the index of the first item
// that watches it, as Match.WatchItems counts. It returns the reason
// when it cannot.
//
// With covers (Config.PrivacyTarget), they are the client's own but not
// the wallet's (leak.Input.Covers), and when covers held the target in
// the scan (met), the attack is the cover-aware one (leak.Input.Target);
// the chance groups per class the collusion shows are kept in the cover
// file (cover.Set.SetChance), for leak.Need at the next scan.
func (c *Client) leakOf(ctx context.Context, log *scanLog, items []WatchItem, met bool) (*leak.Leak, error) {
	var watched [][]byte
	var itemOf []int
	seen := map[string]bool{}
	for i, it := range items {
		if len(it.Script) > 0 && !seen[string(it.Script)] {
			seen[string(it.Script)] = true
			watched, itemOf = append(watched, it.Script), append(itemOf, i)
		}
	}
	var views []leak.View
	var incomplete []string
	fetched := map[int32]bool{}
	for _, v := range c.ledger.views(c.chain) {
		if len(v.filters) == 0 && len(v.fetched) == 0 {
			continue // asked for filter headers only: every client does
		}
		lv := leak.View{ID: v.addr, Fetched: v.fetched, Unknown: v.unknown}
		for _, r := range v.filters {
			lv.Scanned = append(lv.Scanned, leak.HeightRange{From: r.from, To: min(r.to, c.chain.Height())})
		}
		for _, h := range v.fetched {
			fetched[h] = true
		}
		if v.incomplete {
			incomplete = append(incomplete, v.addr)
		}
		views = append(views, lv)
	}
	blocks, err := c.leakBlocks(ctx, log, slices.Sorted(maps.Keys(fetched)))
	if err != nil {
		return nil, err
	}
	in := leak.Input{Params: c.cfg.Params, Views: views, Tip: c.chain.Height(), Watched: watched, Seed: leakSeed,
		Blocks: func(h int32) (*wire.MsgBlock, bool) {
			b, ok := blocks[h]
			return b, ok
		},
		Filters: cachedFilters{c}}
	if c.covers != nil {
		in.Covers = c.covers.Scripts()
		in.Decoys = decoysOf(c.covers)
		if met {
			in.Target = c.cfg.PrivacyTarget
		}
	}
	l, err := leak.Compute(in, leak.Limits{})
	if err != nil {
		return nil, err
	}
	for _, p := range append([]*leak.PeerLeak{&l.Collusion}, ptrs(l.Peers)...) {
		for i := range p.Scripts {
			p.Scripts[i].WatchItem = itemOf[p.Scripts[i].WatchItem]
		}
	}
	if c.covers != nil {
		// What chance gives per class dilutes the wallet's groups as
		// covers do: the next scan's covers are sized with it.
		err := c.covers.SetChance(l.Collusion.ChanceGroups)
		if err == nil {
			err = c.covers.Save()
		}
		if err != nil {
			l.Warnings = append(l.Warnings, fmt.Sprintf("the chance groups were not kept in the cover file (%v): the next scan sizes its covers without them, which only adds covers", err))
		}
	}
	for _, addr := range incomplete {
		l.Warnings = append(l.Warnings, fmt.Sprintf(
			"what peer %s was asked is not all recorded (the ledger's bound, or records lost): what it saw may be understated", addr))
	}
	return l, nil
}

// decoysOf is what a cover set says the client fetched on purpose that
// is not its own (leak.Input.Decoys): the decoys it keeps (candidate
// chains explored, chains drawn and left out), and the scripts in
// reserve of a chain a cover or a decoy was drawn from, which its blocks
// hold.
func decoysOf(set *cover.Set) [][]byte {
	out := set.Decoys()
	groups := map[uint64]bool{}
	for _, c := range set.Covers() {
		groups[c.Profile.Group] = true
	}
	decoy := map[string]bool{}
	for _, d := range out {
		decoy[string(d)] = true
	}
	reserve := set.Reserve()
	for _, r := range reserve {
		if decoy[string(r.Script)] {
			groups[r.Profile.Group] = true
		}
	}
	delete(groups, 0) // a script alone
	for _, r := range reserve {
		if groups[r.Profile.Group] && !decoy[string(r.Script)] {
			decoy[string(r.Script)] = true
			out = append(out, r.Script)
		}
	}
	return out
}

// ptrs returns pointers to the elements of ps.
func ptrs(ps []leak.PeerLeak) []*leak.PeerLeak {
	out := make([]*leak.PeerLeak, len(ps))
	for i := range ps {
		out[i] = &ps[i]
	}
	return out
}

// leakBlocks returns the blocks at heights: held by the scan (log) or
// GetBlock's cache, or asked again of a live peer that was asked for
// each before (it learns nothing new); an error names what none holds.
func (c *Client) leakBlocks(ctx context.Context, log *scanLog, heights []int32) (map[int32]*wire.MsgBlock, error) {
	out := make(map[int32]*wire.MsgBlock, len(heights))
	again := map[*pool.Member][]int32{}
	missing := 0
	for _, h := range heights {
		hash := c.chain.Hash(h)
		if b := log.held[hash]; b != nil {
			out[h] = b
			continue
		}
		if b, ok := c.blocks.get(hash); ok {
			out[h] = b
			continue
		}
		m := c.askedBefore(hash, h)
		if m == nil {
			missing++
			continue
		}
		again[m] = append(again[m], h)
	}
	if missing > 0 {
		return nil, fmt.Errorf("%d blocks fetched earlier are neither held nor served by a live peer that was asked for them", missing)
	}
	for m, hs := range again {
		err := c.fetchFrom(ctx, m, hs, func(h int32, b *wire.MsgBlock) { out[h] = b })
		if err != nil {
			return nil, fmt.Errorf("asking %s again for blocks it was asked for before: %w", m.Addr(), err)
		}
	}
	return out, nil
}

// askedBefore returns a live peer holding height that the ledger says
// was asked for the block hash before, or nil.
func (c *Client) askedBefore(hash chainhash.Hash, height int32) *pool.Member {
	for _, m := range c.reaching(wire.SFNodeWitness, height) {
		if c.ledger.wasAsked(m.Addr(), hash) {
			return m
		}
	}
	return nil
}

// cachedFilters gives leak.Compute the verified filters the cache holds.
type cachedFilters struct{ c *Client }

func (f cachedFilters) Filter(height int32) ([]byte, [16]byte, bool) {
	if height < 0 || height > f.c.chain.Height() {
		return nil, [16]byte{}, false
	}
	hash := f.c.chain.Hash(height)
	data, ok := f.c.cachedFilter(hash)
	if !ok {
		return nil, [16]byte{}, false
	}
	return data, gcs.BasicKey(&hash), true
}

// errNoLeak wraps why a result has no leak report.
var errNoLeak = errors.New("what the peers could conclude about the watch list was not computed")
