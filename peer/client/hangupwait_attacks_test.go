package client

import (
	"context"
	"encoding/binary"
	"io"
	"net"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// hangUpAfter is how long after its answer answerThenHangUp hangs up.
const hangUpAfter = 50 * time.Millisecond

// answerThenHangUp is a loopback proxy in front of the node at target
// that forwards everything but closes each connection right after the
// node's first message of the command cmd went through (once the client
// took it): a peer that answers every request of that kind and
// then hangs up, hangUpAfter later. It returns its address and how many
// such answers it served.
func answerThenHangUp(t *testing.T, target, cmd string) (string, *atomic.Int32) {
	t.Helper()
	var n atomic.Int32
	addr := relayFrames(t, target, func(got string, _ []byte) bool {
		if got != cmd {
			return false
		}
		n.Add(1)
		return true
	})
	return addr, &n
}

// relayFrames starts a loopback relay to the node at target that passes
// the client's bytes on as they come and the node's message by message:
// pass sees each message's command and body (which it may change) before
// it is written, and a message it returns true for is followed,
// hangUpAfter after it was written, by the relay closing the client's
// connection. It returns the relay's address.
func relayFrames(t *testing.T, target string, pass func(cmd string, body []byte) (hangUp bool)) string {
	t.Helper()
	return relayFramesEach(t, target, hangUpAfter, func() func(string, []byte) bool { return pass })
}

// relayFramesEach is relayFrames with a pass of each connection's own
// (newPass, called as the connection comes), and the hang-up after
// after, at once for 0.
func relayFramesEach(t *testing.T, target string, after time.Duration, newPass func() func(cmd string, body []byte) (hangUp bool)) string {
	t.Helper()
	addr, _ := listenLoopback(t, func(g *gateConns, c net.Conn) {
		pass := newPass()
		u, err := net.Dial("tcp", target)
		if err != nil {
			c.Close()
			return
		}
		g.add(u)
		go io.Copy(u, c)
		go func() {
			defer c.Close()
			defer u.Close()
			hdr := make([]byte, 24)
			for {
				if _, err := io.ReadFull(u, hdr); err != nil {
					return
				}
				body := make([]byte, binary.LittleEndian.Uint32(hdr[16:20]))
				if _, err := io.ReadFull(u, body); err != nil {
					return
				}
				hangUp := pass(strings.TrimRight(string(hdr[4:16]), "\x00"), body)
				if _, err := c.Write(append(hdr, body...)); err != nil {
					return
				}
				switch {
				case hangUp && after == 0:
					return
				case hangUp:
					time.AfterFunc(after, func() { c.Close() })
				}
			}
		}()
	})
	return addr
}

// TestHangUpDelaysNoRequest: a peer that answers each request and then
// hangs up, beside an honest one. A request that picks it before the
// pool's look noticed the end used to count the end (as it should) and
// then wait, inside the request, for the backoff that end set before
// dialling it again: the hang-ups never let a connection last, so the
// backoff doubled each time, and the user's GetBlock, which the honest
// peer answers in milliseconds, waited 0.5 s, 1 s, 2 s, 4 s... for the
// peer that hangs up. A request no longer waits a backoff the node's own
// end set beyond a first failure's (half a second): it fails over to
// another peer.
func TestHangUpDelaysNoRequest(t *testing.T) {
	needFixture(t)
	for _, tt := range []struct {
		name    string
		service bool // the pool's Run looks after the members too
	}{
		{"requests alone", false},
		{"service started", true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			liar, served := answerThenHangUp(t, fx.node.P2PAddr, "block")
			c := connect(t, 10*time.Second, fx.node.P2PAddr, liar)
			ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
			defer cancel()
			if tt.service {
				if err := c.Start(ctx); err != nil {
					t.Fatal(err)
				}
			}
			const asks = 30
			var slowest time.Duration
			var slowestAt int
			var took []time.Duration
			for i := 1; i <= asks && i <= int(fx.tip); i++ {
				time.Sleep(2 * hangUpAfter) // the hang-up, most often before the pool's look
				start := time.Now()
				_, err := c.GetBlock(ctx, c.chain.Hash(int32(i)))
				took = append(took, time.Since(start).Round(time.Millisecond))
				if err != nil {
					t.Fatalf("GetBlock of height %d, after %v: %v (each took %v)", i, took[len(took)-1], err, took)
				}
				if took[len(took)-1] > slowest {
					slowest, slowestAt = took[len(took)-1], i
				}
				if slowest > 10*time.Second {
					break // the hole is shown; the next waits would double
				}
			}
			honestUnharmed(t, c)
			t.Logf("%d GetBlocks, each took %v; the peer that hangs up served %d blocks", len(took), took, served.Load())
			if served.Load() == 0 {
				t.Fatal("the peer that hangs up was never asked: the attack did not run")
			}
			if slowest > 900*time.Millisecond {
				t.Errorf("a GetBlock took %v (height %d), the honest peer live: a request waited for the backoff of a peer that hangs up", slowest, slowestAt)
			}
		})
	}
}

