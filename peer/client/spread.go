package client

import (
	"context"
	crand "crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"maps"
	"math"
	"math/rand/v2"
	"slices"
	"sync"

	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/btcsuite/btcd/wire"
	"github.com/spvfilter/spvfilter/gcs"
	"github.com/spvfilter/spvfilter/peer"
	"github.com/spvfilter/spvfilter/peer/pool"
)

// Block downloads are spread over the peers so that no single one sees
// more than a share of the blocks a scan needs (Config.FetchSpread): a
// peer that saw every block a wallet fetched can attribute its scripts
// by which blocks they are (the block-download attack, package
// privacy/attack), one that saw a share of them far less. The heights go
// in a shuffled order, each to a peer holding it, below the cap, that
// has seen the fewest of the watched scripts that block's filter holds,
// then the fewest blocks, then at random: a script of several blocks
// then shows in several peers' downloads, none of which holds it whole,
// where a share by count alone would give a script of two blocks to one
// peer one time in n. Every peer then asks for its heights in requests
// of peer.MaxBlocksPerRequest, all peers at once. With
// Config.Isolate, each block is asked over a connection of its own
// (pool.DialOnce) with fresh proxy credentials (peer.WithIsolation), at
// most isolatedAtOnce at a time; the ledger records it under its node's
// address, as if the node linked the connections.

// isolatedAtOnce bounds the connections of their own open at once.
const isolatedAtOnce = 4

// fetchPlan is which peer is asked for which block.
type fetchPlan struct {
	order []int32 // every height, shuffled
	to    map[int32]*pool.Member
	// load is how many blocks each peer is asked for in the download
	// (the plans it was re-planned from included), cap how many one may
	// be, of total, the download's blocks.
	load  map[*pool.Member]int
	cap   int
	total int
	// seen are the watched scripts (indexes) of the blocks each peer is
	// asked for.
	seen map[*pool.Member]map[int]bool
}

// pick returns the member of ms that p should ask for a block holding
// the watched scripts own (see the comment at the top of this file).
func (p *fetchPlan) pick(ms []*pool.Member, own []int) *pool.Member {
	var best *pool.Member
	bestShared, ties := 0, 0
	for _, m := range ms {
		if p.load[m] >= p.cap && best != nil {
			continue
		}
		shared := 0
		for _, i := range own {
			if p.seen[m][i] {
				shared++
			}
		}
		switch {
		case best == nil, p.load[best] >= p.cap && p.load[m] < p.cap,
			shared < bestShared, shared == bestShared && p.load[m] < p.load[best]:
			best, bestShared, ties = m, shared, 1
		case shared == bestShared && p.load[m] == p.load[best]:
			// Reservoir sampling: each of the tied members alike.
			if ties++; rand.IntN(ties) == 0 {
				best = m
			}
		}
	}
	return best
}

// assign records that m is asked for height h, whose block holds own.
func (p *fetchPlan) assign(h int32, m *pool.Member, own []int) {
	p.to[h] = m
	p.load[m]++
	if p.seen[m] == nil {
		p.seen[m] = map[int]bool{}
	}
	for _, i := range own {
		p.seen[m][i] = true
	}
}

// maxScriptQueries bounds the filter queries scriptsAt makes (heights
// times scripts): beyond, the rest of the heights are spread by count.
const maxScriptQueries = 1 << 20

// scriptsAt returns, for each height whose verified filter is still in
// the cache, the indexes of the scripts the filter holds (or a false
// positive says so: that only spreads more), within maxScriptQueries.
func (c *Client) scriptsAt(heights []int32, scripts [][]byte) map[int32][]int {
	out := map[int32][]int{}
	for i, h := range heights {
		if (i+1)*len(scripts) > maxScriptQueries {
			break
		}
		hash := c.chain.Hash(h)
		data, ok := c.cachedFilter(hash)
		if !ok {
			continue
		}
		f, err := gcs.DecodeBasic(data)
		if err != nil {
			continue
		}
		key := gcs.BasicKey(&hash)
		for i, s := range scripts {
			if f.Match(key, s) {
				out[h] = append(out[h], i)
			}
		}
	}
	return out
}

