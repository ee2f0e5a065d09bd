package client

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/btcsuite/btcd/wire"
	"github.com/spvfilter/spvfilter/peer/peertest"
)

// deepChain is a node whose chain a test reorganizes: fork is the last
// block both branches share; old pays alice on the old branch, near its
// tip; the new branch, longer by one block, pays her with a transaction of
// its own near the fork.
type deepChain struct {
	node      *peertest.Node
	alice     *peertest.Key
	fork, tip int32 // the old tip
	old       *wire.MsgTx
}

// newDeepChain mines a chain whose top depth blocks a reorganization
// will replace, the payment to alice 5 blocks below its tip.
func newDeepChain(t *testing.T, depth int32) *deepChain {
	t.Helper()
	const fork = 120
	r := &deepChain{node: peertest.StartBtcd(t, peertest.WithArgs("--nobanning")), alice: peertest.NewKey("alice"), fork: fork, tip: fork + depth}
	r.node.Generate(t, int(r.tip-5))
	r.old = r.node.SpendCoinbase(t, wire.NewTxOut(10_000_000, r.alice.PkScript()))
	r.node.Confirm(t, r.old) // tip - 4
	r.node.Generate(t, 4)
	return r
}

// reorganize invalidates the blocks above the fork and mines a branch one
// block longer, which pays alice two blocks above the fork; it returns
// that payment and the new tip.
func (r *deepChain) reorganize(t *testing.T) (*wire.MsgTx, int32) {
	t.Helper()
	hash, err := r.node.RPC().GetBlockHash(int64(r.fork + 1))
	if err != nil {
		t.Fatal(err)
	}
	if err := r.node.RPC().InvalidateBlock(hash); err != nil {
		t.Fatal(err)
	}
	r.node.Generate(t, 1)
	pay := r.node.SpendCoinbase(t, wire.NewTxOut(20_000_000, r.alice.PkScript()))
	r.node.Confirm(t, pay)
	newTip := r.tip + 1
	r.node.Generate(t, int(newTip-r.fork-2))
	if n, err := r.node.RPC().GetBlockCount(); err != nil || int32(n) != newTip {
		t.Fatalf("the new branch ends at %d (%v), want %d", n, err, newTip)
	}
	return pay, newTip
}

// disconnectedHeights returns the heights of the blocks the events
// report disconnected, in their order.
func disconnectedHeights(events []Event) []int32 {
	var out []int32
	for _, e := range events {
		if e.Kind == EventDisconnected {
			out = append(out, e.Height)
		}
	}
	return out
}

// finalMatches returns the matches a following rescan's events leave
// standing: those whose block was not disconnected after them.
func finalMatches(events []Event) map[chainhash.Hash]int32 {
	out := map[chainhash.Hash]int32{}
	at := map[chainhash.Hash][]chainhash.Hash{} // block: its matches
	for _, e := range events {
		switch e.Kind {
		case EventMatch:
			out[e.Match.Txid] = e.Height
			at[e.BlockHash] = append(at[e.BlockHash], e.Match.Txid)
		case EventDisconnected:
			for _, id := range at[e.BlockHash] {
				delete(out, id)
			}
			delete(at, e.BlockHash)
		}
	}
	return out
}

// checkOnChain checks that every match left standing is in the node's
// block at its height.
func checkOnChain(t *testing.T, node *peertest.Node, matches map[chainhash.Hash]int32) {
	t.Helper()
	for id, h := range matches {
		hash, err := node.RPC().GetBlockHash(int64(h))
		if err != nil {
			t.Fatal(err)
		}
		b, err := node.RPC().GetBlock(hash)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.ContainsFunc(b.Transactions, func(tx *wire.MsgTx) bool { return tx.TxHash() == id }) {
			t.Errorf("match %v reported at %d, which the node's block there does not hold", id, h)
		}
	}
}

