package pool

import (
	"context"
	"testing"
	"time"
)

// TestRedialDueWaitsNoBackoff: RedialDue, which a request calls when it
// finds its member's connection ended, counts an end this side did not
// cause as Redial does, but waits, inside the request, only for the
// backoff of a first failure (a node restarted): a longer one it does
// not wait for, returning at once and dialling nothing, so that the
// request can go to another peer. Waiting let a node that hangs up after
// each answer hold each next request for its doubling backoff. An end
// this side caused (an abandoned request) is dialled again at once, as
// Redial does, charging nothing.
func TestRedialDueWaitsNoBackoff(t *testing.T) {
	node, hashes := abandonNode(t)
	ends := connectionEnds(hashes)
	tests := []struct {
		connectionEnd
		before   int // failures in a row before the end
		wantDial bool
	}{
		{ends[0], 0, true},
		{ends[1], 0, true},
		{connectionEnd{ends[1].name + ", after a failure", ends[1].end, 2}, 1, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, m, c := connectOne(t, node, nil)
			p.mu.Lock()
			m.failures = tt.before
			p.mu.Unlock()
			tt.end(t, c)
			<-c.Done()
			start := time.Now()
			err := p.RedialDue(context.Background(), m) // before Run's look
			took := time.Since(start)
			p.mu.Lock()
			failures := m.failures
			p.mu.Unlock()
			dialled := p.Conn(m) != c
			wantTook := time.Duration(0)
			if tt.wantDial {
				wantTook = redialBackoff(tt.wantFailures)
			}
			if (err == nil) != tt.wantDial || dialled != tt.wantDial || failures != tt.wantFailures || took < wantTook || took > wantTook+redialMin/2 {
				t.Errorf("after the connection ended (%v), RedialDue: %v after %v, dialled %v, %d failures; want dialled %v, %d failures, after %v",
					c.Err(), err, took, dialled, failures, tt.wantDial, tt.wantFailures, wantTook)
			}
			if st := p.Status(m); st.Live != tt.wantDial {
				t.Errorf("the member after RedialDue: %+v, want live %v", st, tt.wantDial)
			}
		})
	}
}
