package pool

import (
	"testing"
	"time"
)

// TestRecordFollowsTheHost: a node forgotten after failures under one
// port, found again under another port of the same host, is not due
// before its backoff ends and comes back with its failures; two ports of
// one host forgotten share the worse record. On loopback, ports are
// nodes of their own (as bans are kept, see banlist.HostKey). The
// addresses are documentation addresses (RFC 5737), used as keys only:
// nothing is dialled.
func TestRecordFollowsTheHost(t *testing.T) {
	now := time.Now()
	tests := []struct {
		name          string
		forgotten     []*Member
		again         string
		notDue        bool
		wantFailures  int
		wantNextDial  time.Time
		wantRemaining int
	}{
		{
			name:         "another port of the host",
			forgotten:    []*Member{{addr: "192.0.2.7:8333", failures: 5, nextDial: now.Add(time.Minute)}},
			again:        "192.0.2.7:8334",
			notDue:       true,
			wantFailures: 5, wantNextDial: now.Add(time.Minute),
		},
		{
			name: "two ports keep the worse record",
			forgotten: []*Member{
				{addr: "192.0.2.7:8333", failures: 5, nextDial: now.Add(time.Second)},
				{addr: "192.0.2.7:8335", failures: 2, nextDial: now.Add(time.Hour)},
			},
			again:        "192.0.2.7:8334",
			notDue:       true,
			wantFailures: 5, wantNextDial: now.Add(time.Hour),
		},
		{
			name:          "another host",
			forgotten:     []*Member{{addr: "192.0.2.7:8333", failures: 5, nextDial: now.Add(time.Minute)}},
			again:         "192.0.2.8:8333",
			wantRemaining: 1,
		},
		{
			name:          "another loopback port is another node",
			forgotten:     []*Member{{addr: "127.0.0.1:18444", failures: 5, nextDial: now.Add(time.Minute)}},
			again:         "127.0.0.1:18445",
			wantRemaining: 1,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := &Pool{}
			p.mu.Lock()
			defer p.mu.Unlock()
			for _, m := range tt.forgotten {
				p.records.remember(m)
			}
			if got := p.records.notDue(tt.again, now); got != tt.notDue {
				t.Errorf("not due %v, want %v", got, tt.notDue)
			}
			m := p.records.foundAgain(tt.again)
			if m.failures != tt.wantFailures || !m.nextDial.Equal(tt.wantNextDial) {
				t.Errorf("found again with %d failures, next dial %v; want %d, %v", m.failures, m.nextDial, tt.wantFailures, tt.wantNextDial)
			}
			if len(p.records.by) != tt.wantRemaining {
				t.Errorf("%d records left, want %d", len(p.records.by), tt.wantRemaining)
			}
		})
	}
}