// SpreadError is a fetch that cannot keep Config.FetchSpread: the peers
// holding the blocks are too few for each to be asked for at most its
// share. It is returned before any block is asked for, or, when a peer
// refused its request during the download (a *pool.NotDialledError), by
// the plan of the refused blocks over the other peers, whose share
// counts the blocks they were asked for before.
type SpreadError struct {
	// Share is Config.FetchSpread; Cap the blocks it lets one peer be
	// asked for, of Heights; Peers the peers that could serve them.
	Share          float64
	Peers, Heights int
	Cap            int
}

func (e *SpreadError) Error() string {
	return fmt.Sprintf("client: %d blocks to fetch cannot be spread at a share of %g (at most %d a peer) over the %d peers holding them: "+
		"give more peers, or a larger share", e.Heights, e.Share, e.Cap, e.Peers)
}

// checkFetchSpread checks Config.FetchSpread.
func checkFetchSpread(s float64) error {
	if math.IsNaN(s) || s < 0 || s > 1 {
		return fmt.Errorf("client: Config.FetchSpread %g: a share between 0 (spread evenly) and 1 (one peer may serve all)", s)
	}
	return nil
}

// planFetches assigns every height to a peer that holds it, as the
// comment at the top of this file says, leaving out peers slow to answer
// unless all are. With an explicit share that cannot be kept it fails
// with *SpreadError; by default it spreads as evenly as the peers allow,
// with a note (fetchTally.note) when one peer was asked for everything or
// some peer for more than its share. What each peer was asked for is
// added to the operation's log (scanLog.fetches).
//
// The peers of skip are left out. A plan of blocks a download asked for
// already, refused by a peer (see fetchWanted), goes on from prior, the
// plan they were refused in: each peer's blocks and scripts so far count,
// and so does prior's cap, of the download's blocks, so that a peer below
// its share takes them, and with an explicit share none goes over it.
func (c *Client) planFetches(log *scanLog, heights []int32, own map[int32][]int, prior *fetchPlan, skip map[*pool.Member]bool) (*fetchPlan, error) {
	p := &fetchPlan{order: slices.Clone(heights), to: make(map[int32]*pool.Member, len(heights)), load: map[*pool.Member]int{},
		seen: map[*pool.Member]map[int]bool{}, total: len(heights)}
	if prior != nil {
		p.total = prior.total
		maps.Copy(p.load, prior.load)
		for m, s := range prior.seen {
			p.seen[m] = maps.Clone(s)
		}
	}
	rand.Shuffle(len(p.order), func(i, j int) { p.order[i], p.order[j] = p.order[j], p.order[i] })
	holders := map[int32][]*pool.Member{}
	all := map[*pool.Member]bool{}
	for _, h := range heights {
		ms := slices.DeleteFunc(c.reaching(wire.SFNodeWitness, h), func(m *pool.Member) bool { return skip[m] })
		if slow := c.pool.Slow(ms); len(slow) < len(ms) {
			ms = slices.DeleteFunc(ms, func(m *pool.Member) bool { return slow[m] })
		}
		if len(ms) == 0 {
			return nil, c.noPeers("getdata block")
		}
		holders[h] = ms
		for _, m := range ms {
			all[m] = true
		}
	}
	share := c.cfg.FetchSpread
	n, total := len(all), p.total
	switch {
	case prior != nil:
		p.cap = prior.cap
	case share > 0:
		p.cap = int(math.Ceil(share * float64(total)))
	default:
		p.cap = (total + n - 1) / n
	}
	for _, h := range p.order {
		best := p.pick(holders[h], own[h])
		if p.load[best] >= p.cap && share > 0 {
			return nil, &SpreadError{Share: share, Peers: n, Heights: total, Cap: p.cap}
		}
		p.assign(h, best, own[h])
	}
	plan := fetchTally{share: share}
	for m := range all {
		plan.count(m.Addr(), p.load[m], p.cap)
	}
	if w := plan.note(); w != "" {
		log.note(w)
		log.fetches.notes = append(log.fetches.notes, w)
	}
	log.fetches.tally.add(&plan)
	return p, nil
}

