package peer

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/btcsuite/btcd/chaincfg"

	"github.com/spvfilter/spvfilter/peer/chain"
	"github.com/spvfilter/spvfilter/peer/peertest"
)

// TestSOCKS5 connects through a SOCKS5 proxy to btcd by name: the name
// reaches the proxy unresolved, and a proxy that refuses, wants other
// credentials or is down fails the dial naming the proxy, without a
// direct connection.
func TestSOCKS5(t *testing.T) {
	needFixture(t)
	const name, onion = "btcd.invalid:18444", "pg6mmjiyjmcrsslvykfwnntlaru7p5svn6y2ymmju6nubxndf4pscryd.onion:8333"
	names := map[string]string{name: fx.node.P2PAddr, onion: fx.node.P2PAddr}
	direct, accepted := silentListener(t)
	names["direct.invalid:1"] = direct
	ok := peertest.NewSOCKSProxy(t, peertest.SOCKSConfig{Names: names})
	auth := peertest.NewSOCKSProxy(t, peertest.SOCKSConfig{Names: names, User: "alice", Password: "s3cret"})
	refusing := peertest.NewSOCKSProxy(t, peertest.SOCKSConfig{Refuse: peertest.SOCKSConnectionRefused})
	down := peertest.ClosedAddr(t)
	tests := []struct {
		name  string
		proxy string
		addr  string
		err   []string // the dial's error names these; nil: it works
	}{
		{"a host name", "socks5://" + ok.Addr, name, nil},
		{"an onion address", "socks5://" + ok.Addr, onion, nil},
		{"with a password", "socks5://alice:s3cret@" + auth.Addr, name, nil},
		{"socks5h scheme", "socks5h://" + ok.Addr, name, nil},
		{"a wrong password", "socks5://alice:wrong@" + auth.Addr, name, []string{"SOCKS5 proxy " + auth.Addr, name}},
		{"a refusing proxy", "socks5://" + refusing.Addr, name, []string{"SOCKS5 proxy " + refusing.Addr, "did not connect to " + name, "connection refused"}},
		{"a name the proxy does not know", "socks5://" + ok.Addr, "nowhere.invalid:1", []string{"SOCKS5 proxy " + ok.Addr, "host unreachable"}},
		{"a proxy that is down", "socks5://" + down, direct, []string{"SOCKS5 proxy " + down + " unreachable"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dialer, err := SOCKS5(tt.proxy)
			if err != nil {
				t.Fatal(err)
			}
			ctx := context.Background()
			p, err := Dial(ctx, Config{Addr: tt.addr, Params: fx.node.Params, Timeout: 5 * time.Second, Dial: dialer})
			if tt.err != nil {
				checkPeerError(t, err, tt.addr, ErrDisconnected)
				for _, s := range tt.err {
					if !strings.Contains(err.Error(), s) {
						t.Errorf("error %q does not say %q", err, s)
					}
				}
				if strings.Contains(err.Error(), "s3cret") {
					t.Errorf("error %q shows the password", err)
				}
				t.Log(err)
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			defer p.Close()
			if _, err := p.SyncHeaders(ctx, chain.New(fx.node.Params)); err != nil {
				t.Fatal(err)
			}
		})
	}
	for _, px := range []*peertest.SOCKSProxy{ok, auth} {
		for _, r := range px.Requests() {
			if r != name && r != onion && r != "nowhere.invalid:1" {
				t.Errorf("the proxy was asked for %q: a name was resolved locally", r)
			}
		}
	}
	if !slices.Contains(ok.Requests(), onion) {
		t.Errorf("requests %q lack the onion address", ok.Requests())
	}
	if n := accepted.Load(); n != 0 {
		t.Errorf("%d direct connections to %s with the proxy down", n, direct)
	}
}

func TestSOCKS5URL(t *testing.T) {
	for _, bad := range []string{"http://127.0.0.1:9050", "socks5://127.0.0.1", "socks5://:9050", "socks5://127.0.0.1:9050/x",
		"socks5://127.0.0.1:9050?x=1", "socks4://127.0.0.1:9050", "127.0.0.1:9050", "socks5://u:pw@[::1", ""} {
		if _, err := SOCKS5(bad); err == nil || strings.Contains(err.Error(), "pw@") {
			t.Errorf("SOCKS5(%q): %v", bad, err)
		}
	}
}

// TestSOCKS5FailureTyped: a SOCKS5 proxy that is reached but does not
// connect (it refuses, or does not know the name) fails the dial with a
// *ProxyError of the connection naming the proxy and the address it was
// asked for, as one that cannot be reached does with no address.
func TestSOCKS5FailureTyped(t *testing.T) {
	refusing := peertest.NewSOCKSProxy(t, peertest.SOCKSConfig{Refuse: peertest.SOCKSConnectionRefused})
	unknown := peertest.NewSOCKSProxy(t, peertest.SOCKSConfig{})
	down := peertest.ClosedAddr(t)
	tests := []struct {
		name, proxy, addr, target, says string
	}{
		{"a refusing proxy", refusing.Addr, "127.0.0.1:1", "127.0.0.1:1", `did not connect to 127.0.0.1:1: it replied "connection refused"`},
		{"a name the proxy does not know", unknown.Addr, "nowhere.invalid:1", "nowhere.invalid:1", `it replied "host unreachable"`},
		{"a proxy that is down", down, "127.0.0.1:1", "", "unreachable"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dial, err := SOCKS5("socks5://" + tt.proxy)
			if err != nil {
				t.Fatal(err)
			}
			_, err = Dial(context.Background(), Config{Addr: tt.addr, Params: &chaincfg.RegressionNetParams, Timeout: 5 * time.Second, Dial: dial})
			var px *ProxyError
			var pe *PeerError
			if !errors.As(err, &px) || !errors.As(err, &pe) || pe.Op != OpConnect || !errors.Is(err, ErrDisconnected) {
				t.Fatalf("error %v, want a *PeerError of %q wrapping a *ProxyError", err, OpConnect)
			}
			if px.Proxy != tt.proxy || px.Target != tt.target || px.Err == nil || !strings.Contains(px.Error(), tt.says) {
				t.Errorf("%#v (%v), want proxy %s, target %q, saying %q", px, px, tt.proxy, tt.target, tt.says)
			}
		})
	}
}
