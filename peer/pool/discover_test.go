package pool

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/btcsuite/btcd/chaincfg"
	"github.com/spvfilter/spvfilter/peer"
)

// TestSilentDialKeepsItsCause: an address found in the book that gave no
// handshake by the connect deadline is named so in the discovery's
// problems, and its cause (a stall, a timeout of the peer package, the
// deadline) stays checkable with errors.Is and errors.As.
func TestSilentDialKeepsItsCause(t *testing.T) {
	timeout := &peer.TimeoutError{What: "no version message", Within: time.Second}
	for _, tt := range []struct {
		name  string
		cause error
	}{
		{"stalled", fmt.Errorf("peer 127.0.0.1:1: %w", peer.ErrStalled)},
		{"timeout", fmt.Errorf("peer 127.0.0.1:1: %w", timeout)},
		{"deadline", fmt.Errorf("dial: %w", context.DeadlineExceeded)},
	} {
		t.Run(tt.name, func(t *testing.T) {
			p, _, err := New(Config{Params: &chaincfg.RegressionNetParams, Peers: []string{"127.0.0.1:1"}, ConnectOnly: true})
			if err != nil {
				t.Fatal(err)
			}
			defer p.Close()
			m := p.Members()[0]
			p.mu.Lock()
			m.err = tt.cause
			p.mu.Unlock()
			d := &bookDial{p: p, want: 1}
			if d.settle(context.Background(), m, 3*time.Second) {
				t.Fatal("a member that failed counted as enough")
			}
			if d.silent != 1 || len(d.problems) != 1 {
				t.Fatalf("silent %d, problems %v", d.silent, d.problems)
			}
			got := d.problems[0]
			if !strings.Contains(got.Error(), "no handshake within the connect deadline of 3s") {
				t.Errorf("words: %v", got)
			}
			if !errors.Is(got, tt.cause) {
				t.Errorf("%v: its cause %v is lost", got, tt.cause)
			}
			var te *peer.TimeoutError
			if tt.name == "timeout" && !errors.As(got, &te) {
				t.Errorf("%v: no *peer.TimeoutError", got)
			}
		})
	}
}