// TestHangUpDelaysNoHeaderSync: a peer that answers each header sync and
// then hangs up, beside an honest one. A header sync round found its
// connection ended before the pool's look and dialled it again within
// the round (Pool.Redial), waiting its backoff there, which doubles as
// its connections never last, until the round cut it off as too slow:
// each sync waited for it. The round no longer waits a backoff the
// node's own end set beyond a first failure's.
func TestHangUpDelaysNoHeaderSync(t *testing.T) {
	needFixture(t)
	liar, served := answerThenHangUp(t, fx.node.P2PAddr, "headers")
	c := connect(t, 10*time.Second, fx.node.P2PAddr, liar)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	if err := c.Start(ctx); err != nil {
		t.Fatal(err)
	}
	var took []time.Duration
	var slowest time.Duration
	for range 12 {
		time.Sleep(2 * hangUpAfter)
		start := time.Now()
		if _, err := c.SyncHeaders(ctx); err != nil {
			t.Fatalf("SyncHeaders: %v (each took %v)", err, took)
		}
		took = append(took, time.Since(start).Round(time.Millisecond))
		slowest = max(slowest, took[len(took)-1])
	}
	honestUnharmed(t, c)
	t.Logf("%d header syncs, each took %v; the peer that hangs up served %d headers", len(took), took, served.Load())
	if served.Load() < 2 {
		t.Fatal("the peer that hangs up was not asked again: the attack did not run")
	}
	if slowest > 900*time.Millisecond {
		t.Errorf("a header sync took %v, the honest peer live: it waited for the backoff of a peer that hangs up", slowest)
	}
}

// honestUnharmed logs c's members, and fails the test if the honest one
// (the node's own address) is not live or carries a reason.
func honestUnharmed(t *testing.T, c *Client) {
	t.Helper()
	unharmedAt(t, c, fx.node.P2PAddr)
}

// TestHangUpDelaysNoAnnounce: a peer that answers each block request and
// then hangs up, beside an honest one; between the blocks asked, the
// wallet announces a transaction again. Announce dialled every peer whose
// connection had ended again first (Pool.Redial), waiting, one peer after
// another, for the backoff the hang-ups set, which doubles as the peer's
// connections never last: an announcement, which waits for no answer,
// took that long. It now leaves such a peer out unless its next dial is
// due within a first failure's backoff.
func TestHangUpDelaysNoAnnounce(t *testing.T) {
	needFixture(t)
	for _, tt := range []struct {
		name    string
		timeout time.Duration // the client's
		do      func(ctx context.Context, c *Client)
	}{
		{"announce", 10 * time.Second, func(ctx context.Context, c *Client) { c.Announce(ctx, orphanTx()) }},
	} {
		t.Run(tt.name, func(t *testing.T) {
			liar, served := answerThenHangUp(t, fx.node.P2PAddr, "block")
			c := connect(t, tt.timeout, fx.node.P2PAddr, liar)
			ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
			defer cancel()
			var took []time.Duration
			for i := 1; i <= 8 && i <= int(fx.tip); i++ {
				// The liar answers one block and hangs up (when picked).
				if _, err := c.GetBlock(ctx, c.chain.Hash(int32(i))); err != nil {
					t.Fatalf("GetBlock of height %d: %v", i, err)
				}
				time.Sleep(2 * hangUpAfter)
				start := time.Now()
				tt.do(ctx, c)
				took = append(took, time.Since(start).Round(time.Millisecond))
				if slices.Max(took)-slices.Min(took) > 10*time.Second {
					break // the hole is shown; the next waits would double
				}
			}
			honestUnharmed(t, c)
			t.Logf("%d %ss, each took %v; the peer that hangs up served %d blocks", len(took), tt.name, took, served.Load())
			if served.Load() == 0 {
				// Once it hung up, whether it is asked again rests on
				// GetBlock's pick and on its backoff: once is the attack.
				t.Fatal("the peer that hangs up was never asked: the attack did not run")
			}
			if spread := slices.Max(took) - slices.Min(took); spread > 900*time.Millisecond {
				t.Errorf("the slowest %s took %v more than the fastest, the honest peer live: it waited for the backoff of a peer that hangs up", tt.name, spread)
			}
		})
	}
}
