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

// slowGate forwards its first connection to target at once, later ones
// after delay (a redial whose handshake takes a while).
func slowGate(t *testing.T, target string, delay time.Duration) (string, *atomic.Int32) {
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
			k := n.Add(1)
			go func() {
				if k > 1 {
					time.Sleep(delay)
				}
				u, err := net.Dial("tcp", target)
				if err != nil {
					c.Close()
					return
				}
				t.Cleanup(func() { u.Close() })
				go io.Copy(u, c)
				io.Copy(c, u)
			}()
		}
	}()
	return ln.Addr().String(), &n
}

// TestBannedDuringRedialStaysDisconnected: BanPeer while the download
// dials again a peer whose batch another served first: the new
// connection is closed, and the banned peer holds none after the scan.
func TestBannedDuringRedialStaysDisconnected(t *testing.T) {
	node := peertest.StartBtcd(t, peertest.WithArgs("--nobanning"))
	node.Generate(t, 3000)
	trickler := peertest.NewFlooder(t, node.P2PAddr, node.Params.Net, peertest.Flood{Kind: peertest.SlowAnswers, Delay: 1500 * time.Microsecond})
	addr, n := slowGate(t, trickler.Addr, time.Second)
	c := connectTo(t, node, 5*time.Second, node.P2PAddr, addr)
	c.cfg.Log = tlog{t}
	done := make(chan error, 1)
	go func() {
		_, err := c.ScanBIP157(context.Background(), ScanRequest{Watch: []WatchItem{ScriptItem(peertest.NewKey("alice").PkScript())}, From: 1, To: 3000})
		done <- err
	}()
	for n.Load() < 2 {
		select {
		case err := <-done:
			t.Fatalf("scan ended before a redial (err %v)", err)
		case <-time.After(10 * time.Millisecond):
		}
	}
	if err := c.BanPeer(addr, "test: banned by the user during the scan"); err != nil {
		t.Fatal(err)
	}
	err := <-done
	t.Logf("scan: %v; connections to the banned peer: %d", err, n.Load())
	time.Sleep(200 * time.Millisecond)
	c.mu.Lock()
	var open bool
	for _, m := range c.members {
		if m.addr == addr && m.p != nil {
			select {
			case <-m.p.Done():
			default:
				open = true
			}
			t.Logf("member banned=%v err=%v connection open=%v", m.banned, m.err, open)
		}
	}
	c.mu.Unlock()
	if open {
		t.Errorf("a peer banned during the scan holds a live connection after it (redialled by the download)")
	}
}
