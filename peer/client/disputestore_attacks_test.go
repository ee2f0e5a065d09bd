package client

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/btcsuite/btcd/wire"
	"github.com/spvfilter/spvfilter/peer/peertest"
	"github.com/spvfilter/spvfilter/peer/pool"
)

// wipeLiar states a false filter header before the heights asked in
// every cfheaders answer, and hangs up instead of sending its
// checkpoints: a failure of the connection, no proof.
type wipeLiar struct {
	mu      sync.Mutex
	hangups int
}

func (l *wipeLiar) lie(m wire.Message) ([]wire.Message, bool) {
	switch m := m.(type) {
	case *wire.MsgCFCheckpt:
		l.mu.Lock()
		l.hangups++
		l.mu.Unlock()
		return nil, true
	case *wire.MsgCFHeaders:
		m.PrevFilterHeader[0] ^= 0xff
	}
	return []wire.Message{m}, false
}

// TestLateLiarHangingUpKeepsStore: two honest peers verified and stored
// every filter header in the data directory. A third peer claims the
// last heights late and states a false filter header before them. The
// late claim is verified again from there; the liar's false header is
// no proof yet (unboundPrev) and gives nothing verified up, and the liar
// then hangs up when asked for its checkpoints: it is dropped, and the
// verification goes on with the honest peers left. The filter headers
// they agreed on stay on disk, every one.
func TestLateLiarHangingUpKeepsStore(t *testing.T) {
	needFixture(t)
	tip := fx.tip
	cfg := Config{Peers: honestPeers(t, 2), Params: fx.node.Params, Timeout: 5 * time.Second, DataDir: t.TempDir()}
	c := connectWith(t, cfg)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if err := c.verifyFilterHeaders(ctx, 0, tip); err != nil {
		t.Fatal(err)
	}
	before := c.st.FilterHeaderTip()
	l := &wipeLiar{}
	liar := peertest.NewLiar(t, fx.node.P2PAddr, fx.node.Params.Net, l.lie).Addr
	if err := c.AddPeer(ctx, liar, false); err != nil {
		t.Fatal(err)
	}
	if _, err := c.SyncHeaders(ctx); err != nil {
		t.Fatal(err)
	}
	var m *pool.Member
	for _, o := range c.pool.Members() {
		if o.Addr() == liar {
			m = o
		}
	}
	if m == nil {
		t.Fatal("the liar is not in the pool")
	}
	c.svc.late.add(m, tip-3)
	// The late word is asked in the background: taken in by the next
	// call once it came.
	_, err := c.verifyLate(ctx)
	c.svc.late.wait()
	if err == nil {
		_, err = c.verifyLate(ctx)
	}
	after := c.st.FilterHeaderTip()
	l.mu.Lock()
	hangups := l.hangups
	l.mu.Unlock()
	t.Logf("verifyLate: %v; stored filter headers up to %d before, %d after; the liar hung up %d times", err, before, after, hangups)
	for _, p := range c.Peers() {
		t.Logf("%s: banned %v %q", p.Address, p.Banned, p.Reason)
	}
	if hangups == 0 {
		t.Errorf("the liar was not asked for its checkpoints: the attack did not happen")
	}
	if after < before {
		t.Errorf("the stored filter headers two honest peers agreed on were cut from %d to %d by a liar that proved nothing", before, after)
	}
}
