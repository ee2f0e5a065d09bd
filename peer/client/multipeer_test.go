package client

import (
	"context"
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
				if !hasKind(res.Warnings, WarningBanned) {
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
	if !hasKind(res.Warnings, WarningOnePeer) {
		t.Fatalf("warnings %q", res.Warnings)
	}
}

// TestOutputsOnlyLiarIsAConflict: a peer whose filter of the block with
// alice's spend leaves out the script the spend spends (and so hides the
// spend), a lie only the spend's input shows, and only if the output it
// spends was standard: its public key gives the P2PKH script, but an
// output of no standard type could take the same spend. Against one
// honest peer or two, nobody is banned: the result names the conflict,
// its warning saying the block favours the honest side if the output
// was standard, and the block is scanned whole, so the spend is found.
// (Before the block was read, one honest peer against the liar failed the
// scan and two outvoted it; then, for a while, the block "proved" it
// false, which an honest filter of a spend of a non-standard output
// shaped as P2PKH would have been too.)
func TestOutputsOnlyLiarIsAConflict(t *testing.T) {
	needFixture(t)
	h := fx.height[fx.spendAlice.TxHash()]
	liar := peertest.NewLiar(t, fx.node.P2PAddr, fx.node.Params.Net, peertest.ForgeFilter(t, fx.node, h, peertest.OutputsOnly))
	for _, n := range []int{1, 2} {
		t.Run(fmt.Sprintf("%d honest", n), func(t *testing.T) {
			honest := honestPeers(t, n)
			res, err := bip157(t, connect(t, 0, append([]string{liar.Addr}, honest...)...))
			if err != nil {
				t.Fatal(err)
			}
			checkMatches(t, res, fx.want)
			for _, a := range append([]string{liar.Addr}, honest...) {
				if st := status(t, res, a); st.Banned {
					t.Errorf("%s banned on no proof: %+v", a, st)
				}
			}
			if len(res.Conflicts) != 1 || res.Conflicts[0].Height != h ||
				!hasWarning(res.Warnings, append([]string{"cannot decide", "if the outputs they spend were standard, the block favours ", "the filter of " + liar.Addr + " leaves out"}, honest...)...) {
				t.Errorf("conflicts %+v, warnings %q: want the conflict at %d, favouring the honest side if the output was standard", res.Conflicts, res.Warnings, h)
			}
		})
	}
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

// TestSeveralLiesSettledBlockByBlock: two liars at different heights, an
// empty filter at 102 (an output proves it false) and a filter of the
// outputs alone at 108 (alice's spend shows it false only if the output
// it spends was standard). The first is banned at its height, the height
// named; the second is a conflict at its height, nobody banned for it;
// the scan finds everything.
func TestSeveralLiesSettledBlockByBlock(t *testing.T) {
	needFixture(t)
	hFund, hSpend := fx.height[fx.fundAlice.TxHash()], fx.height[fx.spendAlice.TxHash()]
	e := peertest.NewLiar(t, fx.node.P2PAddr, fx.node.Params.Net, peertest.ForgeFilter(t, fx.node, hFund, peertest.EmptyFilter)).Addr
	o := peertest.NewLiar(t, fx.node.P2PAddr, fx.node.Params.Net, peertest.ForgeFilter(t, fx.node, hSpend, peertest.OutputsOnly)).Addr
	honest := honestPeers(t, 1)[0]
	res, err := bip157(t, connect(t, 0, e, honest, o))
	if err != nil {
		t.Fatal(err)
	}
	checkMatches(t, res, fx.want)
	if st := status(t, res, e); !st.Banned || !strings.Contains(st.Reason, fmt.Sprintf("(height %d): the block proves it false", hFund)) {
		t.Errorf("the liar at %d: %+v", hFund, st)
	}
	if st := status(t, res, o); st.Banned || len(res.Conflicts) != 1 || res.Conflicts[0].Height != hSpend {
		t.Errorf("the liar at %d: %+v; conflicts %+v, want one at %d", hSpend, st, res.Conflicts, hSpend)
	}
	if st := status(t, res, honest); st.Banned || st.Reason != "" {
		t.Errorf("the honest peer: %+v", st)
	}
}
