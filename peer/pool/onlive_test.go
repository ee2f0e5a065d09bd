package pool

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/spvfilter/spvfilter/peer/peertest"
)

// TestOnLiveAfterInUse: Config.OnLive is told of a member once it is in
// use (Status says live), after OnConnect, on its first dial and when Run
// dials it again; a caller woken by it finds the member among those it
// can ask. A request's Redial tells neither: what was known of the
// node's chain stands.
func TestOnLiveAfterInUse(t *testing.T) {
	node := peertest.StartBtcd(t)
	var (
		mu     sync.Mutex
		told   []string
		liveAt []bool
		p      *Pool
	)
	cfg := Config{Params: node.Params, Peers: []string{node.P2PAddr}, ConnectOnly: true, Timeout: 5 * time.Second,
		OnConnect: func(*Member) {
			mu.Lock()
			defer mu.Unlock()
			told = append(told, "connect")
		},
		OnLive: func(m *Member) {
			live := p.Status(m).Live
			mu.Lock()
			defer mu.Unlock()
			told = append(told, "live")
			liveAt = append(liveAt, live)
		}}
	p, _, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	ctx := context.Background()
	p.Connect(ctx)
	m := p.Members()[0]
	old := p.Conn(m)
	if old == nil {
		t.Fatalf("not connected: %+v", p.Status(m))
	}
	old.Close()
	<-old.Done()
	var dials sync.WaitGroup
	p.tend(ctx, &dials)
	dials.Wait()
	p.mu.Lock()
	m.dialing = true
	p.mu.Unlock()
	p.redial(ctx, m) // Run's redial, as tend starts it once the backoff is due
	c := p.Conn(m)
	if c == nil || c == old {
		t.Fatalf("not dialled again: %+v", p.Status(m))
	}
	c.Close()
	<-c.Done()
	if err := p.Redial(ctx, m); err != nil {
		t.Fatalf("Redial: %v", err)
	}
	mu.Lock()
	defer mu.Unlock()
	if want := []string{"connect", "live", "connect", "live"}; !slices.Equal(told, want) {
		t.Errorf("told %v, want %v", told, want)
	}
	for i, live := range liveAt {
		if !live {
			t.Errorf("OnLive call %d: the member was not live yet", i)
		}
	}
}
