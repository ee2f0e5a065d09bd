package pool

import (
	"context"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/btcsuite/btcd/wire"
	"github.com/spvfilter/spvfilter/peer/peertest"
)

// dialCounter is a Config.Dial that counts the dials and notes when the
// last began.
type dialCounter struct {
	n    atomic.Int64
	mu   sync.Mutex
	last time.Time
}

func (d *dialCounter) dial(ctx context.Context, network, addr string) (net.Conn, error) {
	d.n.Add(1)
	d.mu.Lock()
	d.last = time.Now()
	d.mu.Unlock()
	var nd net.Dialer
	return nd.DialContext(ctx, network, addr)
}

// backoffDials is how many dials the backoff allows in span, counted from
// a first dial at once: each after the sum of the backoffs before it.
func backoffDials(span time.Duration) int64 {
	n, at := int64(1), time.Duration(0)
	for f := 1; ; f++ {
		at += redialBackoff(f)
		if at > span {
			return n
		}
		n++
	}
}

// TestRedialKeepsBackoff: the only member, a real btcd behind a proxy,
// drops its connection and refuses every dial for seconds (it hangs up
// on the handshake), while four requests ask
// for it to be dialled again every 20 ms (Redial) and Run looks after it:
// the node is dialled at the backoff's pace, not once per request, and a
// request whose context ends first is told the dial is not due yet. Once
// the node takes dials again, a redial waits for the backoff before it dials.
// The user adding the member (Add) dials it at once, whatever the
// backoff; and Add of a member whose connection ended before Run noticed
// dials it again rather than taking the dead connection for live.
func TestRedialKeepsBackoff(t *testing.T) {
	node := peertest.StartBtcd(t)
	// While refusing, the node hangs up on every handshake.
	var refusing atomic.Bool
	proxy := peertest.NewLiar(t, node.P2PAddr, node.Params.Net, func(msg wire.Message) ([]wire.Message, bool) {
		_, version := msg.(*wire.MsgVersion)
		return []wire.Message{msg}, version && refusing.Load()
	})
	dials := &dialCounter{}
	p, _, err := New(Config{Params: node.Params, Peers: []string{proxy.Addr}, ConnectOnly: true, Timeout: 5 * time.Second, Dial: dials.dial})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	ctx, stop := context.WithCancel(context.Background())
	p.Connect(ctx)
	m := p.Members()[0]
	old := p.Conn(m)
	if old == nil || !p.Status(m).Live {
		t.Fatalf("not connected: %+v", p.Status(m))
	}
	var run sync.WaitGroup
	run.Add(1)
	go func() {
		defer run.Done()
		p.Run(ctx)
	}()
	defer func() {
		stop()
		run.Wait()
	}()

	const refusal = 3 * time.Second
	refusing.Store(true)
	old.Close()
	began, before := time.Now(), dials.n.Load()
	var requests sync.WaitGroup
	var notDue atomic.Int64
	for range 4 {
		requests.Add(1)
		go func() {
			defer requests.Done()
			for time.Since(began) < refusal {
				rctx, cancel := context.WithTimeout(ctx, 20*time.Millisecond)
				if err := p.Redial(rctx, m); err != nil && rctx.Err() != nil {
					notDue.Add(1)
				}
				cancel()
			}
		}()
	}
	requests.Wait()
	span := time.Since(began)
	got, allowed := dials.n.Load()-before, backoffDials(span)
	t.Logf("refusing for %v: %d dials (the backoff allows %d), %d requests told the dial is not due", span.Round(time.Millisecond), got, allowed, notDue.Load())
	if got > allowed {
		t.Errorf("a node refusing dials was dialled %d times in %v; its backoff allows %d", got, span.Round(time.Millisecond), allowed)
	}
	if notDue.Load() == 0 {
		t.Errorf("no request was told its redial is not due")
	}

	refusing.Store(false)
	p.mu.Lock()
	due, failures := m.nextDial, m.failures
	p.mu.Unlock()
	if err := p.Redial(ctx, m); err != nil {
		t.Fatalf("Redial once the node listens again: %v", err)
	}
	dials.mu.Lock()
	last := dials.last
	dials.mu.Unlock()
	if st := p.Status(m); !st.Live {
		t.Fatalf("not live after Redial: %+v", st)
	}
	if last.Before(due) {
		t.Errorf("dialled at %v, %v before its backoff (%d failures) was due", last.Format(time.StampMilli), due.Sub(last), failures)
	}

	// The user's Add dials at once, whatever the backoff, even a member
	// whose connection ended before Run noticed (Disconnect, Run
	// stopped); a request's Redial does not.
	stop()
	run.Wait()
	for _, user := range []bool{true, false} {
		conn := p.Conn(m)
		if err := p.Disconnect(proxy.Addr); err != nil {
			t.Fatal(err)
		}
		<-conn.Done()
		p.mu.Lock()
		m.failures, m.nextDial = 6, time.Now().Add(30*time.Second) // as after six dials failed
		p.mu.Unlock()
		n := dials.n.Load()
		if !user {
			rctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
			err := p.Redial(rctx, m)
			cancel()
			if err == nil || dials.n.Load() != n {
				t.Errorf("Redial 30 s before its backoff was due: error %v, %d dials", err, dials.n.Load()-n)
			}
			continue
		}
		if err := p.Add(context.Background(), proxy.Addr, true); err != nil {
			t.Fatalf("Add: %v", err)
		}
		select {
		case <-p.Conn(m).Done():
			t.Errorf("Add took the ended connection for live: %+v", p.Status(m))
		default:
		}
		if st := p.Status(m); !st.Live || dials.n.Load() != n+1 {
			t.Errorf("Add did not dial at once: %+v, %d dials", st, dials.n.Load()-n)
		}
	}
}
