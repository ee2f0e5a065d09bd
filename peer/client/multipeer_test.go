package client

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/btcsuite/btcd/wire"
	"github.com/spvfilter/spvfilter/gcs"
	"github.com/spvfilter/spvfilter/peer/peertest"
)

// consistentLie returns a proxy behaviour that serves forged as the filter
// of the block at height, and keeps every later answer consistent with it:
// the filter hash in cfheaders, the previous filter header of every later
// cfheaders, and every cfcheckpt entry from height on. Nothing it sends can
// be caught by checking it against itself.
func consistentLie(t *testing.T, height int32, forge func(b *wire.MsgBlock) []byte) peertest.LieFunc {
	t.Helper()
	rpc := fx.node.RPC()
	tip := fx.tip
	hashes := make([]chainhash.Hash, tip+1)
	heights := map[chainhash.Hash]int32{}
	filterHashes := make([]chainhash.Hash, tip+1)
	for h := int32(0); h <= tip; h++ {
		hashes[h] = blockHashAt(t, h)
		heights[hashes[h]] = h
		cf, err := rpc.GetCFilter(&hashes[h], wire.GCSFilterRegular)
		if err != nil {
			t.Fatal(err)
		}
		filterHashes[h] = chainhash.DoubleHashH(cf.Data)
	}
	block, err := rpc.GetBlock(&hashes[height])
	if err != nil {
		t.Fatal(err)
	}
	fake := forge(block)
	filterHashes[height] = chainhash.DoubleHashH(fake)
	headers := make([]chainhash.Hash, tip+1)
	var prev chainhash.Hash
	for h := int32(0); h <= tip; h++ {
		prev = gcs.MakeHeader(&filterHashes[h], &prev)
		headers[h] = prev
	}
	return func(m wire.Message) ([]wire.Message, bool) {
		switch m := m.(type) {
		case *wire.MsgCFilter:
			if m.BlockHash == hashes[height] {
				m.Data = fake
			}
		case *wire.MsgCFHeaders:
			stop := heights[m.StopHash]
			start := stop - int32(len(m.FilterHashes)) + 1
			if start > 0 {
				m.PrevFilterHeader = headers[start-1]
			}
			for i := range m.FilterHashes {
				fh := filterHashes[start+int32(i)]
				m.FilterHashes[i] = &fh
			}
		case *wire.MsgCFCheckpt:
			for i := range m.FilterHeaders {
				h := headers[int32(i+1)*wire.CFCheckptInterval]
				m.FilterHeaders[i] = &h
			}
		}
		return []wire.Message{m}, false
	}
}

// emptyFilter forges a filter that holds nothing: the block's own outputs
// prove it false.
func emptyFilter(*wire.MsgBlock) []byte { return []byte{0} }

// outputsOnly forges the filter of the block's outputs alone, leaving out
// the scripts its inputs spend: the block cannot prove it false.
func outputsOnly(t *testing.T) func(*wire.MsgBlock) []byte {
	return func(b *wire.MsgBlock) []byte {
		f, err := gcs.BuildBasic(b, nil)
		if err != nil {
			t.Fatal(err)
		}
		return f.NBytes()
	}
}

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
				liar := peertest.NewLiar(t, fx.node.P2PAddr, fx.node.Params.Net, consistentLie(t, tt.height, emptyFilter))
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
	liar := peertest.NewLiar(t, fx.node.P2PAddr, fx.node.Params.Net, consistentLie(t, fx.height[fx.fundAlice.TxHash()], emptyFilter))
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
	liar := peertest.NewLiar(t, fx.node.P2PAddr, fx.node.Params.Net, consistentLie(t, h, outputsOnly(t)))
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