// fetchTally is what block fetches asked of the peers holding the blocks:
// one plan's (planFetches), an operation's plans', or a rescan's steps'.
type fetchTally struct {
	// peers are, by address, the blocks each peer holding some of those
	// fetched was asked for and its share of them (the cap of every plan
	// it could serve, summed); at most maxTallyPeers when added up (add),
	// the peers past them summed as one, others.
	peers     map[string]peerTally
	others    peerTally
	hasOthers bool
	total     int
	// share is Config.FetchSpread.
	share float64
}

// fetchLog is what an operation's block fetches asked of the peers
// (scanLog.fetches), and the notes on their spread written of them, one
// a plan at most (planFetches), which a rescan replaces by one on its
// steps' sums (rescanWarnings).
type fetchLog struct {
	tally fetchTally
	notes []string
}

// peerTally is how many blocks a peer was asked for, and its share of
// them (limit).
type peerTally struct{ asked, limit int }

// plus is a and b added up.
func (a peerTally) plus(b peerTally) peerTally {
	return peerTally{asked: a.asked + b.asked, limit: a.limit + b.limit}
}

// maxTallyPeers bounds the peers a tally adds up (add) keeps apart.
const maxTallyPeers = 64

// count records that the peer at addr was asked for asked blocks, of a
// share of limit (a plan's cap).
func (t *fetchTally) count(addr string, asked, limit int) {
	if t.peers == nil {
		t.peers = map[string]peerTally{}
	}
	t.peers[addr] = t.peers[addr].plus(peerTally{asked: asked, limit: limit})
	t.total += asked
}

// add adds the fetches of u to t, keeping at most maxTallyPeers peers
// apart.
func (t *fetchTally) add(u *fetchTally) {
	if t.peers == nil {
		t.peers = map[string]peerTally{}
	}
	for addr, pt := range u.peers {
		if old, ok := t.peers[addr]; ok || len(t.peers) < maxTallyPeers {
			t.peers[addr] = old.plus(pt)
		} else {
			t.others = t.others.plus(pt)
			t.hasOthers = true
		}
	}
	if u.hasOthers {
		t.others = t.others.plus(u.others)
		t.hasOthers = true
	}
	t.total += u.total
	t.share = u.share
}

// note returns the note on how the blocks of t were spread, empty if
// none is due: one peer was asked for them all (more than one, with a
// share below 1), or some peer for more than its share, which happens
// only when the others below their caps do not hold the block. A scan
// writes it of each plan; a rescan of its steps' sums (rescanWarnings),
// in the same words.
func (t *fetchTally) note() string {
	n := len(t.peers)
	if t.hasOthers {
		n++
	}
	if n == 1 && !t.hasOthers && t.total > 1 && t.share < 1 {
		for addr := range t.peers {
			return fmt.Sprintf("one peer (%s) was asked for all %d blocks fetched: spreading them needs several peers (give more peers, or let the client find them)",
				addr, t.total)
		}
	}
	pts := slices.Collect(maps.Values(t.peers))
	if t.hasOthers {
		pts = append(pts, t.others)
	}
	// The peer most over its share, of the smallest share among ties.
	worst, over := peerTally{}, false
	for _, pt := range pts {
		if d, wd := pt.asked-pt.limit, worst.asked-worst.limit; d > 0 && (!over || d > wd || d == wd && pt.limit < worst.limit) {
			worst, over = pt, true
		}
	}
	if !over {
		return ""
	}
	return fmt.Sprintf("the %d blocks fetched could not be spread evenly over %d peers: some peer was asked for more than %d (the others do not hold them)",
		t.total, n, worst.limit)
}

