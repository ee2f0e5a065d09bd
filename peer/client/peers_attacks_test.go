package client

import (
	"context"
	"net"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/spvfilter/spvfilter/peer/peertest"
)

// The tests of this file play peers that cost the client time or trust
// without a lie a block could disprove: a silent proxy, colluders, one
// node under two addresses, slow and trickling peers.

// TestSilentProxyFailsConnect: a SOCKS5 proxy that accepts connections
// and never answers. Connect fails within the timeout, naming the proxy,
// and nothing is dialled around it.
func TestSilentProxyFailsConnect(t *testing.T) {
	needFixture(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var held []net.Conn
	var mu sync.Mutex
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			held = append(held, c)
			mu.Unlock()
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		mu.Lock()
		for _, c := range held {
			c.Close()
		}
		mu.Unlock()
	})
	start := time.Now()
	_, err = Connect(context.Background(), Config{Peers: []string{fx.node.P2PAddr}, Params: fx.node.Params, Timeout: 500 * time.Millisecond,
		Proxy: "socks5://" + ln.Addr().String()})
	took := time.Since(start)
	t.Logf("Connect through a silent proxy: %v after %v", err, took.Round(time.Millisecond))
	if err == nil || !strings.Contains(err.Error(), ln.Addr().String()) || took > 10*time.Second {
		t.Errorf("Connect through a silent proxy: %v after %v; want an error naming the proxy within the timeout", err, took)
	}
}

// TestSamePeerTwiceIsOnePeer: one lying node given twice under two
// spellings of its address (a port with a leading zero, "localhost" for
// 127.0.0.1). The client uses it once, so the result, which misses the
// payment the liar hides, says it rests on one peer instead of counting
// the node as compared with itself.
func TestSamePeerTwiceIsOnePeer(t *testing.T) {
	needFixture(t)
	hFund := fx.height[fx.fundAlice.TxHash()]
	liar := peertest.NewLiar(t, fx.node.P2PAddr, fx.node.Params.Net, peertest.ForgeFilter(t, fx.node, hFund, peertest.EmptyFilter)).Addr
	_, port, err := net.SplitHostPort(liar)
	if err != nil {
		t.Fatal(err)
	}
	for _, other := range []string{"127.0.0.1:0" + port, "localhost:" + port} {
		t.Run(other, func(t *testing.T) {
			c := connect(t, 0, liar, other)
			res, err := bip157(t, c)
			if err != nil {
				t.Fatal(err)
			}
			if hasMatch(res, fx.fundAlice.TxHash()) {
				t.Fatal("the payment was found: the liar did not lie")
			}
			if !hasKind(res.Warnings, WarningOnePeer) {
				t.Errorf("one node under two addresses: the payment at %d is missing and no warning says the result rests on one peer (peers %+v, warnings %q)",
					hFund, res.Peers, res.Warnings)
			}
		})
	}
}

// TestSlowPeerDoesNotHoldScan: a peer that holds every answer for three
// quarters of the timeout (it would never be dropped for a timeout: each
// answer arrives in time) beside one fast honest peer. Once the fast peer
// has answered, the slow one has a grace and is then left out of the
// comparison, so the scan waits for no more than two of its answers. The
// figures are logged.
func TestSlowPeerDoesNotHoldScan(t *testing.T) {
	needFixture(t)
	const timeout, delay = 2 * time.Second, 1500 * time.Millisecond
	measure := func(peers ...string) (time.Duration, *ScanResult) {
		t.Helper()
		c := connect(t, timeout, peers...)
		start := time.Now()
		res, err := bip157(t, c)
		if err != nil {
			t.Fatal(err)
		}
		return time.Since(start), res
	}
	honest := honestPeers(t, 1)[0]
	alone, _ := measure(honest)
	slow := peertest.NewFlooder(t, fx.node.P2PAddr, fx.node.Params.Net, peertest.Flood{Kind: peertest.SlowAnswers, Delay: delay})
	both, res := measure(honest, slow.Addr)
	checkMatches(t, res, fx.want)
	st := status(t, res, slow.Addr)
	t.Logf("scan of %d blocks: %v with the fast peer alone, %v beside a peer holding each answer %v (timeout %v): %.1fx; the slow peer: %+v",
		res.BlocksScanned, alone.Round(time.Millisecond), both.Round(time.Millisecond), delay, timeout, float64(both)/float64(alone), st)
	if both > alone+2*delay {
		t.Errorf("the scan waited %v for a slow peer (each answer held %v) beside a fast one that served it alone in %v: want at most two of its answers waited for", both, delay, alone)
	}
}

