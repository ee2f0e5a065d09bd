package pool

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/spvfilter/spvfilter/peer/peertest"
)

// TestRedialAfterRunNoticedTheEnd: a request whose answer ended its
// member's connection (abandoned, or a filter checked false against a
// header a reorganization explains) dials it again (Redial); Run, which
// looks after the members every managerInterval, may find the ended
// connection first. That is no drop: the new connection is used, not
// closed as if the member had been dropped meanwhile, which would leave
// a client without its only honest peer until the backoff passes. A
// member dropped is not revived by a Redial, and Run's own redial, under
// way when Redial replaced the connection, leaves the new one in use.
func TestRedialAfterRunNoticedTheEnd(t *testing.T) {
	node := peertest.StartBtcd(t)
	p, _, err := New(Config{Params: node.Params, Peers: []string{node.P2PAddr}, ConnectOnly: true, Timeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	ctx := context.Background()
	p.Connect(ctx)
	m := p.Members()[0]
	old := p.Conn(m)
	if old == nil || !p.Status(m).Live {
		t.Fatalf("not connected: %+v", p.Status(m))
	}
	old.Close() // as a request that gave up on its answer does
	<-old.Done()
	var dials sync.WaitGroup
	p.tend(ctx, &dials) // Run's look, before the request dials again
	dials.Wait()
	if st := p.Status(m); st.Live {
		t.Fatalf("Run did not find the connection ended: %+v", st)
	}
	if err := p.Redial(ctx, m); err != nil {
		t.Fatalf("Redial after Run found the connection ended: %v", err)
	}
	c := p.Conn(m)
	if st := p.Status(m); c == old || !st.Live {
		t.Fatalf("after Redial: a new connection %v, status %+v", c != old, st)
	}

	// Run's redial, started before Redial replaced the connection, ends
	// after: the connection in use stays.
	p.mu.Lock()
	m.dialing = true
	p.mu.Unlock()
	p.redial(ctx, m)
	if p.Conn(m) != c {
		t.Errorf("Run's redial replaced the live connection Redial made")
	}
	select {
	case <-c.Done():
		t.Errorf("the live connection was closed")
	default:
	}

	// A member dropped is not dialled again by a request.
	c.Close()
	<-c.Done()
	p.tend(ctx, &dials)
	dials.Wait()
	p.Drop(m, errors.New("stalled"))
	if err := p.Redial(ctx, m); err == nil {
		t.Errorf("Redial revived a dropped member: %+v", p.Status(m))
	}
	if p.Status(m).Live {
		t.Errorf("a dropped member is live again: %+v", p.Status(m))
	}
}