// fetchPlanned asks every peer of the plan for its blocks, all peers at
// once, each in requests of peer.MaxBlocksPerRequest in the plan's
// order, and returns the blocks by height: all of them, or with the
// first failure (a *pool.Failure, which cancels the other requests) those
// that arrived. A request the pool refused (a *pool.NotDialledError: its
// peer's connection ended and its next dial is not due, see
// pool.Pool.RedialDue) is no failure: nothing was asked, the other
// requests go on, and the peer is returned in refused, with why, for the
// blocks not in to be planned again (see fetchWanted).
func (c *Client) fetchPlanned(ctx context.Context, p *fetchPlan) (_ map[int32]*wire.MsgBlock, refused map[*pool.Member]error, _ error) {
	fetching, cancel := context.WithCancel(ctx)
	defer cancel()
	r := &fetchRun{out: make(map[int32]*wire.MsgBlock, len(p.order)), cancel: cancel}
	var wg sync.WaitGroup
	if c.cfg.Isolate {
		slots := make(chan struct{}, isolatedAtOnce)
		for _, h := range p.order {
			m := p.to[h]
			slots <- struct{}{}
			wg.Add(1)
			go func() {
				defer func() { <-slots; wg.Done() }()
				r.failed(m, c.fetchIsolated(fetching, m, h, r.got))
			}()
		}
	} else {
		byPeer := map[*pool.Member][]int32{}
		for _, h := range p.order {
			byPeer[p.to[h]] = append(byPeer[p.to[h]], h)
		}
		for m, heights := range byPeer {
			wg.Add(1)
			go func() {
				defer wg.Done()
				r.failed(m, c.fetchFrom(fetching, m, heights, r.got))
			}()
		}
	}
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return r.out, r.refused, err
	}
	return r.out, r.refused, r.first
}

// fetchRun is what the requests of one fetchPlanned share.
type fetchRun struct {
	mu      sync.Mutex
	out     map[int32]*wire.MsgBlock
	first   error // the first failure, a *pool.Failure
	refused map[*pool.Member]error
	cancel  context.CancelFunc
}

// got keeps the block at height h.
func (r *fetchRun) got(h int32, b *wire.MsgBlock) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.out[h] = b
}

// failed takes in how m's requests ended: the first failure cancels the
// others; a refusal (see fetchPlanned) is kept apart and cancels nothing.
func (r *fetchRun) failed(m *pool.Member, err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if nd := (*pool.NotDialledError)(nil); errors.As(err, &nd) && nd.Request {
		if r.refused == nil {
			r.refused = map[*pool.Member]error{}
		}
		r.refused[m] = err
		return
	}
	if err != nil && r.first == nil {
		r.first = &pool.Failure{Member: m, Err: err}
		r.cancel()
	}
}

// fetchFrom asks m for the blocks at heights, in requests of
// peer.MaxBlocksPerRequest, and passes each to got; each request dials m
// again first if its connection ended (see askingConn).
func (c *Client) fetchFrom(ctx context.Context, m *pool.Member, heights []int32, got func(int32, *wire.MsgBlock)) error {
	for batch := range slices.Chunk(heights, peer.MaxBlocksPerRequest) {
		hashes := make([]chainhash.Hash, len(batch))
		for i, h := range batch {
			hashes[i] = c.chain.Hash(h)
		}
		err := c.conn(m).GetBlocks(ctx, hashes, func(i int, b *wire.MsgBlock) error {
			got(batch[i], b)
			return nil
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// fetchIsolated asks m for the block at height over a connection of its
// own, with fresh proxy credentials, and passes it to got.
func (c *Client) fetchIsolated(ctx context.Context, m *pool.Member, height int32, got func(int32, *wire.MsgBlock)) error {
	if ctx.Err() != nil {
		return nil // another request failed: nothing more is asked
	}
	var key [16]byte
	crand.Read(key[:])
	ctx = peer.WithIsolation(ctx, hex.EncodeToString(key[:]))
	return c.pool.DialOnce(ctx, m, func(p *peer.Peer) error {
		return c.connOver(p, m).GetBlocks(ctx, []chainhash.Hash{c.chain.Hash(height)}, func(_ int, b *wire.MsgBlock) error {
			got(height, b)
			return nil
		})
	})
}
