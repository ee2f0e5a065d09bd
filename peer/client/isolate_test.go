package client

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/btcsuite/btcd/chaincfg"

	"github.com/spvfilter/spvfilter/peer/peertest"
)

// TestIsolateFreshCredentials: a scan with Isolate through a SOCKS5
// proxy that accepts any credentials (as Tor, which isolates circuits by
// them): every block fetched comes over a connection of its own whose
// user name no other connection used, and no other block is asked of
// the node; the ledger counts them under the node's address.
func TestIsolateFreshCredentials(t *testing.T) {
	needFixture(t)
	rs := threeRelays(t, nil)
	proxy := peertest.NewSOCKSProxy(t, peertest.SOCKSConfig{AnyUser: true})
	c := connectSpread(t, Config{Timeout: 10 * time.Second, Proxy: "socks5://" + proxy.Addr, Isolate: true}, rs)
	long := len(proxy.Users())
	res, err := scan(t, c, "bip157", 100, fx.tip)
	if err != nil {
		t.Fatal(err)
	}
	checkMatches(t, res, fx.want)
	users := proxy.Users()
	seen := map[string]bool{}
	for i, u := range users {
		if i < long {
			continue
		}
		if u == "" || seen[u] {
			t.Errorf("connection %d: user name %q empty or used before", i, u)
		}
		seen[u] = true
	}
	asked := 0
	for _, r := range rs {
		asked += len(blocksAsked(r))
	}
	t.Logf("%d long-lived connections, then %d of their own for %d blocks; the nodes were asked for %d blocks",
		long, len(users)-long, res.BlocksFetched, asked)
	if len(seen) != res.BlocksFetched || asked != res.BlocksFetched || res.BlocksFetched < 2 {
		t.Errorf("%d connections of fresh credentials and %d blocks asked for %d blocks fetched", len(seen), asked, res.BlocksFetched)
	}
	fetched := 0
	for _, r := range rs {
		fetched += len(viewOf(t, c, r.Addr).fetched)
	}
	if fetched != res.BlocksFetched {
		t.Errorf("the ledger holds %d blocks asked, the scan fetched %d", fetched, res.BlocksFetched)
	}
}

// TestIsolateNeedsProxy: Isolate without a proxy or a dialer is refused
// with ErrIsolateWithoutProxy before anything connects.
func TestIsolateNeedsProxy(t *testing.T) {
	_, err := Connect(context.Background(), Config{Peers: []string{"127.0.0.1:1"}, Params: &chaincfg.RegressionNetParams, Isolate: true})
	if !errors.Is(err, ErrIsolateWithoutProxy) {
		t.Fatalf("Isolate without a proxy: %v", err)
	}
}
