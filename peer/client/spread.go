package client

import (
	"context"
	crand "crypto/rand"
	"encoding/hex"
	"fmt"
	"math"
	"math/rand/v2"
	"regexp"
	"slices"
	"strconv"
	"strings"
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
	load  map[*pool.Member]int
	cap   int
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
// share. It is returned before any block is asked for.
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
// with a note (spreadNote) when one peer was asked for everything or
// some peer for more than an even share.
func (c *Client) planFetches(log *scanLog, heights []int32, own map[int32][]int) (*fetchPlan, error) {
	p := &fetchPlan{order: slices.Clone(heights), to: make(map[int32]*pool.Member, len(heights)), load: map[*pool.Member]int{},
		seen: map[*pool.Member]map[int]bool{}}
	rand.Shuffle(len(p.order), func(i, j int) { p.order[i], p.order[j] = p.order[j], p.order[i] })
	holders := map[int32][]*pool.Member{}
	all := map[*pool.Member]bool{}
	for _, h := range heights {
		ms := c.reaching(wire.SFNodeWitness, h)
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
	n, total := len(all), len(heights)
	if share > 0 {
		p.cap = int(math.Ceil(share * float64(total)))
	} else {
		p.cap = (total + n - 1) / n
	}
	over := false
	for _, h := range p.order {
		best := p.pick(holders[h], own[h])
		if p.load[best] >= p.cap {
			if share > 0 {
				return nil, &SpreadError{Share: share, Peers: n, Heights: total, Cap: p.cap}
			}
			over = true
		}
		p.assign(h, best, own[h])
	}
	if n == 1 && share < 1 || over {
		fs := make([]peerFetches, 0, n)
		for m := range all {
			fs = append(fs, peerFetches{addr: m.Addr(), blocks: p.load[m]})
		}
		log.note(spreadNote(fs, 0))
	}
	return p, nil
}

// peerFetches is how many blocks one peer, by address, was asked for.
type peerFetches struct {
	addr   string
	blocks int
}

// spreadNote returns the note on how blocks fetched went to the peers
// holding them, fs (each with the blocks it was asked for, maybe none),
// and to peers not named, others: that one peer was asked for them all,
// or that they could not be spread evenly (some peer was asked for more
// than its even share), or, over a rescan's steps (see rescanWarnings),
// that they were. Every peer is named with its count, the most asked
// first, so that parseSpreadNote can add the notes of several fetches.
func spreadNote(fs []peerFetches, others int) string {
	total, most := others, 0
	for _, f := range fs {
		total += f.blocks
		most = max(most, f.blocks)
	}
	if len(fs) == 1 && others == 0 {
		if total == 1 {
			return fmt.Sprintf("one peer (%s) was asked for the 1 block fetched: spreading blocks needs several peers (give more peers, or let the client find them)", fs[0].addr)
		}
		return fmt.Sprintf("one peer (%s) was asked for all %d blocks fetched: spreading them needs several peers (give more peers, or let the client find them)",
			fs[0].addr, total)
	}
	fs = slices.Clone(fs)
	slices.SortFunc(fs, func(a, b peerFetches) int {
		if a.blocks != b.blocks {
			return b.blocks - a.blocks
		}
		return strings.Compare(a.addr, b.addr)
	})
	var list strings.Builder
	for i, f := range fs {
		if i == 0 {
			fmt.Fprintf(&list, "%s was asked for %d", f.addr, f.blocks)
		} else {
			fmt.Fprintf(&list, ", %s for %d", f.addr, f.blocks)
		}
	}
	if others > 0 {
		fmt.Fprintf(&list, ", peers past these %d for %d", len(fs), others)
	}
	n := max(1, len(fs))
	even := (total + n - 1) / n
	if most > even {
		return fmt.Sprintf("the %d blocks fetched could not be spread evenly over %d peers (at most %d each): %s (the others did not hold them all)",
			total, len(fs), even, list.String())
	}
	return fmt.Sprintf("the %d blocks fetched were spread over %d peers (at most %d each): %s", total, len(fs), even, list.String())
}

// Of a note of spreadNote: one peer's, or the list of peers and counts
// (ending with the note or at " ("), and an item of the list.
var (
	spreadOne   = regexp.MustCompile(`^one peer \((\S+)\) was asked for (?:all (\d+) blocks|the (1) block) fetched: `)
	spreadList  = regexp.MustCompile(`^the (\d+) blocks fetched (?:could not be spread evenly|were spread) over \d+ peers \(at most \d+ each\): (.+?)(?: \(the others|$)`)
	spreadEntry = regexp.MustCompile(`^(\S+) (?:was asked )?for (\d+)$`)
)

// parseSpreadNote returns the peers and counts of a note of spreadNote
// that names every peer (others 0), and whether w is one.
func parseSpreadNote(w string) ([]peerFetches, bool) {
	if m := spreadOne.FindStringSubmatch(w); m != nil {
		n, err := strconv.Atoi(m[2] + m[3])
		if err != nil {
			return nil, false
		}
		return []peerFetches{{addr: m[1], blocks: n}}, true
	}
	m := spreadList.FindStringSubmatch(w)
	if m == nil {
		return nil, false
	}
	total, err := strconv.Atoi(m[1])
	if err != nil {
		return nil, false
	}
	var fs []peerFetches
	sum := 0
	for _, item := range strings.Split(m[2], ", ") {
		e := spreadEntry.FindStringSubmatch(item)
		if e == nil {
			return nil, false
		}
		n, err := strconv.Atoi(e[2])
		if err != nil {
			return nil, false
		}
		fs = append(fs, peerFetches{addr: e[1], blocks: n})
		sum += n
	}
	if sum != total {
		return nil, false
	}
	return fs, true
}

// fetchPlanned asks every peer of the plan for its blocks, all peers at
// once, each in requests of peer.MaxBlocksPerRequest in the plan's
// order, and returns the blocks by height: all of them, or with the
// first failure (a *pool.Failure, which cancels the other requests) those
// that arrived.
func (c *Client) fetchPlanned(ctx context.Context, p *fetchPlan) (map[int32]*wire.MsgBlock, error) {
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
		return r.out, err
	}
	return r.out, r.first
}

// fetchRun is what the requests of one fetchPlanned share.
type fetchRun struct {
	mu     sync.Mutex
	out    map[int32]*wire.MsgBlock
	first  error // the first failure, a *pool.Failure
	cancel context.CancelFunc
}

// got keeps the block at height h.
func (r *fetchRun) got(h int32, b *wire.MsgBlock) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.out[h] = b
}

// failed takes in how m's requests ended: the first failure cancels the
// others.
func (r *fetchRun) failed(m *pool.Member, err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if err != nil && r.first == nil {
		r.first = &pool.Failure{Member: m, Err: err}
		r.cancel()
	}
}

// fetchFrom asks m for the blocks at heights, in requests of
// peer.MaxBlocksPerRequest, and passes each to got.
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
