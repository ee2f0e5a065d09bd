package pool

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/btcsuite/btcd/chaincfg"
)

// TestEachHoldsEveryVoice: members answer rounds of Each (one operation,
// one budget) after the delays given (the first at once), with a timeout
// of 8 s: a hold of 2 s, a grace of 2 s. However fast and however many
// the others, a member has a budget of the hold over the operation: a
// fast first answer, a liar's perhaps, or two colluders' do not get it
// cut off sooner. Past the hold, in one round or over two, it is cut
// off, and says what cut it.
func TestEachHoldsEveryVoice(t *testing.T) {
	for _, tt := range []struct {
		name   string
		delays []time.Duration
		rounds int
		cut    string // the last member's reason, "" if it is not cut
	}{
		{"beside one, within the hold", []time.Duration{0, 1500 * time.Millisecond}, 1, ""},
		{"beside two, within the hold", []time.Duration{0, 0, 1500 * time.Millisecond}, 1, ""},
		{"beside one, past the hold", []time.Duration{0, 3 * time.Second}, 1, "the most one answer is waited for"},
		{"beside two, past the hold over two rounds", []time.Duration{0, 0, 1500 * time.Millisecond}, 2, "its budget"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var addrs []string
			for i := range tt.delays {
				addrs = append(addrs, "127.0.0.1:"+string(rune('1'+i))) // nothing listens there
			}
			p, _, err := New(Config{Params: &chaincfg.RegressionNetParams, Peers: addrs, ConnectOnly: true, Timeout: 8 * time.Second})
			if err != nil {
				t.Fatal(err)
			}
			defer p.Close()
			ms := p.Members()
			delay := map[*Member]time.Duration{}
			for i, m := range ms {
				delay[m] = tt.delays[i]
			}
			b, start := NewBudget(), time.Now()
			for range tt.rounds {
				err = p.Each(context.Background(), b, ms, func(ctx context.Context, m *Member) error {
					select {
					case <-time.After(delay[m]):
						return nil
					case <-ctx.Done():
						return ctx.Err()
					}
				})
				if err != nil {
					t.Fatal(err)
				}
			}
			last := p.Status(ms[len(ms)-1])
			t.Logf("%d rounds took %v; the last member: %q", tt.rounds, time.Since(start).Round(time.Millisecond), last.Reason)
			cut := strings.Contains(last.Reason, "too slow")
			switch {
			case tt.cut == "" && cut:
				t.Errorf("the last member was cut off: %q", last.Reason)
			case tt.cut != "" && (!cut || !strings.Contains(last.Reason, tt.cut)):
				t.Errorf("the last member: %q, want it cut off as too slow, %q", last.Reason, tt.cut)
			}
		})
	}
}
