package pool

import (
	"context"
	"slices"
	"testing"
	"time"
)

// TestAddedThenAbandonedServes: a member whose node's ends put its next
// dial off (its connections did not last), dialled again by the user
// during that backoff (Add dials whatever it), whose request this side
// then abandons (another peer answered first). Its next dial stayed
// where the earlier backoff put it: RedialDue refused it, wrapping
// peer.ErrAbandoned, the member counted live meanwhile (every plan picked
// it again), and once Run looked it was out of Serving until that dial
// was due, an honest node kept out by this side's own drop. A connection
// made now clears a next dial set before it was made: the member is
// dialled again at once, charged nothing, and back in Serving within a
// look of Run's.
func TestAddedThenAbandonedServes(t *testing.T) {
	node, hashes := abandonNode(t)
	tests := []struct {
		name   string
		before int // failures in a row before the node's last end
	}{
		{"a backoff of 1 s", 1},
		{"a backoff of 8 s", 4},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, m, c := connectOne(t, node, nil)
			p.mu.Lock()
			m.failures = tt.before
			p.mu.Unlock()
			c.Close() // as far as the pool can tell, the node's end: counted
			<-c.Done()
			p.mu.Lock()
			if err := p.endedUnnoticed(m, time.Now()); err != nil {
				t.Fatal(err)
			}
			failures, backoff := m.failures, time.Until(m.nextDial)
			p.mu.Unlock()
			if err := p.Add(context.Background(), node.P2PAddr, true); err != nil {
				t.Fatal(err)
			}
			c = p.Conn(m)
			abandon(t, c, hashes)
			<-c.Done()
			// Plans made before Run's look: a member they pick is one a
			// request dials again, not one RedialDue refuses.
			picked, refused := 0, 0
			for range 5 {
				if !slices.Contains(p.Serving(0), m) {
					continue
				}
				picked++
				if err := p.RedialDue(context.Background(), m); err != nil {
					refused++
					t.Logf("picked, then refused: %v", err)
				}
			}
			// With Run: how long the member is out of Serving.
			ctx, stop := context.WithCancel(context.Background())
			done := make(chan struct{})
			go func() { p.Run(ctx); close(done) }()
			defer func() { stop(); <-done }()
			if c = p.Conn(m); c.Err() == nil {
				abandon(t, c, hashes)
				<-c.Done()
			}
			start := time.Now()
			for !slices.Contains(p.Serving(0), m) || p.Conn(m) == c {
				if time.Since(start) > 30*time.Second {
					t.Fatalf("out of Serving for %v after an end this side caused: %+v", time.Since(start), p.Status(m))
				}
				time.Sleep(10 * time.Millisecond)
			}
			out := time.Since(start)
			p.mu.Lock()
			after := m.failures
			p.mu.Unlock()
			t.Logf("backoff %v (%d failures): plans picking it %d of 5, refused %d; out of Serving with Run %v; failures after %d",
				backoff.Round(time.Millisecond), failures, picked, refused, out.Round(time.Millisecond), after)
			if refused > 0 {
				t.Errorf("%d plans of 5 picked a member RedialDue then refused", refused)
			}
			if picked == 0 {
				t.Errorf("no plan picked the member, whose connection this side dropped, before Run's look")
			}
			if out > time.Second {
				t.Errorf("out of Serving %v after an end this side caused; want a look of Run's and a dial", out)
			}
			if after != failures {
				t.Errorf("%d failures after ends this side caused; want %d, as before", after, failures)
			}
		})
	}
}

// TestServingOnlyWhatRedialDueDials: a member whose connection this side
// dropped, Run not having looked, is in Serving (and Keep) exactly when
// a request would dial it again (RedialDue), its next dial due within
// redialMin; one whose next dial is put off further (a sit-out set
// meanwhile) is left out until it is due, not picked by every plan and
// refused by each request.
func TestServingOnlyWhatRedialDueDials(t *testing.T) {
	node, hashes := abandonNode(t)
	tests := []struct {
		name  string
		dueIn time.Duration
		want  bool
	}{
		{"due", 0, true},
		{"due within redialMin", redialMin / 2, true},
		{"due in 8 s", 8 * time.Second, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, m, c := connectOne(t, node, nil)
			abandon(t, c, hashes)
			<-c.Done()
			p.mu.Lock()
			if tt.dueIn > 0 {
				m.nextDial = time.Now().Add(tt.dueIn)
			}
			p.mu.Unlock()
			serving, kept := slices.Contains(p.Serving(0), m), len(p.Keep([]*Member{m})) == 1
			err := p.RedialDue(context.Background(), m)
			t.Logf("in Serving %v, kept %v; RedialDue: %v", serving, kept, err)
			if serving != tt.want || kept != tt.want || (err == nil) != tt.want {
				t.Errorf("in Serving %v, kept %v, RedialDue dialled %v; want %v", serving, kept, err == nil, tt.want)
			}
		})
	}
}
