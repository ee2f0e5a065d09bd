package pool

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/btcsuite/btcd/wire"
	"github.com/spvfilter/spvfilter/peer"
	"github.com/spvfilter/spvfilter/peer/peertest"
)

// TestAbandonedEndIsNoFailure: a connection ended because this side
// abandoned a request over it (peer.ErrAbandoned) is no failure of its
// member's when Run finds it ended: the member's next dial does not wait
// for it, and it counts nothing toward forgetting a member found by
// discovery. A connection that ended otherwise (closed, as far as the
// pool can tell, by the node) still counts.
func TestAbandonedEndIsNoFailure(t *testing.T) {
	node, hashes := abandonNode(t)
	for _, tt := range connectionEnds(hashes) {
		t.Run(tt.name, func(t *testing.T) {
			p, m, c := connectOne(t, node, nil)
			tt.end(t, c)
			<-c.Done()
			p.mu.Lock()
			err := p.endedUnnoticed(m, time.Now()) // Run's look
			failures, wait := m.failures, time.Until(m.nextDial)
			p.mu.Unlock()
			if err != nil {
				t.Fatal(err)
			}
			if failures != tt.wantFailures || (failures == 0) != (wait <= 0) {
				t.Errorf("after the connection ended (%v): %d failures, next dial in %v; want %d failures", c.Err(), failures, wait, tt.wantFailures)
			}
		})
	}
}

// TestAbandonedEndThenCut: a member whose connection this side dropped
// by abandoning a request (Each cancels a member's request when it cuts
// the member off as too slow) and which is then cut off, or dropped for
// a failure, counts that end once when Run found the connection ended
// first: Run counts no failure for an abandoned end (see ended), so the
// cut or the drop must. A member slow every time it is back otherwise
// sits out the same backoff for ever and is never forgotten.
func TestAbandonedEndThenCut(t *testing.T) {
	node, hashes := abandonNode(t)
	tests := []struct {
		name     string
		end      func(p *Pool, m *Member)
		wantSlow int // slow failures after, from 1
	}{
		{"cut off as too slow", func(p *Pool, m *Member) { p.dropSlow(NewBudget(), m, time.Second) }, 2},
		{"dropped", func(p *Pool, m *Member) { p.Drop(m, errors.New("stalled")) }, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, m, c := connectOne(t, node, nil)
			p.mu.Lock()
			m.failures, m.slow = 2, 1 // cut off twice before, the connection not lasting
			p.mu.Unlock()
			abandon(t, c, hashes)
			<-c.Done()
			p.mu.Lock()
			err := p.endedUnnoticed(m, time.Now()) // Run's look, before the cut
			p.mu.Unlock()
			if err != nil {
				t.Fatal(err)
			}
			tt.end(p, m)
			p.mu.Lock()
			failures, slow, wait := m.failures, m.slow, time.Until(m.nextDial)
			p.mu.Unlock()
			if failures != 3 || slow != tt.wantSlow || wait <= redialBackoff(2) {
				t.Errorf("after the abandoned end (%v) and the %s: %d failures (%d slow), next dial in %v; want 3 (%d slow), in about %v",
					c.Err(), tt.name, failures, slow, wait, tt.wantSlow, redialBackoff(3))
			}
		})
	}
}

// TestCutWhileRunRedials: a member cut off as too slow while Run dials
// it again sits its sit-out out. Run finds a connection this side ended
// by abandoning a request (Each cancelling the member it cuts off) ended
// with no failure, so it dials the member again at once, while Each may
// still wait for the others before it drops the member; the dial that
// then succeeds made the member live again, its sit-out skipped.
func TestCutWhileRunRedials(t *testing.T) {
	node, hashes := abandonNode(t)
	tests := []struct {
		name    string
		cut     bool // cut off while Run dials it
		wantOut bool
	}{
		{"cut off meanwhile", true, true},
		{"not cut off", false, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var redialling atomic.Bool
			onConnect := func(p *Pool, m *Member) {
				if tt.cut && redialling.Load() {
					p.dropSlow(NewBudget(), m, time.Second) // the round's end, as the dial completes
				}
			}
			p, m, c := connectOne(t, node, onConnect)
			ctx := context.Background()
			abandon(t, c, hashes)
			<-c.Done()
			redialling.Store(true)
			var dials sync.WaitGroup
			if floods := p.tend(ctx, &dials); len(floods) > 0 { // Run's look: it dials m again
				t.Fatal(floods[0].Err)
			}
			dials.Wait()
			st := p.Status(m)
			p.mu.Lock()
			wait := time.Until(m.nextDial)
			p.mu.Unlock()
			if out := !st.Live; out != tt.wantOut {
				t.Errorf("after Run dialled it again: live %v (%s), next dial in %v; want left out %v", st.Live, st.Reason, wait, tt.wantOut)
			}
		})
	}
}

