package client

import (
	"context"
	"net"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/btcsuite/btcd/chaincfg"
	"github.com/spvfilter/spvfilter/peer"
	"github.com/spvfilter/spvfilter/peer/peertest"
	"github.com/spvfilter/spvfilter/peer/pool"
)

// TestNotUsedWhy: the reason a rescan's waiting warning gives for a peer
// it waits on (awaited, notUsedWhy), for connections peer.Dial could not
// make (each error made by a dial over loopback, directly or through a
// SOCKS5 proxy, or by a dial function failing as the system's does):
// the tool's words for what failed, and no dial error's text (the
// warning names the peer); a reason not about connecting is the pool's
// own. The warning keeps its kind.
func TestNotUsedWhy(t *testing.T) {
	// dial dials addr, returning the proxy's address, if any, and the
	// error.
	type dial func(t *testing.T, addr string) (proxy string, err error)
	with := func(dialFn peer.DialFunc, timeout time.Duration) dial {
		return func(t *testing.T, addr string) (string, error) {
			_, err := peer.Dial(context.Background(), peer.Config{Addr: addr, Params: &chaincfg.RegressionNetParams, Dial: dialFn, Timeout: timeout})
			return "", err
		}
	}
	failing := func(err error) dial {
		return with(func(context.Context, string, string) (net.Conn, error) {
			return nil, &net.OpError{Op: "dial", Net: "tcp", Err: err}
		}, time.Second)
	}
	via := func(proxyAddr func(t *testing.T) string) dial {
		return func(t *testing.T, addr string) (string, error) {
			px := proxyAddr(t)
			dialFn, err := peer.SOCKS5("socks5://" + px)
			if err != nil {
				t.Fatal(err)
			}
			_, err = with(dialFn, 5*time.Second)(t, addr)
			return px, err
		}
	}
	for _, tt := range []struct {
		name   string
		dial   dial   // nil: no error, the reason kept
		reason string // the pool's reason, without a dial
		want   string // the words; %p is the proxy's address
	}{
		{"refused", with(nil, 5*time.Second), "", "not connected: connection refused (nothing listens there)"},
		{"timed out", with(func(ctx context.Context, _, _ string) (net.Conn, error) {
			<-ctx.Done()
			return nil, &net.OpError{Op: "dial", Net: "tcp", Err: ctx.Err()}
		}, 50*time.Millisecond), "", "not connected: timed out (no answer)"},
		{"host not found", failing(&net.DNSError{Err: "no such host", Name: "node.invalid", IsNotFound: true}), "", "not connected: host node.invalid not found"},
		{"no route", failing(&net.OpError{Op: "connect", Err: syscall.EHOSTUNREACH}), "", "not connected: no route to the host"},
		{"proxy refuses", via(func(t *testing.T) string {
			return peertest.NewSOCKSProxy(t, peertest.SOCKSConfig{Refuse: peertest.SOCKSConnectionRefused}).Addr
		}), "", "not connected: the SOCKS5 proxy %p did not connect to it: "},
		{"proxy unreachable", via(func(t *testing.T) string { return peertest.ClosedAddr(t) }), "", "not connected: the SOCKS5 proxy %p could not be reached: connection refused (nothing listens there)"},
		{"another reason", nil, "stalled: no answer to getheaders in 10s", "stalled: no answer to getheaders in 10s"},
		{"connecting", nil, "connecting", "connecting"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			addr := peertest.ClosedAddr(t)
			st := pool.Status{Addr: addr, Reason: tt.reason}
			want := tt.want
			if tt.dial != nil {
				px, err := tt.dial(t, addr)
				if err == nil {
					t.Fatal("the dial did not fail")
				}
				st.Reason, st.Err = "unreachable: "+err.Error(), err
				want = strings.ReplaceAll(want, "%p", px)
			}
			got := notUsedWhy(st)
			t.Logf("%q, was %q", got, st.Reason)
			if !strings.HasPrefix(got, want) {
				t.Errorf("%q, want %q", got, want)
			}
			if st.Err != nil && (strings.Contains(got, "dial tcp") || strings.Contains(got, "connect:") || strings.Contains(got, addr)) {
				t.Errorf("%q still holds the dial error's text", got)
			}
			w := "waiting since 10:00:00 for a peer to scan from: peers " + addr + " (" + got + ")"
			if k := WarningKindOf(w); k != WarningWaiting {
				t.Errorf("%q is a warning of kind %v, want %v", w, k, WarningWaiting)
			}
		})
	}
}

// TestAwaitedInWords: a client of the node and of an address nothing
// listens on names the latter, in the peers a rescan's waiting warning
// and *WaitError give (awaited), by what failed, not by the dial's error.
func TestAwaitedInWords(t *testing.T) {
	needFixture(t)
	down := peertest.ClosedAddr(t)
	c := connectWith(t, Config{Peers: []string{fx.node.P2PAddr, down}, Params: fx.node.Params, Timeout: 5 * time.Second})
	got := c.awaited()
	t.Logf("%s", got)
	if want := down + " (not connected: connection refused (nothing listens there))"; !strings.Contains(got, want) || strings.Contains(got, "dial tcp") {
		t.Errorf("%q, want it to hold %q and no dial error's text", got, want)
	}
}
