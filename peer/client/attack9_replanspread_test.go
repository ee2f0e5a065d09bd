package client

import (
	"context"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/btcsuite/btcd/wire"
	"github.com/spvfilter/spvfilter/peer"
	"github.com/spvfilter/spvfilter/peer/peertest"
)

// blocksAskedSince returns the blocks the client asked r for in the
// messages r saw after its first n.
func blocksAskedSince(r *peertest.Liar, n int) map[chainhash.Hash]int {
	out := map[chainhash.Hash]int{}
	for _, m := range r.Requests()[n:] {
		if gd, ok := m.(*wire.MsgGetData); ok {
			for _, iv := range gd.InvList {
				if iv.Type == wire.InvTypeBlock || iv.Type == wire.InvTypeWitnessBlock {
					out[iv.Hash]++
				}
			}
		}
	}
	return out
}

// attack9Range returns the heights from..to after the peer behind,
// a request's worth (peer.MaxBlocksPerRequest) for each of peers.
func attack9Range(t *testing.T, peers int) (from, to int32) {
	t.Helper()
	needFixture(t)
	from = behindHeight + 1
	to = from + int32(peers*peer.MaxBlocksPerRequest) - 1
	if to > fx.tip {
		t.Fatalf("the fixture's chain ends at %d, below %d", fx.tip, to)
	}
	return from, to
}

// hangUpOnFirstBlock starts a relay to the fixture's node that hangs up
// on every connection as soon as it passed on the node's first block,
// the rest of the answer never coming, counting its hang-ups in ends (if
// not nil). It returns the relay's address.
func hangUpOnFirstBlock(t *testing.T, ends *atomic.Int32) string {
	t.Helper()
	return relayFramesEach(t, fx.node.P2PAddr, 0, func() func(string, []byte) bool {
		return func(cmd string, _ []byte) bool {
			if cmd != wire.CmdBlock {
				return false
			}
			if ends != nil {
				ends.Add(1)
			}
			return true
		}
	})
}

// TestAttack9ReplanKeepsScriptsApart: a scan's download of 48 blocks
// over three peers, each of 24 watched scripts in two of the blocks (own
// as the scan's filters say), the first peer hanging up mid-answer (its
// request's first block passed on) on every connection. Its blocks not
// in are planned again over the two others, both then at their share of 16: the plan is
// still to give each script's blocks to different peers (the rule at the
// top of spread.go), and to spread the blocks by the scripts, then the
// loads, not all to whichever of them the pool lists first. The two
// observed peers are relays to the same honest node, so the test sees
// every block asked of each. Without a hang-up (the control row) a peer
// is asked for both blocks of a script only when the cap leaves no
// other choice (1 in 120 scripts in 5 rounds, measured). Before pick
// chose among peers all at their caps by the scripts, the 15 blocks not
// in went all to the observed peer the pool listed first, 5 rounds of 5:
// it was asked for 31 blocks of a share of 16, and for both blocks of 7
// to 10 scripts a round (38 in 5 rounds).
func TestAttack9ReplanKeepsScriptsApart(t *testing.T) {
	const n = 3 * peer.MaxBlocksPerRequest
	from, to := attack9Range(t, 3)
	var heights []int32
	own := map[int32][]int{}
	for h := from; h <= to; h++ {
		heights = append(heights, h)
		own[h] = []int{int(h-from) % (n / 2)}
	}
	for _, tt := range []struct {
		name    string
		hangsUp bool
	}{
		{"no hang-up", false},
		{"first peer hangs up in flight", true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var ends atomic.Int32
			first := peertest.NewLiar(t, fx.node.P2PAddr, fx.node.Params.Net, nil).Addr
			if tt.hangsUp {
				first = hangUpOnFirstBlock(t, &ends)
			}
			seen := []*peertest.Liar{
				peertest.NewLiar(t, fx.node.P2PAddr, fx.node.Params.Net, nil),
				peertest.NewLiar(t, fx.node.P2PAddr, fx.node.Params.Net, nil),
			}
			c := connectWith(t, Config{Peers: []string{first, seen[0].Addr, seen[1].Addr}, Params: fx.node.Params, Timeout: 10 * time.Second})
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			if err := c.Start(ctx); err != nil {
				t.Fatal(err)
			}
			// The cap comes before the scripts: the last blocks of a plan
			// may have only a peer holding one of their scripts' other
			// blocks below its cap (about 1 script in 100 without a
			// hang-up), hence a slack, far below the 7 to 10 a round the
			// blocks planned again all to one peer gave.
			const rounds, maxTogether = 5, 2
			whole, most := 0, 0
			for round := range rounds {
				waitServing(ctx, t, c, to, first, seen[0].Addr, seen[1].Addr)
				before := []int{len(seen[0].Requests()), len(seen[1].Requests())}
				hungUp := ends.Load()
				blocks, err := c.fetchBlocks(ctx, newScanLog(), heights, own)
				if err != nil {
					t.Fatalf("round %d: %v", round, err)
				}
				for i, b := range blocks {
					if b.BlockHash() != c.chain.Hash(heights[i]) {
						t.Errorf("round %d: height %d: block %v, want %v", round, heights[i], b.BlockHash(), c.chain.Hash(heights[i]))
					}
				}
				if tt.hangsUp && ends.Load() == hungUp {
					t.Fatalf("round %d: the first peer did not hang up mid-answer: the attack did not run", round)
				}
				asked := make([]int, len(seen))
				together := 0
				for i, r := range seen {
					got := blocksAskedSince(r, before[i])
					asked[i] = len(got)
					for k := range n / 2 {
						if got[c.chain.Hash(from+int32(k))] > 0 && got[c.chain.Hash(from+int32(k+n/2))] > 0 {
							together++
						}
					}
				}
				whole += together
				most = max(most, slices.Max(asked))
				t.Logf("round %d: blocks asked of the two observed peers %v (share %d); scripts with both blocks asked of one of them %d",
					round, asked, n/3, together)
				if together > maxTogether {
					t.Errorf("round %d: %d watched scripts had both their blocks asked of one peer, want at most %d", round, together, maxTogether)
				}
			}
			t.Logf("%d rounds: scripts whole at one peer %d; most blocks asked of one observed peer in a round %d (share %d)", rounds, whole, most, n/3)
			if whole > rounds {
				t.Errorf("%d watched scripts had both their blocks asked of one peer in %d rounds, want at most %d", whole, rounds, rounds)
			}
		})
	}
}