// TestTricklerDoesNotHoldFilterBatch: a peer that answers every small
// request at once but sends each filter of a getcfilters answer 1.5 ms
// apart, so that a batch of 1,000 filters takes seconds, near the 3 s
// timeout. Its
// latency before the download is a few milliseconds, so it is given a
// batch like the fast honest peer; a batch a peer holds too long is asked
// of a free peer too and the first answer counts, so a scan of 2,000
// blocks (two batches) beside the trickler takes at most a second more
// than the honest peer alone. The figures are logged.
func TestTricklerDoesNotHoldFilterBatch(t *testing.T) {
	node := peertest.StartBtcd(t, peertest.WithArgs("--nobanning"))
	node.Generate(t, 2000) // two batches of 1,000 filters
	const timeout = 3 * time.Second
	measure := func(peers ...string) (time.Duration, *ScanResult) {
		t.Helper()
		c := connectTo(t, node, timeout, peers...)
		start := time.Now()
		res, err := c.ScanBIP157(context.Background(), ScanRequest{Watch: []WatchItem{ScriptItem(peertest.NewKey("alice").PkScript())}, From: 1, To: 2000})
		if err != nil {
			t.Fatal(err)
		}
		return time.Since(start), res
	}
	alone, _ := measure(node.P2PAddr)
	trickler := peertest.NewFlooder(t, node.P2PAddr, node.Params.Net, peertest.Flood{Kind: peertest.SlowAnswers, Delay: 1500 * time.Microsecond})
	var times []time.Duration
	var last *ScanResult
	for i := 0; i < 2; i++ {
		d, res := measure(node.P2PAddr, trickler.Addr)
		times = append(times, d.Round(time.Millisecond))
		last = res
	}
	st := status(t, last, trickler.Addr)
	t.Logf("scan of 2,000 blocks: %v with the honest peer alone; %v beside the trickler (timeout %v); the trickler: %+v", alone.Round(time.Millisecond), times, timeout, st)
	if slices.Max(times) > alone+time.Second {
		t.Errorf("a trickler that costs itself nothing stretched a %v scan to %v: want at most a second more", alone.Round(time.Millisecond), slices.Max(times))
	}
}

// TestTricklerAheadServesItsBatch: a trickler in front of the node one
// block ahead, beside the fixture's fast node. The first batch of filters
// (0..999), which the trickler holds too long, is asked of the fast node
// too, and the trickler's request is cancelled, its connection with it;
// the trickler alone holds the last block, so it is dialled again and
// serves the last batch. The scan reaches that block, finds the payment
// there, and names the block as resting on the trickler alone.
func TestTricklerAheadServesItsBatch(t *testing.T) {
	a := needAhead(t)
	trickler := peertest.NewFlooder(t, a.node.P2PAddr, a.node.Params.Net, peertest.Flood{Kind: peertest.SlowAnswers, Delay: 1500 * time.Microsecond})
	c := connect(t, 5*time.Second, fx.node.P2PAddr, trickler.Addr)
	res, err := c.ScanBIP157(context.Background(), ScanRequest{Watch: []WatchItem{ScriptItem(peertest.NewKey("alice").PkScript())}, To: -1})
	if err != nil {
		t.Fatal(err)
	}
	if res.To != a.top || !hasMatch(res, a.pay.TxHash()) {
		t.Fatalf("scanned to %d (want %d), payment of the last block found %v; warnings %q", res.To, a.top, hasMatch(res, a.pay.TxHash()), res.Warnings)
	}
	want := OnePeer{From: a.top, To: a.top, Peer: trickler.Addr}
	if !slices.Equal(res.OnePeer, []OnePeer{want}) {
		t.Errorf("ScanResult.OnePeer %+v, want %+v", res.OnePeer, want)
	}
}
