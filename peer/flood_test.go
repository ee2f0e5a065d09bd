package peer

import (
	"context"
	"errors"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/spvfilter/spvfilter/peer/chain"
	"github.com/spvfilter/spvfilter/peer/peertest"
)

// usage samples the process's heap and goroutines until stopped, keeping
// the peaks.
type usage struct {
	stop       chan struct{}
	done       chan struct{}
	heap       uint64
	goroutines int
}

func watchUsage() *usage {
	u := &usage{stop: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(u.done)
		tick := time.NewTicker(5 * time.Millisecond)
		defer tick.Stop()
		var ms runtime.MemStats
		for {
			runtime.ReadMemStats(&ms)
			u.heap = max(u.heap, ms.HeapInuse)
			u.goroutines = max(u.goroutines, runtime.NumGoroutine())
			select {
			case <-u.stop:
				return
			case <-tick.C:
			}
		}
	}()
	return u
}

// peaks stops the sampling and returns the peaks.
func (u *usage) peaks() (heap uint64, goroutines int) {
	close(u.stop)
	<-u.done
	return u.heap, u.goroutines
}

// baseline returns the heap in use after a collection, and the goroutines.
func baseline() (uint64, int) {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapInuse, runtime.NumGoroutine()
}

// TestFloodsAreNamed has a proxy flood the client after the handshake:
// each flood ends the connection within seconds with ErrFlooding naming
// the kind of message, and the client's heap and goroutines stay bounded
// meanwhile (before, a ping flood grew one goroutine per pong and an inv
// flood queued 256 decoded messages).
func TestFloodsAreNamed(t *testing.T) {
	needFixture(t)
	tests := []struct {
		name  string
		flood peertest.Flood
		named string
	}{
		{"pings while not reading", peertest.Flood{Kind: peertest.FloodPing}, "ping messages"},
		{"inv of 50,000 entries", peertest.Flood{Kind: peertest.FloodInv}, "inv entries"},
		{"notfound of 50,000 entries", peertest.Flood{Kind: peertest.FloodNotFound}, "notfound entries"},
		{"addr of 1,000 addresses", peertest.Flood{Kind: peertest.FloodAddr}, "addr addresses"},
		{"unknown commands of 100 kB", peertest.Flood{Kind: peertest.FloodUnknown}, "unknown-command"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := peertest.NewFlooder(t, fx.node.P2PAddr, fx.node.Params.Net, tt.flood)
			heap0, g0 := baseline()
			u := watchUsage()
			start := time.Now()
			p, err := Dial(context.Background(), Config{Addr: f.Addr, Params: fx.node.Params, Timeout: 5 * time.Second})
			if err == nil {
				defer p.Close()
				// A request meanwhile fails naming the flood too.
				_, err = p.SyncHeaders(context.Background(), chain.New(fx.node.Params))
				if err == nil {
					select {
					case <-p.Done():
					case <-time.After(10 * time.Second):
						t.Fatal("the flood was not detected within 10 s")
					}
					err = p.Err()
				}
			}
			elapsed := time.Since(start)
			heap, goroutines := u.peaks()
			checkPeerError(t, err, f.Addr, ErrFlooding)
			if !strings.Contains(err.Error(), tt.named) {
				t.Errorf("error %q does not name %q", err, tt.named)
			}
			t.Logf("%v after %v and %d flood messages; peak heap +%.1f MB, goroutines +%d",
				err, elapsed.Round(time.Millisecond), f.Sent(), float64(int64(heap)-int64(heap0))/1e6, goroutines-g0)
			if heap > heap0+64<<20 || goroutines > g0+50 {
				t.Errorf("peak heap %d MB over %d MB, %d goroutines over %d: not bounded", heap>>20, heap0>>20, goroutines, g0)
			}
		})
	}
}

// TestFloodWithinBudget: a node that announces heavily but within the
// budgets keeps its connection; requests go on, and the announcements
// reach OnAnnounce in bounded batches, never two at once.
func TestFloodWithinBudget(t *testing.T) {
	needFixture(t)
	// 100 entries every 200 ms: 500 a second, half the inv budget.
	f := peertest.NewFlooder(t, fx.node.P2PAddr, fx.node.Params.Net,
		peertest.Flood{Kind: peertest.FloodInv, Entries: 100, Interval: 200 * time.Millisecond})
	var (
		mu      sync.Mutex
		txs     int
		biggest int
		running atomic.Int32
		overlap atomic.Bool
	)
	p, err := Dial(context.Background(), Config{Addr: f.Addr, Params: fx.node.Params, Timeout: 5 * time.Second,
		OnAnnounce: func(a Announcement) {
			if running.Add(1) > 1 {
				overlap.Store(true)
			}
			defer running.Add(-1)
			time.Sleep(300 * time.Millisecond) // a slow callback: announcements merge meanwhile
			mu.Lock()
			txs += len(a.Txs)
			biggest = max(biggest, len(a.Txs))
			mu.Unlock()
		}})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	ctx := context.Background()
	end := time.Now().Add(2 * time.Second)
	for rounds := 0; time.Now().Before(end) || rounds == 0; rounds++ {
		c := chain.New(fx.node.Params)
		if _, err := p.SyncHeaders(ctx, c); err != nil {
			t.Fatalf("round %d: %v", rounds, err)
		}
		blocks := []chainhash.Hash{c.Hash(100), c.Hash(101), c.Hash(102)}
		if err := p.GetCFilters(ctx, 100, blocks, func(int, []byte) error { return nil }); err != nil {
			t.Fatalf("round %d: %v", rounds, err)
		}
		if has, err := p.HasTx(ctx, fx.pay.TxHash()); err != nil || has {
			t.Fatalf("round %d: HasTx of a confirmed transaction: %v, %v", rounds, has, err)
		}
	}
	time.Sleep(500 * time.Millisecond)
	if err := p.Err(); err != nil {
		t.Fatalf("connection ended: %v", err)
	}
	mu.Lock()
	defer mu.Unlock()
	t.Logf("%d flood messages, %d transaction hashes announced, at most %d in one call", f.Sent(), txs, biggest)
	if txs < 500 || biggest > maxPending || overlap.Load() {
		t.Fatalf("%d hashes announced, %d in one call (at most %d), overlapping calls %t", txs, biggest, maxPending, overlap.Load())
	}
}