// abandonNode starts a btcd with blocks, and returns it with the hashes
// of heights 1 to 16, for a request to abandon.
func abandonNode(t *testing.T) (*peertest.Node, []chainhash.Hash) {
	t.Helper()
	node := peertest.StartBtcd(t)
	node.Generate(t, 20)
	var hashes []chainhash.Hash
	for h := int64(1); h <= 16; h++ {
		hash, err := node.RPC().GetBlockHash(h)
		if err != nil {
			t.Fatal(err)
		}
		hashes = append(hashes, *hash)
	}
	return node, hashes
}

// connectOne returns a pool of node alone, connected, its member and
// connection; onConnect, if not nil, is its Config.OnConnect.
func connectOne(t *testing.T, node *peertest.Node, onConnect func(*Pool, *Member)) (*Pool, *Member, *peer.Peer) {
	t.Helper()
	var p *Pool
	cfg := Config{Params: node.Params, Peers: []string{node.P2PAddr}, ConnectOnly: true, Timeout: 5 * time.Second}
	if onConnect != nil {
		cfg.OnConnect = func(m *Member) { onConnect(p, m) }
	}
	p, _, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	p.Connect(context.Background())
	m := p.Members()[0]
	c := p.Conn(m)
	if c == nil || !p.Status(m).Live {
		t.Fatalf("not connected: %+v", p.Status(m))
	}
	return p, m, c
}

// abandon asks c for the blocks of hashes and gives the request up at
// the first: this side drops the connection (peer.ErrAbandoned).
func abandon(t *testing.T, c *peer.Peer, hashes []chainhash.Hash) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	err := c.GetBlocks(ctx, hashes, func(int, *wire.MsgBlock) error {
		cancel()
		return nil
	})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("the abandoned request: %v", err)
	}
}

// connectionEnd is a way a connection ends, and the failures in a row
// its member is charged for it.
type connectionEnd struct {
	name         string
	end          func(t *testing.T, c *peer.Peer)
	wantFailures int
}

// connectionEnds: abandoned by this side (a request over hashes), which
// is no failure, and closed, as far as the pool can tell by the node,
// which is one.
func connectionEnds(hashes []chainhash.Hash) []connectionEnd {
	return []connectionEnd{
		{"abandoned by this side", func(t *testing.T, c *peer.Peer) { abandon(t, c, hashes) }, 0},
		{"closed", func(_ *testing.T, c *peer.Peer) { c.Close() }, 1},
	}
}

// TestRedialCountsTheEnd: Redial, which a request calls when it finds its
// member's connection ended (the client's ready), before Run noticed the
// end, counts an end this side did not cause as Run would: one failure
// (the node hung up, or a request dropped it for a stall or a broken
// rule), whose backoff the new dial waits for. Else a node ending its
// connection on each request was dialled again at once, its failures
// never counted. An end this side caused, abandoning a request, costs
// nothing, and a request whose context already ended dials nothing and
// charges nothing: the member stays live, so that a request choosing
// among the live members (a block's filters compared across them) still
// asks it. Counting the abandoned end, or the dial the cancelled context
// cut, left an honest peer out of the comparison of the block it had to
// prove the others' filter false for.
func TestRedialCountsTheEnd(t *testing.T) {
	node, hashes := abandonNode(t)
	ends := connectionEnds(hashes)
	tests := []struct {
		connectionEnd
		cancelled bool // the request's context ended before Redial
		wantDial  bool
	}{
		{ends[0], false, true},
		{ends[1], false, true},
		{connectionEnd{ends[0].name + ", the request's context ended", ends[0].end, 0}, true, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, m, c := connectOne(t, node, nil)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			if tt.cancelled {
				cancel()
			}
			tt.end(t, c)
			<-c.Done()
			start := time.Now()
			err := p.Redial(ctx, m) // before Run's look
			took := time.Since(start)
			if (err == nil) != tt.wantDial {
				t.Fatalf("Redial: %v; want dialled %v", err, tt.wantDial)
			}
			p.mu.Lock()
			failures := m.failures
			p.mu.Unlock()
			dialled := p.Conn(m) != c
			if failures != tt.wantFailures || took < redialBackoff(tt.wantFailures) || dialled != tt.wantDial || !p.Status(m).Live {
				t.Errorf("after the connection ended (%v), Redial: %d failures, dialled %v after %v, live %v; want %d failures, dialled %v after %v, live",
					c.Err(), failures, dialled, took, p.Status(m).Live, tt.wantFailures, tt.wantDial, redialBackoff(tt.wantFailures))
			}
		})
	}
}
