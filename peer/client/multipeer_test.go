package client

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/btcsuite/btcd/wire"
	"github.com/spvfilter/spvfilter/peer/peertest"
)

// honestPeers returns n more addresses for the shared node.
func honestPeers(t *testing.T, n int) []string {
	var out []string
	for i := 0; i < n; i++ {
		out = append(out, peertest.NewLiar(t, fx.node.P2PAddr, fx.node.Params.Net, nil).Addr)
	}
	return out
}

func status(t *testing.T, res *ScanResult, addr string) PeerStatus {
	t.Helper()
	for _, st := range res.Peers {
		if st.Address == addr {
			return st
		}
	}
	t.Fatalf("no status for %s in %+v", addr, res.Peers)
	return PeerStatus{}
}

func bip157(t *testing.T, c *Client) (*ScanResult, error) {
	t.Helper()
	return c.ScanBIP157(context.Background(), ScanRequest{Watch: items(fx.watch), To: c.Chain().Height()})
}

// TestConsistentLiarIsCaught: one peer hides alice's payment at height
// 102 (and, in the second case, carol's at the block past the last
// checkpoint) behind an empty filter with a coherent header chain; one
// honest peer is enough for the scan to find everything and ban the liar.
func TestConsistentLiarIsCaught(t *testing.T) {
	needFixture(t)
	for _, tt := range []struct {
		name   string
		height int32
	}{
		{"below a checkpoint", fx.height[fx.fundAlice.TxHash()]},
		{"past the last checkpoint", fx.height[fx.late.TxHash()]},
	} {
		for _, liarFirst := range []bool{true, false} {
			t.Run(tt.name, func(t *testing.T) {
				liar := peertest.NewLiar(t, fx.node.P2PAddr, fx.node.Params.Net, peertest.ForgeFilter(t, fx.node, tt.height, peertest.EmptyFilter))
				peers := []string{honestPeers(t, 1)[0]}
				if liarFirst {
					peers = append([]string{liar.Addr}, peers...)
				} else {
					peers = append(peers, liar.Addr)
				}
				c := connect(t, 0, peers...)
				res, err := bip157(t, c)
				if err != nil {
					t.Fatal(err)
				}
				checkMatches(t, res, fx.want)
				st := status(t, res, liar.Addr)
				if !st.Banned || !strings.Contains(st.Reason, "proves it false") {
					t.Errorf("liar: %+v", st)
				}
				if st := status(t, res, peers[map[bool]int{true: 1, false: 0}[liarFirst]]); st.Banned || st.Reason != "" {
					t.Errorf("honest peer: %+v", st)
				}
				if !slices.ContainsFunc(res.Warnings, func(w string) bool { return strings.Contains(w, "banned") }) {
					t.Errorf("warnings %q do not name the banned peer", res.Warnings)
				}
			})
		}
	}
}

// TestOnePeerIsOnlyAsGoodAsThePeer: alone, the same liar is not caught,
// and the result says it rests on one peer.
func TestOnePeerIsOnlyAsGoodAsThePeer(t *testing.T) {
	needFixture(t)
	liar := peertest.NewLiar(t, fx.node.P2PAddr, fx.node.Params.Net, peertest.ForgeFilter(t, fx.node, fx.height[fx.fundAlice.TxHash()], peertest.EmptyFilter))
	res, err := bip157(t, connect(t, 0, liar.Addr))
	if err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(res.Warnings, func(w string) bool { return strings.Contains(w, "rests on one peer") }) {
		t.Fatalf("warnings %q", res.Warnings)
	}
}

