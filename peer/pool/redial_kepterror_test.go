package pool

import (
	"context"
	"errors"
	"net"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/btcsuite/btcd/chaincfg"
	"github.com/spvfilter/spvfilter/peer"
	"github.com/spvfilter/spvfilter/peer/peertest"
)

// TestRedialKeepsTheLatestError: a member whose dials fail one way, then
// another, keeps the latest failure's error beside the reason that
// gives it, in both orders: a port nothing listens on (the dial's
// *net.OpError, peer.OpConnect), and a listener on 127.0.0.1 that
// answers bytes of no node (peer.OpHandshake). A caller that words the
// kept error (the command's status words) told the user the first
// failure's cause while the reason gave the latest.
func TestRedialKeepsTheLatestError(t *testing.T) {
	refused := peertest.ClosedAddr(t)
	garbage := peertest.NewAnswering(t, []byte("HTTP/1.1 400 Bad Request\r\n\r\n"))
	isRefused := func(err error) bool {
		var pe *peer.PeerError
		var oe *net.OpError
		return errors.As(err, &pe) && pe.Op == peer.OpConnect && errors.As(err, &oe) && oe.Op == "dial"
	}
	isHandshake := func(err error) bool {
		var pe *peer.PeerError
		return errors.As(err, &pe) && pe.Op == peer.OpHandshake
	}
	for _, tt := range []struct {
		name    string
		dials   []string // where each dial goes, in turn
		first   func(error) bool
		latest  func(error) bool
		redials int
	}{
		{"refused, then no node", []string{refused, garbage}, isRefused, isHandshake, 1},
		{"no node, then refused", []string{garbage, refused}, isHandshake, isRefused, 1},
		{"refused twice, then no node", []string{refused, refused, garbage}, isRefused, isHandshake, 2},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var n atomic.Int32
			dial := func(ctx context.Context, network, _ string) (net.Conn, error) {
				i := int(n.Add(1)) - 1
				to := tt.dials[min(i, len(tt.dials)-1)]
				var d net.Dialer
				return d.DialContext(ctx, network, to)
			}
			const member = "127.0.0.1:8333" // dialled through dial, never itself
			p, _, err := New(Config{Params: &chaincfg.RegressionNetParams, Peers: []string{member}, ConnectOnly: true, Timeout: 5 * time.Second, Dial: dial})
			if err != nil {
				t.Fatal(err)
			}
			defer p.Close()
			ctx := context.Background()
			p.Connect(ctx)
			m := p.Members()[0]
			if st := p.Status(m); !tt.first(st.Err) || !strings.Contains(st.Reason, st.Err.Error()) {
				t.Fatalf("after the first dial: status %+v: want its error beside its reason", st)
			}
			for range tt.redials {
				p.mu.Lock()
				m.nextDial = time.Time{} // due now, its backoff passed
				p.mu.Unlock()
				p.Revive(ctx)
			}
			if got := int(n.Load()); got != 1+tt.redials {
				t.Fatalf("%d dials, want %d", got, 1+tt.redials)
			}
			st := p.Status(m)
			if st.Live || st.Err == nil {
				t.Fatalf("status %+v: want a member not reached", st)
			}
			if !tt.latest(st.Err) || !strings.Contains(st.Reason, st.Err.Error()) {
				t.Errorf("status: reason %q, error %v: want the latest dial's error, the one the reason gives", st.Reason, st.Err)
			}
		})
	}
}