// TestFollowDeepReorg: the one node of a following rescan with a data
// directory, run by the service (which learns blocks from its
// announcements), leaves its branch
// for one 6, 110 or 2,000 blocks deep and one block longer (invalidateblock
// and new blocks, announced one by one as they are mined). The node is
// never blamed for the blocks it announced on the branch it left; the
// rescan follows the heavier branch, reports every block that left the
// chain, highest first, before the new ones, and the new branch's
// payment; what it reports in the end is what the node's chain holds.
func TestFollowDeepReorg(t *testing.T) {
	for _, depth := range []int32{6, 110, 2000} {
		t.Run(fmt.Sprintf("%d blocks", depth), func(t *testing.T) {
			start := time.Now()
			r := newDeepChain(t, depth)
			// With a data directory, whose headers and filter headers
			// the reorganization cuts too.
			ctx := context.Background()
			c, err := Connect(ctx, Config{Peers: []string{r.node.P2PAddr}, Params: r.node.Params, DataDir: t.TempDir(), Timeout: 10 * time.Second})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { c.Close() })
			startService(t, c)
			log, stop := follow(t, c, r.fork-10, r.alice.PkScript())
			log.waitFor(t, "the old tip", tipAt(r.tip))
			mined := time.Now()
			pay, newTip := r.reorganize(t)
			log.waitForWithin(t, "the new tip", tipAt(newTip), 2*time.Minute)
			followed := time.Since(mined)
			if err := stop(); err != nil {
				t.Fatal(err)
			}
			events := log.snapshot()
			checkOrder(t, events)
			disc := disconnectedHeights(events)
			want := make([]int32, 0, depth)
			for h := r.tip; h > r.fork; h-- {
				want = append(want, h)
			}
			if !slices.Equal(disc, want) {
				t.Errorf("disconnected %d blocks (%v...), want %d..%d highest first", len(disc), disc[:min(len(disc), 5)], r.tip, r.fork+1)
			}
			final := finalMatches(events)
			if _, ok := final[pay.TxHash()]; !ok {
				t.Errorf("the new branch's payment %v is not reported", pay.TxHash())
			}
			checkOnChain(t, r.node, final)
			if st := c.Peers()[0]; st.Banned || st.Reason != "" {
				t.Errorf("the node: %+v", st)
			}
			t.Logf("depth %d: %d events, %d disconnections; the new branch of %d blocks followed %v after it was mined (set-up and all %v)",
				depth, len(events), len(disc), newTip-r.fork, followed.Round(time.Millisecond), time.Since(start).Round(time.Millisecond))
		})
	}
}

// TestDeepReorgBetweenRuns: a scan with a data directory, then the node
// leaves its branch for one 110 or 2,000 blocks deep, then a second scan
// with the same directory. It follows the heavier branch, lists every
// block that left the chain (in height order, lowest first) with a
// warning naming the fork, finds the new branch's payment and none of the
// old at its old height.
func TestDeepReorgBetweenRuns(t *testing.T) {
	for _, depth := range []int32{110, 2000} {
		t.Run(fmt.Sprintf("%d blocks", depth), func(t *testing.T) {
			r := newDeepChain(t, depth)
			dir := t.TempDir()
			scan := func() *ScanResult {
				t.Helper()
				ctx := context.Background()
				c, err := Connect(ctx, Config{Peers: []string{r.node.P2PAddr}, Params: r.node.Params, DataDir: dir, Timeout: 10 * time.Second})
				if err != nil {
					t.Fatal(err)
				}
				defer c.Close()
				res, err := c.ScanBIP157(ctx, ScanRequest{Watch: []WatchItem{ScriptItem(r.alice.PkScript())}, From: r.fork - 10, To: -1})
				if err != nil {
					t.Fatal(err)
				}
				return res
			}
			first := scan()
			if !hasMatch(first, r.old.TxHash()) {
				t.Fatalf("the first scan missed the old branch's payment")
			}
			var old []chainhash.Hash
			for h := r.fork + 1; h <= r.tip; h++ {
				hash, err := r.node.RPC().GetBlockHash(int64(h))
				if err != nil {
					t.Fatal(err)
				}
				old = append(old, *hash)
			}
			pay, newTip := r.reorganize(t)
			res := scan()
			if res.To != newTip || !hasMatch(res, pay.TxHash()) {
				t.Errorf("scanned to %d (want %d); the new payment found: %v", res.To, newTip, hasMatch(res, pay.TxHash()))
			}
			final := map[chainhash.Hash]int32{}
			for _, m := range res.Matches {
				final[m.Txid] = m.Height
			}
			checkOnChain(t, r.node, final)
			if len(res.Disconnected) != int(depth) || !hasKind(res.Warnings, WarningReorganized, fmt.Sprintf("%d block(s) above height %d left it", depth, r.fork)) {
				t.Errorf("%d disconnected, warnings %q; want %d above %d", len(res.Disconnected), res.Warnings, depth, r.fork)
			}
			if !slices.Equal(res.Disconnected, old) {
				t.Errorf("the disconnected blocks are not the old branch's, lowest first")
			}
		})
	}
}