// TestUndecidableLiar: a peer whose filter of the block with alice's spend
// leaves out the spent script (and so hides the spend) cannot be proven
// wrong by the block. Against one honest peer the scan fails naming both;
// against two, the majority wins.
func TestUndecidableLiar(t *testing.T) {
	needFixture(t)
	h := fx.height[fx.spendAlice.TxHash()]
	liar := peertest.NewLiar(t, fx.node.P2PAddr, fx.node.Params.Net, peertest.ForgeFilter(t, fx.node, h, peertest.OutputsOnly))
	t.Run("one honest peer", func(t *testing.T) {
		honest := honestPeers(t, 1)[0]
		res, err := bip157(t, connect(t, 0, honest, liar.Addr))
		var ce *ConflictError
		if !errors.As(err, &ce) || ce.Height != h || res != nil {
			t.Fatalf("error %v, want a conflict at height %d", err, h)
		}
		for _, addr := range []string{honest, liar.Addr} {
			if !strings.Contains(err.Error(), addr) {
				t.Errorf("error %q does not name %s", err, addr)
			}
		}
	})
	t.Run("two honest peers", func(t *testing.T) {
		honest := honestPeers(t, 2)
		res, err := bip157(t, connect(t, 0, liar.Addr, honest[0], honest[1]))
		if err != nil {
			t.Fatal(err)
		}
		checkMatches(t, res, fx.want)
		if st := status(t, res, liar.Addr); !st.Banned || !strings.Contains(st.Reason, "outvoted") {
			t.Errorf("liar: %+v", st)
		}
		for _, a := range honest {
			if st := status(t, res, a); st.Banned {
				t.Errorf("honest peer banned: %+v", st)
			}
		}
	})
}

// TestFiltersFromEveryPeer: with three honest peers the filters are spread
// over all of them.
func TestFiltersFromEveryPeer(t *testing.T) {
	needFixture(t)
	proxies := make([]*peertest.Liar, 3)
	var addrs []string
	for i := range proxies {
		proxies[i] = peertest.NewLiar(t, fx.node.P2PAddr, fx.node.Params.Net, nil)
		addrs = append(addrs, proxies[i].Addr)
	}
	res, err := bip157(t, connect(t, 5*time.Second, addrs...))
	if err != nil {
		t.Fatal(err)
	}
	checkMatches(t, res, fx.want)
	if len(res.Warnings) != 0 {
		t.Errorf("warnings with three agreeing peers: %q", res.Warnings)
	}
	for _, p := range proxies {
		if !slices.Contains(p.Commands(), wire.CmdGetCFCheckpt) {
			t.Errorf("%s was not asked for checkpoints: %v", p.Addr, p.Commands())
		}
	}
}

// TestSeveralLiesSettledBlockByBlock: a liar the block disproves and one
// it cannot, at different heights. The first is banned at its height; the
// other is then settled at its own height, by the block or by a majority,
// and named for that height.
func TestSeveralLiesSettledBlockByBlock(t *testing.T) {
	needFixture(t)
	hFund, hSpend := fx.height[fx.fundAlice.TxHash()], fx.height[fx.spendAlice.TxHash()]
	empty := func() string {
		return peertest.NewLiar(t, fx.node.P2PAddr, fx.node.Params.Net, peertest.ForgeFilter(t, fx.node, hFund, peertest.EmptyFilter)).Addr
	}
	outputsOnly := func() string {
		return peertest.NewLiar(t, fx.node.P2PAddr, fx.node.Params.Net, peertest.ForgeFilter(t, fx.node, hSpend, peertest.OutputsOnly)).Addr
	}
	t.Run("one honest peer", func(t *testing.T) {
		honest, e, o := honestPeers(t, 1)[0], empty(), outputsOnly()
		c := connect(t, 0, honest, e, o)
		_, err := bip157(t, c)
		var ce *ConflictError
		if !errors.As(err, &ce) || ce.Height != hSpend {
			t.Fatalf("error %v, want a conflict at height %d (the outputs-only lie), not %d", err, hSpend, hFund)
		}
		if st := c.Peers()[1]; !st.Banned || !strings.Contains(st.Reason, "proves it false") {
			t.Errorf("the disproved liar: %+v", st)
		}
	})
	t.Run("two honest peers", func(t *testing.T) {
		honest := honestPeers(t, 2)
		e, o := empty(), outputsOnly()
		res, err := bip157(t, connect(t, 0, honest[0], e, o, honest[1]))
		if err != nil {
			t.Fatal(err)
		}
		checkMatches(t, res, fx.want)
		if st := status(t, res, o); !st.Banned || !strings.Contains(st.Reason, fmt.Sprintf("(height %d) outvoted", hSpend)) {
			t.Errorf("the outvoted liar: %+v", st)
		}
		if !slices.ContainsFunc(res.Warnings, func(w string) bool { return strings.Contains(w, "decided by a majority") }) {
			t.Errorf("no warning that a majority decided: %q", res.Warnings)
		}
	})
}