// TestSlowAnswersShowInLatency: a node that holds each answer for just
// under the timeout answers every request, and its Latency shows it.
// The relay holds what it holds one message after another: the
// request's barrier pong (see the package documentation), held after
// its answer, must go through before the next request, whose answer it
// would hold up, so the next request waits for it (see pongsDue). A
// fixed sleep after the answer, the hold and 100 ms, left that answer
// behind a pong released late on a loaded machine, and over the
// timeout.
func TestSlowAnswersShowInLatency(t *testing.T) {
	needFixture(t)
	const timeout, delay = time.Second, 700 * time.Millisecond
	slow := peertest.NewFlooder(t, fx.node.P2PAddr, fx.node.Params.Net, peertest.Flood{Kind: peertest.SlowAnswers, Delay: delay})
	fast := dial(t, fx.node.P2PAddr, timeout)
	sp := dial(t, slow.Addr, timeout)
	c := syncHeaders(t, fast)
	stop := c.Hash(fx.tip)
	for _, p := range []*Peer{fast, sp} {
		for i := 0; i < 2; i++ {
			if _, err := p.GetCFCheckpt(context.Background(), stop, 0); err != nil {
				t.Fatalf("%s: %v", p.Addr(), err)
			}
			if !pongsDue(p, 10*delay) {
				t.Fatalf("%s: the barrier's pong did not come within %v", p.Addr(), 10*delay)
			}
		}
	}
	t.Logf("latency: direct %v, answers held %v: %v", fast.Latency(), delay, sp.Latency())
	if sp.Latency() < delay || fast.Latency() >= sp.Latency()/2 || fast.Latency() <= 0 {
		t.Fatalf("latency direct %v, slow %v (answers held %v)", fast.Latency(), sp.Latency(), delay)
	}
}

// pongsDue waits up to wait for the pongs of p's barriers sent so far,
// and reports whether they all came.
func pongsDue(p *Peer, wait time.Duration) bool {
	for end := time.Now().Add(wait); ; time.Sleep(10 * time.Millisecond) {
		p.barriers.mu.Lock()
		n := len(p.barriers.nonces)
		p.barriers.mu.Unlock()
		if n == 0 {
			return true
		}
		if time.Now().After(end) {
			return false
		}
	}
}

// TestAbandonedFiltersShowInLatency: a getcfilters whose answer trickles
// in, abandoned by its caller before the last filter, still shows in
// Latency: the node had not answered in that time, though none of the
// answer reached the request (the filters are taken on the read loop).
func TestAbandonedFiltersShowInLatency(t *testing.T) {
	needFixture(t)
	const timeout, delay, wait = 5 * time.Second, 20 * time.Millisecond, 300 * time.Millisecond
	slow := peertest.NewFlooder(t, fx.node.P2PAddr, fx.node.Params.Net, peertest.Flood{Kind: peertest.SlowAnswers, Delay: delay})
	fast := dial(t, fx.node.P2PAddr, timeout)
	sp := dial(t, slow.Addr, timeout)
	c := syncHeaders(t, fast)
	n := min(int(fx.tip), 100)
	blocks := make([]chainhash.Hash, n)
	for i := range blocks {
		blocks[i] = c.Hash(int32(i + 1))
	}
	if err := fast.GetCFilters(context.Background(), 1, blocks, func(int, []byte) error { return nil }); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	taken := 0
	err := sp.GetCFilters(ctx, 1, blocks, func(int, []byte) error { taken++; return nil })
	t.Logf("latency: direct %v, trickling answer abandoned after %v (%d of %d filters, %v): %v", fast.Latency(), wait, taken, n, err, sp.Latency())
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("the trickled answer ended with %v, want it abandoned", err)
	}
	if sp.Latency() < wait*3/4 || fast.Latency() >= sp.Latency()/2 {
		t.Fatalf("latency direct %v, abandoned after %v: %v", fast.Latency(), wait, sp.Latency())
	}
}
