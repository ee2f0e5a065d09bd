package client

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/btcsuite/btcd/wire"
	"github.com/spvfilter/spvfilter/peer/peertest"
)

// twinShared is a third node holding the fixture's chain, for the tests
// that need three real nodes; no test mines on it.
var twinShared = peertest.NewShared(func(n *peertest.Node) (*peertest.Node, error) {
	return n, n.CopyBlocksErr(fx.node, fx.tip)
}, peertest.WithArgs("--nobanning"))

// threeRelays returns relays in front of three real nodes holding the
// fixture's chain (the third one block beyond), the first with lie.
func threeRelays(t *testing.T, lie peertest.LieFunc) []*peertest.Liar {
	t.Helper()
	needFixture(t)
	nodes := []*peertest.Node{fx.node, twinShared.Get(t), needAhead(t).node}
	out := make([]*peertest.Liar, len(nodes))
	for i, n := range nodes {
		f := lie
		if i > 0 {
			f = nil
		}
		out[i] = peertest.NewLiar(t, n.P2PAddr, n.Params.Net, f)
	}
	return out
}

// blocksAsked returns the blocks the client asked a relay for, every
// time it asked.
func blocksAsked(r *peertest.Liar) []chainhash.Hash {
	var out []chainhash.Hash
	for _, m := range r.Requests() {
		if gd, ok := m.(*wire.MsgGetData); ok {
			for _, iv := range gd.InvList {
				if iv.Type == wire.InvTypeBlock || iv.Type == wire.InvTypeWitnessBlock {
					out = append(out, iv.Hash)
				}
			}
		}
	}
	return out
}

// relayAddrs returns the relays' addresses.
func relayAddrs(rs []*peertest.Liar) []string {
	out := make([]string, len(rs))
	for i, r := range rs {
		out[i] = r.Addr
	}
	return out
}

// connectSpread returns a client of the relays with cfg's FetchSpread,
// Timeout and proxy, its headers synced.
func connectSpread(t *testing.T, cfg Config, rs []*peertest.Liar) *Client {
	t.Helper()
	cfg.Peers, cfg.Params = relayAddrs(rs), fx.node.Params
	return connectWith(t, cfg)
}

// TestFetchSpreadShare: three real nodes, each behind a relay; the
// scan's four matched blocks are spread so that no relay is asked for
// more than two (the default share, 1/3 rounded up), every block is
// asked once, and every payment is found.
func TestFetchSpreadShare(t *testing.T) {
	rs := threeRelays(t, nil)
	c := connectSpread(t, Config{Timeout: 10 * time.Second}, rs)
	res, err := scan(t, c, "bip157", 100, fx.tip)
	if err != nil {
		t.Fatal(err)
	}
	checkMatches(t, res, fx.want)
	seen := map[chainhash.Hash]int{}
	for _, r := range rs {
		asked := blocksAsked(r)
		for _, h := range asked {
			seen[h]++
		}
		cap := (res.BlocksFetched + len(rs) - 1) / len(rs)
		t.Logf("%s was asked for %d of %d blocks", r.Addr, len(asked), res.BlocksFetched)
		if len(asked) > cap {
			t.Errorf("%s was asked for %d of the %d blocks, more than its share of %d", r.Addr, len(asked), res.BlocksFetched, cap)
		}
	}
	if res.BlocksFetched < 4 || len(seen) != res.BlocksFetched {
		t.Errorf("%d distinct blocks asked for a scan that fetched %d", len(seen), res.BlocksFetched)
	}
	for h, n := range seen {
		if n > 1 {
			t.Errorf("block %v asked %d times", h, n)
		}
	}
}

// TestFetchSpreadOnePeer: with one peer the default spreads nothing: it
// is asked for every block, and the result says so.
func TestFetchSpreadOnePeer(t *testing.T) {
	needFixture(t)
	r := peertest.NewLiar(t, fx.node.P2PAddr, fx.node.Params.Net, nil)
	c := connectSpread(t, Config{Timeout: 10 * time.Second}, []*peertest.Liar{r})
	res, err := scan(t, c, "bip157", 100, fx.tip)
	if err != nil {
		t.Fatal(err)
	}
	if n := len(blocksAsked(r)); n != res.BlocksFetched {
		t.Errorf("the one peer was asked for %d of %d blocks", n, res.BlocksFetched)
	}
	if !hasWarning(res.Warnings, "one peer ("+r.Addr+") was asked for all") {
		t.Errorf("no warning that one peer saw every block: %q", res.Warnings)
	}
}

