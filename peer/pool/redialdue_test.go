package pool

import (
	"context"
	"testing"
	"time"
)

// TestRedialDueWaitsNoBackoff: RedialDue, which a request calls when it
// finds its member's connection ended, counts an end this side did not
// cause as Redial does, but does not wait, inside the request, for the
// backoff that end set: it returns at once, dialling nothing, and the
// request can go to another peer. Waiting let a node that hangs up after
// each answer hold each next request for its doubling backoff. An end
// this side caused (an abandoned request) is dialled again at once, as
// Redial does, charging nothing.
func TestRedialDueWaitsNoBackoff(t *testing.T) {
	node, hashes := abandonNode(t)
	ends := connectionEnds(hashes)
	tests := []struct {
		connectionEnd
		wantDial bool
	}{
		{ends[0], true},
		{ends[1], false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, m, c := connectOne(t, node, nil)
			tt.end(t, c)
			<-c.Done()
			start := time.Now()
			err := p.RedialDue(context.Background(), m) // before Run's look
			took := time.Since(start)
			p.mu.Lock()
			failures := m.failures
			p.mu.Unlock()
			dialled := p.Conn(m) != c
			if (err == nil) != tt.wantDial || dialled != tt.wantDial || failures != tt.wantFailures || took >= redialBackoff(1)/2 {
				t.Errorf("after the connection ended (%v), RedialDue: %v after %v, dialled %v, %d failures; want dialled %v, %d failures, at once",
					c.Err(), err, took, dialled, failures, tt.wantDial, tt.wantFailures)
			}
			if st := p.Status(m); st.Live != tt.wantDial {
				t.Errorf("the member after RedialDue: %+v, want live %v", st, tt.wantDial)
			}
		})
	}
}
