package neutrinobench

import (
	"context"
	"slices"
	"sort"
	"testing"
	"time"

	"github.com/btcsuite/btcd/chaincfg"
	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/btcsuite/btcd/wire"
	"github.com/spvfilter/spvfilter/gcs"
	"github.com/spvfilter/spvfilter/peer/peertest"
)

// testSpec is a small chain for the tests: quick to generate, with several
// planted transactions for every watch set the tests use.
var testSpec = ChainSpec{Blocks: 300, Elements: 200, Watched: 10, PaymentsPerScript: 2}

func testChain(t *testing.T) *Chain {
	t.Helper()
	c, err := CachedChain(testSpec)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestSameMatches scans the chain with every client, the prototypes too,
// for 1 and for 10 watched scripts: each must find exactly the planted
// transactions, and spvfilter's must have made one connection to the
// node, or as many as the prototype names (its verack frames, 24 bytes
// each, counted).
func TestSameMatches(t *testing.T) {
	c := testChain(t)
	nodes := startNodes(t, c, 1)
	addrs := Addrs(nodes)
	params := nodes[0].Params
	for _, w := range []int{1, 10} {
		want := c.Expected(w)
		if len(want) < 2 {
			t.Fatalf("W=%d: only %d planted transactions; the test needs several", w, len(want))
		}
		for _, cl := range slices.Concat(clients, prototypes) {
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			st, err := cl.scan(ctx, addrs, params, WatchScripts(w), 1, -1)
			cancel()
			if err != nil {
				t.Fatalf("W=%d %s: %v", w, cl.name, err)
			}
			st.Release()
			if st.Tip != int32(c.Spec.Blocks)+1 {
				t.Errorf("W=%d %s: synced to %d, node is at %d", w, cl.name, st.Tip, c.Spec.Blocks+1)
			}
			if missing, extra := diff(want, st.Matched); len(missing)+len(extra) > 0 {
				t.Errorf("W=%d %s: missing %v, unexpected %v", w, cl.name, missing, extra)
			}
			if n, ok := map[string]int{"spvfilter": 1, "spvfilter-2conns": 2, "spvfilter-3conns": 3}[cl.name]; ok &&
				st.ByCommand[wire.CmdVerAck] != uint64(24*n) {
				t.Errorf("W=%d %s: %d bytes of verack, want %d connections' (%d)", w, cl.name, st.ByCommand[wire.CmdVerAck], n, 24*n)
			}
			if st.BytesReceived == 0 || st.BlocksFetched < len(blocksOf(c, w)) {
				t.Errorf("W=%d %s: %d bytes received, %d blocks fetched for %d planted blocks",
					w, cl.name, st.BytesReceived, st.BlocksFetched, len(blocksOf(c, w)))
			}
		}
	}
}

// TestStartNodes serves the chain from three nodes; each serves the same
// chain with the same planted transactions.
func TestStartNodes(t *testing.T) {
	c := testChain(t)
	nodes := startNodes(t, c, 3)
	want := c.Expected(c.Spec.Watched)
	for _, addr := range Addrs(nodes) {
		st, err := scanSpvfilter(context.Background(), []string{addr}, nodes[0].Params, WatchScripts(c.Spec.Watched), 1, -1)
		if err != nil {
			t.Fatalf("%s: %v", addr, err)
		}
		st.Release()
		if missing, extra := diff(want, st.Matched); len(missing)+len(extra) > 0 {
			t.Errorf("%s: missing %v, unexpected %v", addr, missing, extra)
		}
	}
	// All three at once: the peers agree, and the same transactions come
	// out.
	st, err := scanSpvfilter(context.Background(), Addrs(nodes), nodes[0].Params, WatchScripts(c.Spec.Watched), 1, -1)
	if err != nil {
		t.Fatalf("three peers: %v", err)
	}
	st.Release()
	if missing, extra := diff(want, st.Matched); len(missing)+len(extra) > 0 {
		t.Errorf("three peers: missing %v, unexpected %v", missing, extra)
	}
}

// TestChainFilters checks the generated filters: every block from the
// first spendable height on holds Elements distinct scripts, give or take
// the funding script and the planted payments.
func TestChainFilters(t *testing.T) {
	c := testChain(t)
	nodes := startNodes(t, c, 1)
	rpc := nodes[0].RPC()
	var sizes []int
	for h := int64(1); h <= int64(c.Spec.Blocks); h++ {
		hash, err := rpc.GetBlockHash(h)
		if err != nil {
			t.Fatal(err)
		}
		cf, err := rpc.GetCFilter(hash, wire.GCSFilterRegular)
		if err != nil {
			t.Fatal(err)
		}
		f, err := gcs.DecodeBasic(cf.Data)
		if err != nil {
			t.Fatalf("height %d: %v", h, err)
		}
		sizes = append(sizes, int(f.N()))
	}
	sort.Ints(sizes)
	e := c.Spec.Elements
	if med := sizes[len(sizes)/2]; med < e || med > e+4 {
		t.Errorf("median filter size %d, want %d..%d", med, e, e+4)
	}
	if sizes[0] < e/2 {
		t.Errorf("smallest filter %d elements, want at least %d", sizes[0], e/2)
	}
}

// startNodes starts n nodes serving c and stops them when the test ends.
func startNodes(tb testing.TB, c *Chain, n int) []*peertest.Node {
	tb.Helper()
	nodes, err := StartNodes(c, n)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		for _, node := range nodes {
			if err := node.Stop(); err != nil {
				tb.Errorf("stopping btcd: %v", err)
			}
		}
	})
	return nodes
}

type scanFunc func(ctx context.Context, addrs []string, params *chaincfg.Params, watch [][]byte, from, to int32) (*ScanStats, error)

func diff(want, got map[chainhash.Hash]bool) (missing, extra []chainhash.Hash) {
	for h := range want {
		if !got[h] {
			missing = append(missing, h)
		}
	}
	for h := range got {
		if !want[h] {
			extra = append(extra, h)
		}
	}
	return missing, extra
}

// blocksOf returns the heights holding transactions of the first w watched
// scripts.
func blocksOf(c *Chain, w int) map[int32]bool {
	out := make(map[int32]bool)
	want := c.Expected(w)
	for _, p := range c.Planted {
		if want[p.Txid] {
			out[p.Height] = true
		}
	}
	return out
}
