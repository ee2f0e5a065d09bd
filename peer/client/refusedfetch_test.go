package client

import (
	"context"
	"errors"
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

// linesLog is a client's log kept line by line (and written to the
// test's log too).
type linesLog struct {
	t     *testing.T
	start time.Time
	mu    sync.Mutex
	lines []string
}

func (l *linesLog) Write(b []byte) (int, error) {
	l.mu.Lock()
	l.lines = append(l.lines, strings.TrimRight(string(b), "\n"))
	l.mu.Unlock()
	l.t.Logf("%6.3fs %s", time.Since(l.start).Seconds(), strings.TrimRight(string(b), "\n"))
	return len(b), nil
}

// count returns how many lines hold every one of parts.
func (l *linesLog) count(parts ...string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := 0
	for _, line := range l.lines {
		all := true
		for _, p := range parts {
			all = all && strings.Contains(line, p)
		}
		if all {
			n++
		}
	}
	return n
}

// TestRefusedRequestReplanned: a download gives one peer two requests,
// and the peer's node hangs up on every connection once it answered a
// request's worth of blocks (peer.MaxBlocksPerRequest), its connections
// never lasting. Its first request is answered; the second finds the
// connection ended, its next dial far off (the ends in a row double
// it), and the pool refuses it (*pool.NotDialledError). Beside it an
// honest peer holding every block, and a peer behind the range (counted
// among the live peers, so the window of FetchBlocks has room for the
// two requests, holding none of its blocks). The refused blocks are to
// be asked of the honest peer: every fetch succeeds with every block
// right, the refusing peer is named and not dropped, the honest one
// unharmed. With an explicit Config.FetchSpread the honest peer cannot
// take (half of the blocks, which it was asked for already), the fetch
// fails with *SpreadError naming the refusal, nothing dropped either.
// With two such peers and no honest one, both refuse: the fetch fails
// at once with ErrNoPeers, naming each refusal, and drops neither.
func TestRefusedRequestReplanned(t *testing.T) {
	needFixture(t)
	behind := needBehind(t)
	const from = behindHeight + 1
	to := int32(from + 3*peer.MaxBlocksPerRequest - 1) // one window of the 3 live peers
	if to > fx.tip {
		t.Fatalf("the fixture's chain ends at %d, below %d", fx.tip, to)
	}
	const (
		fetched = iota // every fetch succeeds
		spread         // fails with *SpreadError
		noPeers        // fails with ErrNoPeers
	)
	for _, tt := range []struct {
		name   string
		spread float64
		liars  int // peers that hang up, beside the honest one (with 1) or alone (2)
		want   int
	}{
		{"default spread", 0, 1, fetched},
		{"share of 3/4", 0.75, 1, fetched},
		{"share of 1/2", 0.5, 1, spread},
		{"every peer refuses", 0, 2, noPeers},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var served atomic.Int32
			var liars []string
			for i := range tt.liars {
				conns := 0
				liars = append(liars, relayFramesEach(t, fx.node.P2PAddr, 0, func() func(string, []byte) bool {
					n := 0
					conns++
					k := conns
					return func(cmd string, _ []byte) bool {
						if cmd != "block" {
							return false
						}
						served.Add(1)
						n++
						if n == peer.MaxBlocksPerRequest {
							t.Logf("liar %d's connection %d hangs up after %d blocks", i, k, n)
						}
						return n == peer.MaxBlocksPerRequest
					}
				}))
			}
			peers := append(slices.Clone(liars), behind.P2PAddr)
			if tt.liars == 1 {
				peers = append(peers, fx.node.P2PAddr)
			}
			log := &linesLog{t: t, start: time.Now()}
			c := connectWith(t, Config{Peers: peers, Params: fx.node.Params, Timeout: 10 * time.Second, FetchSpread: tt.spread, Log: log})
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			if err := c.Start(ctx); err != nil {
				t.Fatal(err)
			}
			// liveAgain waits until the pool dialled the liars again (Run,
			// after their backoff) and lists them: else the plan leaves
			// them out.
			liveAgain := func() {
				t.Helper()
				waitServing(ctx, t, c, to, liars...)
			}
			fetch := func(from, to int32) error {
				n := from
				return c.FetchBlocks(ctx, from, to, func(h int32, b *wire.MsgBlock) error {
					if h != n || b.BlockHash() != c.chain.Hash(h) {
						t.Errorf("height %d: block %v, want height %d's %v", h, b.BlockHash(), n, c.chain.Hash(n))
					}
					n++
					return nil
				})
			}
			// One request a peer (16 blocks of 32 over 2): each liar's
			// first connection ends, which the pool counts, and dials
			// again.
			liveAgain()
			if err := fetch(from, from+2*peer.MaxBlocksPerRequest-1); err != nil && tt.want != noPeers {
				t.Fatalf("the first fetch, one request a peer: %v", err)
			}
			// Each round each liar hangs up after its first request. Its
			// second is refused when the client sees the end before
			// sending it; sent first (a race on the loopback), it fails
			// with the connection, in flight, which is not what is tested
			// here (TestInFlightEndReplanned is): such a round is counted
			// apart. Rounds
			// go on until wantRefused were refused by every liar (the
			// backoff doubling each round), at most maxRounds.
			const maxRounds, wantRefused = 6, 3
			failed, refusals, inFlight, rounds := 0, 0, 0, 0
			for round := 0; round < maxRounds && refusals < wantRefused; round++ {
				rounds++
				liveAgain()
				before := make([]int, len(liars))
				for i, addr := range liars {
					before[i] = log.count(addr, "not dialled again for a request")
				}
				err := fetch(from, to)
				refused := true
				for i, addr := range liars {
					refused = refused && log.count(addr, "not dialled again for a request") > before[i]
				}
				t.Logf("round %d: refused by every liar %v: %v", round, refused, err)
				var nd *pool.NotDialledError
				switch {
				case !refused:
					if err != nil {
						inFlight++
					}
					continue
				case tt.want == fetched:
					if err != nil {
						failed++
						t.Errorf("round %d: %v", round, err)
					}
				case tt.want == spread:
					var se *SpreadError
					if !errors.As(err, &se) || !errors.As(err, &nd) || nd.Peer != liars[0] {
						failed++
						t.Errorf("round %d: %v, want a *SpreadError naming %s's refusal", round, err, liars[0])
					}
				case tt.want == noPeers:
					named := err != nil && errors.As(err, &nd)
					for _, addr := range liars {
						named = named && strings.Contains(err.Error(), "peer "+addr+": not dialled again for a request")
					}
					if !errors.Is(err, ErrNoPeers) || !named {
						failed++
						t.Errorf("round %d: %v, want ErrNoPeers naming the refusal of each of %v", round, err, liars)
					}
				}
				refusals++
			}
			dropped := 0
			for _, addr := range liars {
				dropped += log.count("dropped "+addr, "not dialled again")
			}
			t.Logf("%d fetches: refused by every liar in %d, %d of them not as they should; liars dropped for it %d times; %d fetches failed with a request in flight; the liars served %d blocks",
				rounds, refusals, failed, dropped, inFlight, served.Load())
			if refusals == 0 {
				t.Fatalf("no fetch of %d refused by every liar: the attack did not run", rounds)
			}
			honest := ""
			if tt.liars == 1 {
				honest = fx.node.P2PAddr
			}
			notCharged(t, c, liars, dropped, "a refusal, which charges nothing", honest)
		})
	}
}
