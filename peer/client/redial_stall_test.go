package client

import (
	"context"
	"io"
	"net"
	"sync/atomic"
	"testing"
	"time"

	"github.com/spvfilter/spvfilter/peer/peertest"
)

// gate forwards its first connection to target and holds every later one
// silent (a peer that lets itself be redialled, then stalls the handshake).
func gate(t *testing.T, target string) (string, *atomic.Int32) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	var n atomic.Int32
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			t.Cleanup(func() { c.Close() })
			if n.Add(1) > 1 {
				go io.Copy(io.Discard, c)
				continue
			}
			u, err := net.Dial("tcp", target)
			if err != nil {
				c.Close()
				continue
			}
			t.Cleanup(func() { u.Close() })
			go io.Copy(u, c)
			go io.Copy(c, u)
		}
	}()
	return ln.Addr().String(), &n
}

// TestLostBatchRedialsOnlyWhenNeeded: a trickler whose batch of filters
// a fast peer served first, behind a gate that holds every later
// connection silent. The trickler is not dialled again for batches the
// fast peer can serve, so its stalled handshake costs the scan at most
// the grace of a header sync, not a whole handshake timeout.
func TestLostBatchRedialsOnlyWhenNeeded(t *testing.T) {
	node := peertest.StartBtcd(t, peertest.WithArgs("--nobanning"))
	node.Generate(t, 2000)
	const timeout = 3 * time.Second
	measure := func(peers ...string) time.Duration {
		c := connectTo(t, node, timeout, peers...)
		c.cfg.Log = tlog{t}
		start := time.Now()
		res, err := c.ScanBIP157(context.Background(), ScanRequest{Watch: []WatchItem{ScriptItem(peertest.NewKey("alice").PkScript())}, From: 1, To: 2000})
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("warnings %q", res.Warnings)
		return time.Since(start)
	}
	alone := measure(node.P2PAddr)
	trickler := peertest.NewFlooder(t, node.P2PAddr, node.Params.Net, peertest.Flood{Kind: peertest.SlowAnswers, Delay: 1500 * time.Microsecond})
	addr, n := gate(t, trickler.Addr)
	d := measure(node.P2PAddr, addr)
	t.Logf("alone %v, beside a trickler that stalls its redial: %v (connections to it: %d)", alone.Round(time.Millisecond), d.Round(time.Millisecond), n.Load())
	if d > alone+timeout-time.Second/2 {
		t.Errorf("scan stretched from %v to %v by a redial the peer stalls (timeout %v)", alone.Round(time.Millisecond), d.Round(time.Millisecond), timeout)
	}
}

type tlog struct{ t *testing.T }

func (l tlog) Write(b []byte) (int, error) { l.t.Logf("LOG %s", b); return len(b), nil }
