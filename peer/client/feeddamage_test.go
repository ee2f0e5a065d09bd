package client

import (
	"context"
	"io"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/btcsuite/btcd/wire"
	"github.com/spvfilter/spvfilter/peer/peertest"
)

// refusingRelay relays connections to target, but closes the nth it
// accepts at once (counted from 1): a dial of it fails in its handshake.
type refusingRelay struct {
	addr string

	mu       sync.Mutex
	accepted int
	refused  bool
}

// newRefusingRelay starts a refusingRelay to target that refuses its nth
// connection; it stops when the test ends.
func newRefusingRelay(t *testing.T, target string, nth int) *refusingRelay {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	r := &refusingRelay{addr: ln.Addr().String()}
	var wg sync.WaitGroup
	var conns []net.Conn
	var cmu sync.Mutex
	track := func(c net.Conn) {
		cmu.Lock()
		conns = append(conns, c)
		cmu.Unlock()
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			r.mu.Lock()
			r.accepted++
			refuse := r.accepted == nth
			r.refused = r.refused || refuse
			r.mu.Unlock()
			if refuse {
				c.Close()
				continue
			}
			node, err := net.Dial("tcp", target)
			if err != nil {
				c.Close()
				continue
			}
			track(c)
			track(node)
			wg.Add(2)
			go func() {
				defer wg.Done()
				io.Copy(node, c)
				node.Close()
			}()
			go func() {
				defer wg.Done()
				io.Copy(c, node)
				c.Close()
			}()
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		cmu.Lock()
		for _, c := range conns {
			c.Close()
		}
		cmu.Unlock()
		wg.Wait()
	})
	return r
}

// didRefuse reports whether the relay refused its connection.
func (r *refusingRelay) didRefuse() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.refused
}

// TestFeedFatHashesDamagedRedialRefused is
// TestFeedFatHashesDamagedNotBanned where the first dial after the
// damage fails (the link refuses its second connection, as a loaded node
// may be slow to take one): the feed's request for the first segment's
// filter hashes is damaged on the way, which ends the connection, and the
// verification's own request for them must not be the dead connection's
// damage again. The peer must be dialled again (after its backoff) and
// asked again, the scan succeed and find every payment to alice, and the
// peer not be banned nor dropped; the segment's hashes are asked twice
// in all.
func TestFeedFatHashesDamagedRedialRefused(t *testing.T) {
	r := newFedChain(t, 2003)
	filter := fatFilter(t, 7_700)
	forge := peertest.Forge(t, r.node, 1, func(h int32, _ *wire.MsgBlock) bool { return h <= wire.CFCheckptInterval && h != 102 },
		func(*wire.MsgBlock) []byte { return filter })
	l := peertest.NewLiar(t, r.node.P2PAddr, r.node.Params.Net, forge)
	d := peertest.NewDamager(t, l.Addr, wire.CmdCFHeaders, 200)
	rr := newRefusingRelay(t, d.Addr, 2)
	c := connectTo(t, r.node, time.Minute, rr.addr)
	res, err := c.ScanBIP157(context.Background(), ScanRequest{Watch: []WatchItem{ScriptItem(r.alice.PkScript())}, From: 0, To: -1})
	hs, cf := cfRequests(t, l, c)
	st := peerStatus(c, rr.addr)
	t.Logf("getcfheaders %v, getcfilters %v; banned %v (%s); error %v", hs, cf, st.Banned, st.Reason, err)
	if !d.Damaged() {
		t.Fatal("no cfheaders passed the damaging link")
	}
	if !rr.didRefuse() {
		t.Fatal("the relay refused no dial: the redial after the damage was not tested")
	}
	if st.Banned {
		t.Fatalf("the peer behind the damaging link was banned: %s", st.Reason)
	}
	if err != nil {
		t.Fatal(err)
	}
	checkFound(t, res, alicePaid(t, r.node, r.alice, res.To))
	n := 0
	for _, q := range hs {
		if q == [2]int32{0, wire.CFCheckptInterval} {
			n++
		}
	}
	if n != 2 {
		t.Errorf("the first segment's filter hashes were asked %d times, want twice (damaged, then asked again)", n)
	}
}
