package client

import (
	"context"
	"errors"
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
func TestRefusedRequestReplanned(t *testing.T) {
	needFixture(t)
	behind := needBehind(t)
	const from = behindHeight + 1
	to := int32(from + 3*peer.MaxBlocksPerRequest - 1) // one window of the 3 live peers
	if to > fx.tip {
		t.Fatalf("the fixture's chain ends at %d, below %d", fx.tip, to)
	}
	for _, tt := range []struct {
		name    string
		spread  float64
		spreads bool // the refused blocks fit the honest peer's share
	}{
		{"default spread", 0, true},
		{"share of 3/4", 0.75, true},
		{"share of 1/2", 0.5, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var served, conns atomic.Int32
			liar := relayFramesEach(t, fx.node.P2PAddr, 0, func() func(string, []byte) bool {
				n, k := 0, conns.Add(1)
				return func(cmd string, _ []byte) bool {
					if cmd != "block" {
						return false
					}
					served.Add(1)
					n++
					if n == peer.MaxBlocksPerRequest {
						t.Logf("the relay's connection %d hangs up after %d blocks", k, n)
					}
					return n == peer.MaxBlocksPerRequest
				}
			})
			log := &linesLog{t: t, start: time.Now()}
			c := connectWith(t, Config{Peers: []string{fx.node.P2PAddr, liar, behind.P2PAddr}, Params: fx.node.Params,
				Timeout: 10 * time.Second, FetchSpread: tt.spread, Log: log})
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			if err := c.Start(ctx); err != nil {
				t.Fatal(err)
			}
			lm := clientMember(t, c, liar)
			// liveAgain waits until the pool dialled the liar again (Run,
			// after its backoff) and lists it: else the plan leaves it out.
			liveAgain := func() {
				t.Helper()
				for len(c.pool.Keep([]*pool.Member{lm})) == 0 || c.views.tip(lm) < to {
					if ctx.Err() != nil {
						t.Fatalf("%s never live again: %+v", liar, c.pool.Status(lm))
					}
					time.Sleep(20 * time.Millisecond)
				}
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
			// One request of the liar's (16 blocks of 32): its first
			// connection ends, which the pool counts, and dials again.
			liveAgain()
			if err := fetch(from, from+2*peer.MaxBlocksPerRequest-1); err != nil {
				t.Fatalf("the first fetch, one request a peer: %v", err)
			}
			// Each round the liar hangs up after its first request. Its
			// second is refused when the client sees the end before
			// sending it; sent first (a race on the loopback), it fails
			// with the connection, as any request in flight, which is not
			// what is tested here: such a round is counted apart.
			const rounds = 4
			refusing := []string{liar, "not dialled again for a request"}
			failed, refusals, inFlight := 0, 0, 0
			for round := range rounds {
				liveAgain()
				before := log.count(refusing...)
				err := fetch(from, to)
				refused := log.count(refusing...) > before
				t.Logf("round %d: refused %v: %v", round, refused, err)
				var nd *pool.NotDialledError
				switch {
				case !refused:
					if err != nil {
						inFlight++
						if errors.As(err, &nd) {
							t.Errorf("round %d: %v, a refusal not logged", round, err)
						}
					}
					continue
				case tt.spreads && err != nil:
					failed++
					t.Errorf("round %d: %v", round, err)
				case !tt.spreads:
					var se *SpreadError
					if !errors.As(err, &se) || !errors.As(err, &nd) || nd.Peer != liar {
						failed++
						t.Errorf("round %d: %v, want a *SpreadError naming %s's refusal", round, err, liar)
					}
				}
				refusals++
			}
			dropped := log.count("dropped "+liar, "not dialled again")
			t.Logf("%d fetches: %s refused in %d, %d of them failed (not as they should), dropped for it %d times; %d fetches failed with a request in flight; it served %d blocks",
				rounds, liar, refusals, failed, dropped, inFlight, served.Load())
			if refusals == 0 {
				t.Fatalf("%s refused no request in %d fetches: the attack did not run", liar, rounds)
			}
			if dropped > 0 {
				t.Errorf("%s dropped %d times for a refusal, which charges nothing", liar, dropped)
			}
			if st := c.pool.Status(lm); st.Banned {
				t.Errorf("%s banned: %s", liar, st.Reason)
			}
			unharmedAt(t, c, fx.node.P2PAddr)
		})
	}
}
