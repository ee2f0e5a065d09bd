package client

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/spvfilter/spvfilter/peer"
	"github.com/spvfilter/spvfilter/peer/peertest"
)

// TestDisputedBlockReplanned: the block a dispute downloads
// (disputedBlock, fetchBlock) is asked of peers that hang up on every
// block request, before answering (its getdata received, nothing
// passed on), beside an honest peer holding it or alone. Such an end
// proves no lie: the block is to be asked of another peer that has it,
// as a scan's blocks are (fetchWanted), the peers that hung up charged
// nothing. Each row's rounds download a block no dispute kept.
//
// Beside an honest peer, every download gives the block, whichever
// peers were asked first: each peer hanging up before it is one peer a
// plan, and the plans are bounded by the peers (see Client.replans), so
// that more peers hanging up than maxRefusedPlans, the least bound, do
// not fail it (before, maxRefusedPlans+1 of them did whenever each was
// asked before the honest peer). With no honest peer, the download fails
// without dropping anyone, out of peers (ErrNoPeers), naming each one's
// end, however many they are. With Config.Isolate,
// each request goes over a connection of its own through a SOCKS5
// proxy (fetchIsolated), which the relays end the same way.
func TestDisputedBlockReplanned(t *testing.T) {
	needFixture(t)
	const (
		fetched = iota // every download gives the block
		noPeers        // fails with ErrNoPeers
	)
	for _, tt := range []struct {
		name    string
		liars   int
		honest  bool
		isolate bool
		want    int
	}{
		{"two of three peers hang up", 2, true, false, fetched},
		{"as many hang up as plans go again", maxRefusedPlans, true, false, fetched},
		{"more hang up than the least bound on plans", maxRefusedPlans + 2, true, false, fetched},
		{"every peer hangs up", 2, false, false, noPeers},
		{"every peer hangs up, as many as plans go again", maxRefusedPlans, false, false, noPeers},
		{"every peer hangs up, one more than the least bound on plans", maxRefusedPlans + 1, false, false, noPeers},
		{"every peer hangs up, more than the least bound on plans", maxRefusedPlans + 2, false, false, noPeers},
		{"isolated: two of three peers hang up", 2, true, true, fetched},
		{"isolated: every peer hangs up", 2, false, true, noPeers},
		{"isolated: more than the least bound on plans", maxRefusedPlans + 2, false, true, noPeers},
	} {
		t.Run(tt.name, func(t *testing.T) {
			liars, ends := hangUpsOnAsk(t, tt.liars, 1)
			peers := slices.Clone(liars)
			if tt.honest {
				peers = append(peers, fx.node.P2PAddr)
			}
			log := &linesLog{t: t, start: time.Now()}
			cfg := Config{Peers: peers, Params: fx.node.Params, Timeout: 10 * time.Second, Log: log}
			var proxy *peertest.SOCKSProxy
			if tt.isolate {
				proxy = peertest.NewSOCKSProxy(t, peertest.SOCKSConfig{AnyUser: true})
				cfg.Proxy, cfg.Isolate = "socks5://"+proxy.Addr, true
			}
			// conns counts the connections made through the proxy.
			conns := func() int {
				if proxy == nil {
					return 0
				}
				return len(proxy.Users())
			}
			c := connectWith(t, cfg)
			ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
			defer cancel()
			if err := c.Start(ctx); err != nil {
				t.Fatal(err)
			}
			hungUp := func() int {
				n := 0
				for _, e := range ends {
					n += int(e.Load())
				}
				return n
			}
			// Beside an honest peer, rounds go on until the liars hung up
			// in two of them (the first peer asked is picked at random),
			// ten with more liars than maxRefusedPlans; alone, two rounds.
			maxRounds, wantRounds := 2, 2
			switch {
			case tt.honest && tt.liars > maxRefusedPlans:
				// Each round asks the honest peer last of the first
				// maxRefusedPlans+1 at times (2 in 7 with 6 liars).
				maxRounds, wantRounds = 12, 10
			case tt.honest:
				maxRounds = 10
			}
			rounds, attacked, failed := 0, 0, 0
			for round := 0; round < maxRounds && attacked < wantRounds; round++ {
				rounds++
				waitServing(ctx, t, c, fx.tip, peers...)
				h := fx.tip - int32(round)
				before, dialled := hungUp(), conns()
				b, err := c.disputedBlock(ctx, nil, h)
				n := hungUp() - before
				if tt.isolate {
					// Each request over a connection of its own: one a peer
					// that hung up, and one more for the block that came.
					want := n
					if err == nil {
						want++
					}
					if got := conns() - dialled; got != want {
						t.Errorf("round %d: %d connections through the proxy for %d requests", round, got, want)
					}
				}
				if n > 0 {
					attacked++
				}
				t.Logf("round %d: height %d, %d hang-ups: %v", round, h, n, err)
				named := 0
				if err != nil {
					for _, addr := range liars {
						if strings.Contains(err.Error(), "peer "+addr+": getdata block: "+peer.ErrDisconnected.Error()) {
							named++
						}
					}
				}
				var why string
				switch {
				case tt.want == fetched && (err != nil || b == nil || b.BlockHash() != c.chain.Hash(h)):
					why = "want the block"
				case tt.want == noPeers && (!errors.Is(err, ErrNoPeers) || named != tt.liars || n != tt.liars):
					why = fmt.Sprintf("want ErrNoPeers naming the end of each of the %d peers (named %d, hang-ups %d)", tt.liars, named, n)
				}
				if why != "" {
					failed++
					t.Errorf("round %d: block %v, error %v: %s", round, b != nil, err, why)
				}
			}
			// A hang-up may cut off the service's header sync too, whose
			// own handling is not what is tested here: drops for a
			// block's request are counted.
			dropped, others := 0, 0
			for _, addr := range liars {
				dropped += log.count("dropped "+addr, "getdata block")
				others += log.count("dropped " + addr)
			}
			t.Logf("the liars dropped for other requests %d times", others-dropped)
			t.Logf("%d downloads, the liars hung up in %d, %d not as they should; the liars dropped %d times", rounds, attacked, failed, dropped)
			if attacked == 0 {
				t.Fatalf("no liar hung up in %d downloads: the attack did not run", rounds)
			}
			honest := ""
			if tt.honest {
				honest = fx.node.P2PAddr
			}
			notCharged(t, c, liars, dropped, "hanging up, which proves nothing", honest)
		})
	}
}