// TestFetchSpreadStrict: an explicit share two peers cannot keep (a
// quarter of the four blocks: one each, two in all) fails with
// SpreadError before any block is asked for; a share three peers can keep
// (0.4: two each) is kept.
func TestFetchSpreadStrict(t *testing.T) {
	rs := threeRelays(t, nil)
	c := connectSpread(t, Config{Timeout: 10 * time.Second, FetchSpread: 0.25}, rs[:2])
	_, err := scan(t, c, "bip157", 100, fx.tip)
	var se *SpreadError
	if !errors.As(err, &se) || se.Peers != 2 || se.Heights < 4 || se.Cap*se.Peers >= se.Heights {
		t.Fatalf("a share two peers cannot keep: %v", err)
	}
	for _, r := range rs[:2] {
		if n := len(blocksAsked(r)); n != 0 {
			t.Errorf("%s was asked for %d blocks before the scan failed", r.Addr, n)
		}
	}
	c = connectSpread(t, Config{Timeout: 10 * time.Second, FetchSpread: 0.4}, rs)
	res, err := scan(t, c, "bip157", 100, fx.tip)
	if err != nil {
		t.Fatal(err)
	}
	checkMatches(t, res, fx.want)
	for _, r := range rs {
		if n := len(blocksAsked(r)); n > 2 {
			t.Errorf("%s was asked for %d blocks at a share of 0.4 of %d", r.Addr, n, res.BlocksFetched)
		}
	}
	if _, err := Connect(context.Background(), Config{Peers: relayAddrs(rs), Params: fx.node.Params, FetchSpread: 1.5}); err == nil ||
		!strings.Contains(err.Error(), "FetchSpread") {
		t.Errorf("FetchSpread 1.5: %v", err)
	}
}

// TestFetchSpreadRetry: one of three peers stalls on every block it is
// asked for. The scan drops it and asks the others for its share only:
// the blocks they served are not asked again, every payment is found,
// and the staller saw no more than its share.
func TestFetchSpreadRetry(t *testing.T) {
	stall := func(m wire.Message) ([]wire.Message, bool) {
		if _, ok := m.(*wire.MsgBlock); ok {
			return nil, false
		}
		return []wire.Message{m}, false
	}
	rs := threeRelays(t, stall)
	c := connectSpread(t, Config{Timeout: 3 * time.Second}, rs)
	res, err := scan(t, c, "bip157", 100, fx.tip)
	if err != nil {
		t.Fatal(err)
	}
	checkMatches(t, res, fx.want)
	stalled := blocksAsked(rs[0])
	t.Logf("the staller was asked for %d blocks; warnings: %q", len(stalled), res.Warnings)
	if len(stalled) == 0 || len(stalled) > 2 {
		t.Errorf("the staller was asked for %d blocks, want 1 or 2 (its share of %d)", len(stalled), res.BlocksFetched)
	}
	served := map[chainhash.Hash]int{}
	for _, r := range rs[1:] {
		for _, h := range blocksAsked(r) {
			served[h]++
		}
	}
	for h, n := range served {
		if n > 1 {
			t.Errorf("block %v asked %d times of the honest peers", h, n)
		}
	}
	if len(served) != res.BlocksFetched {
		t.Errorf("the honest peers were asked for %d distinct blocks, the scan fetched %d", len(served), res.BlocksFetched)
	}
}

// TestFetchSpreadScripts: the two blocks of alice (paid, spent) and the
// two of carol go to different peers, scan after scan (each plan is
// shuffled anew), so that no peer sees both blocks of a script: a share
// by count alone gives a pair to one peer about one plan in three.
func TestFetchSpreadScripts(t *testing.T) {
	rs := threeRelays(t, nil)
	pairs := map[string][2]int32{
		"alice": {fx.height[fx.fundAlice.TxHash()], fx.height[fx.spendAlice.TxHash()]},
		"carol": {fx.height[fx.fundCarol.TxHash()], fx.height[fx.spendCarol.TxHash()]},
	}
	before := make([]int, len(rs))
	for run := range 6 {
		c := connectSpread(t, Config{Timeout: 10 * time.Second}, rs)
		if _, err := scan(t, c, "bip157", 100, fx.tip); err != nil {
			t.Fatal(err)
		}
		for i, r := range rs {
			asked := blocksAsked(r)
			heights := map[int32]bool{}
			for _, h := range asked[before[i]:] {
				if height, ok := c.chain.HeightOf(h); ok {
					heights[height] = true
				}
			}
			before[i] = len(asked)
			for who, p := range pairs {
				if heights[p[0]] && heights[p[1]] {
					t.Errorf("scan %d: %s was asked for both blocks of %s (%d and %d)", run, r.Addr, who, p[0], p[1])
				}
			}
		}
		c.Close()
	}
}
