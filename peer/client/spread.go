package client

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"sync"

	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/btcsuite/btcd/wire"
	"github.com/spvfilter/spvfilter/peer"
	"github.com/spvfilter/spvfilter/peer/pool"
)

// Block downloads are spread over the peers so that no single one sees
// more than a share of the blocks a scan needs (Config.FetchSpread): a
// peer that saw every block a wallet fetched can attribute its scripts
// by which blocks they are (the block-download attack, package
// privacy/attack), one that saw a share of them far less. The heights go
// in a shuffled order, each to the peer holding it with the fewest
// blocks so far, below the cap; every peer then asks for its heights in
// requests of peer.MaxBlocksPerRequest, all peers at once.

// fetchPlan is which peer is asked for which block.
type fetchPlan struct {
	order []int32 // every height, shuffled
	to    map[int32]*pool.Member
	load  map[*pool.Member]int
	cap   int
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
// with a note when one peer was asked for everything.
func (c *Client) planFetches(log *scanLog, heights []int32) (*fetchPlan, error) {
	p := &fetchPlan{order: slices.Clone(heights), to: make(map[int32]*pool.Member, len(heights)), load: map[*pool.Member]int{}}
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
		var best *pool.Member
		for _, m := range holders[h] {
			if best == nil || p.load[m] < p.load[best] {
				best = m
			}
		}
		if p.load[best] >= p.cap {
			if share > 0 {
				return nil, &SpreadError{Share: share, Peers: n, Heights: total, Cap: p.cap}
			}
			over = true
		}
		p.to[h] = best
		p.load[best]++
	}
	switch {
	case n == 1 && total > 1 && share < 1:
		for m := range all {
			log.note(fmt.Sprintf("one peer (%s) was asked for all %d blocks fetched: spreading them needs several peers (give more peers, or let the client find them)",
				m.Addr(), total))
		}
	case over:
		log.note(fmt.Sprintf("the %d blocks fetched could not be spread evenly over %d peers: some peer was asked for more than %d (the others do not hold them)",
			total, n, p.cap))
	}
	return p, nil
}

// fetchPlanned asks every peer of the plan for its blocks, all peers at
// once, each in requests of peer.MaxBlocksPerRequest in the plan's
// order, and returns the blocks by height: all of them, or with the
// first failure (a *pool.Failure, which cancels the other requests) those
// that arrived.
func (c *Client) fetchPlanned(ctx context.Context, p *fetchPlan) (map[int32]*wire.MsgBlock, error) {
	byPeer := map[*pool.Member][]int32{}
	for _, h := range p.order {
		byPeer[p.to[h]] = append(byPeer[p.to[h]], h)
	}
	fetching, cancel := context.WithCancel(ctx)
	defer cancel()
	var (
		mu    sync.Mutex
		out   = make(map[int32]*wire.MsgBlock, len(p.order))
		first error
		wg    sync.WaitGroup
	)
	for m, heights := range byPeer {
		wg.Add(1)
		go func() {
			defer wg.Done()
			err := c.fetchFrom(fetching, m, heights, func(h int32, b *wire.MsgBlock) {
				mu.Lock()
				out[h] = b
				mu.Unlock()
			})
			mu.Lock()
			defer mu.Unlock()
			if err != nil && first == nil {
				first = &pool.Failure{Member: m, Err: err}
				cancel()
			}
		}()
	}
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return out, err
	}
	return out, first
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
