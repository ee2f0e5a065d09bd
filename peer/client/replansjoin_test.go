package client

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/btcsuite/btcd/wire"
	"github.com/spvfilter/spvfilter/peer"
	"github.com/spvfilter/spvfilter/peer/pool"
)

// joinChain is a row of relays to the fixture's node, each of which,
// on its first block, has the next one join the client (Pool.Add, and
// its headers synced) before it passes the block on and hangs up: the
// client finds a peer new to the download each time it plans again.
// The relays from honestAt on (counting from 0) serve plainly.
type joinChain struct {
	c      atomic.Pointer[Client]
	reach  int32
	addrs  []string
	blocks []atomic.Int32 // blocks each relay passed on
	ends   atomic.Int32   // relays that hung up
	mu     sync.Mutex
	joined int   // relays that joined the client, the first at its start
	err    error // a join that failed
}

// newJoinChain starts a row of relays, the peers holding blocks up to
// reach.
func newJoinChain(t *testing.T, relays, honestAt int, reach int32) *joinChain {
	t.Helper()
	j := &joinChain{reach: reach, blocks: make([]atomic.Int32, relays), joined: 1}
	for i := range relays {
		var first atomic.Bool
		pass := func(cmd string, _ []byte) bool {
			if cmd != wire.CmdBlock {
				return false
			}
			j.blocks[i].Add(1)
			if i >= honestAt {
				return false
			}
			if first.CompareAndSwap(false, true) {
				j.join()
				j.ends.Add(1)
			}
			return true
		}
		j.addrs = append(j.addrs, relayFramesEach(t, fx.node.P2PAddr, 0, func() func(string, []byte) bool { return pass }))
	}
	return j
}

// join has the next relay of the row, if any, join the client, its
// headers synced.
func (j *joinChain) join() {
	j.mu.Lock()
	i := j.joined
	if i < len(j.addrs) {
		j.joined++
	}
	j.mu.Unlock()
	if i == len(j.addrs) {
		return
	}
	addr, c := j.addrs[i], j.c.Load()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	err := c.pool.Add(ctx, addr, true)
	if err == nil {
		// Its headers alone: a sync of every peer would ask the one
		// whose answer waits on this join.
		ms := slices.DeleteFunc(c.pool.Members(), func(m *pool.Member) bool { return m.Addr() != addr })
		c.opMu.Lock()
		_, _, err = c.syncPeers(ctx, newScanLog(), ms, 0)
		c.opMu.Unlock()
	}
	if err == nil && !slices.ContainsFunc(c.reaching(wire.SFNodeWitness, j.reach), func(m *pool.Member) bool { return m.Addr() == addr }) {
		err = fmt.Errorf("its headers do not reach %d", j.reach)
	}
	if err != nil {
		j.mu.Lock()
		j.err = fmt.Errorf("%s joining: %w", addr, err)
		j.mu.Unlock()
	}
}

// TestReplansRunOutAsPeersJoin: a download over one peer that hangs up
// on its first block, a new peer joining the client as each hangs up.
// Each plan again (Client.replans, fetchWanted) leaves out the peers
// that hung up and finds the one that joined. Where each new peer hangs
// up in turn, the plans run out all the same: the download fails after
// maxRefusedPlans plans again (the members at its start are fewer),
// naming them, the peers joining after never asked; peers that keep
// joining cannot hold a download for as long as they join. Where a peer
// that joins serves, the download is whole from it.
func TestReplansRunOutAsPeersJoin(t *testing.T) {
	needFixture(t)
	from, to := int32(1), int32(2*peer.MaxBlocksPerRequest)
	var heights []int32
	for h := from; h <= to; h++ {
		heights = append(heights, h)
	}
	for _, tt := range []struct {
		name     string
		relays   int // the row's peers, the first a member at the start
		honestAt int // the first that serves (relays: none)
		hangUps  int // the ends the download sees
		fails    bool
	}{
		{"every peer joining hangs up", maxRefusedPlans + 3, maxRefusedPlans + 3, maxRefusedPlans + 1, true},
		{"the third peer serves", maxRefusedPlans + 3, 2, 2, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			j := newJoinChain(t, tt.relays, tt.honestAt, to)
			c := connectWith(t, Config{Peers: []string{j.addrs[0]}, Params: fx.node.Params, Timeout: 10 * time.Second, Log: testLog{t, time.Now()}})
			j.c.Store(c)
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			if got := c.replans(); got != maxRefusedPlans {
				t.Fatalf("a download with one member plans again %d times, want %d", got, maxRefusedPlans)
			}
			blocks, err := c.fetchBlocks(ctx, newScanLog(), heights, nil)
			j.mu.Lock()
			joined, jerr := j.joined, j.err
			j.mu.Unlock()
			t.Logf("the download: %v; %d peers of the row joined, %d hung up, blocks each passed on %v", err, joined, j.ends.Load(), blocksOf(j.blocks))
			if jerr != nil {
				t.Fatalf("the path was not set up: %v", jerr)
			}
			if got := int(j.ends.Load()); got != tt.hangUps {
				t.Errorf("%d peers hung up on the download, want %d", got, tt.hangUps)
			}
			if !tt.fails {
				if err != nil {
					t.Fatalf("the download, a peer that serves having joined: %v", err)
				}
				for i, b := range blocks {
					if b == nil || b.BlockHash() != c.chain.Hash(heights[i]) {
						t.Fatalf("height %d: not the chain's block", heights[i])
					}
				}
				return
			}
			want := fmt.Sprintf("in %d plans of the download", maxRefusedPlans+1)
			if err == nil || !strings.Contains(err.Error(), want) {
				t.Fatalf("the download: %v; want its plans run out (%q)", err, want)
			}
			for i := tt.hangUps; i < joined; i++ {
				if n := j.blocks[i].Load(); n > 0 {
					t.Errorf("peer %d of the row, joining after the plans ran out, passed %d blocks on", i, n)
				}
			}
		})
	}
}

// blocksOf returns the counts of ns.
func blocksOf(ns []atomic.Int32) []int32 {
	out := make([]int32, len(ns))
	for i := range ns {
		out[i] = ns[i].Load()
	}
	return out
}
