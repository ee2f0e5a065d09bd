package notify_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/btcsuite/btcd/wire"
	"github.com/spvfilter/spvfilter/peer/client"
	"github.com/spvfilter/spvfilter/peer/notify"
	"github.com/spvfilter/spvfilter/peer/peertest"
)

// reorgSafety is the tests' ReorgSafety: small, so that Done is reached.
const reorgSafety = 12

// record is what a registration told, in order, as text ("conf 111
// <hash>", "left 2", "neg 6", "spend 115 <hash> in 0", "reorg", "done",
// "closed").
type record struct {
	mu     sync.Mutex
	lines  []string
	confs  []notify.Confirmation
	spends []notify.SpendDetail
	signal chan struct{}
}

func newRecord() *record { return &record{signal: make(chan struct{}, 1)} }

func (r *record) add(line string) {
	r.mu.Lock()
	r.lines = append(r.lines, line)
	r.mu.Unlock()
	select {
	case r.signal <- struct{}{}:
	default:
	}
}

func (r *record) snapshot() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.lines...)
}

// count returns how many lines start with prefix.
func (r *record) count(prefix string) int {
	n := 0
	for _, l := range r.snapshot() {
		if strings.HasPrefix(l, prefix) {
			n++
		}
	}
	return n
}

// waitCount waits for n lines starting with prefix.
func (r *record) waitCount(t *testing.T, prefix string, n int) {
	t.Helper()
	deadline := time.After(60 * time.Second)
	for r.count(prefix) < n {
		select {
		case <-r.signal:
		case <-time.After(50 * time.Millisecond):
		case <-deadline:
			t.Fatalf("waited for %d %q, got %q", n, prefix, r.snapshot())
		}
	}
}

// follow reads every channel of a confirmation registration.
func followConf(ev *notify.ConfirmationEvent) *record {
	r := newRecord()
	go func() {
		confirmed, updates, neg, done := ev.Confirmed, ev.Updates, ev.NegativeConf, ev.Done
		for confirmed != nil || updates != nil || neg != nil || done != nil {
			select {
			case c, ok := <-confirmed:
				if !ok {
					confirmed = nil
					continue
				}
				r.mu.Lock()
				r.confs = append(r.confs, c)
				r.mu.Unlock()
				r.add(fmt.Sprintf("conf %d %v", c.Height, c.BlockHash))
			case u, ok := <-updates:
				if !ok {
					updates = nil
					continue
				}
				r.add(fmt.Sprintf("left %d", u))
			case d, ok := <-neg:
				if !ok {
					neg = nil
					continue
				}
				r.add(fmt.Sprintf("neg %d", d))
			case _, ok := <-done:
				if !ok {
					done = nil
					continue
				}
				r.add("done")
			}
		}
		r.add("closed")
	}()
	return r
}

// followSpend reads every channel of a spend registration.
func followSpend(ev *notify.SpendEvent) *record {
	r := newRecord()
	go func() {
		spend, reorg, done := ev.Spend, ev.Reorg, ev.Done
		for spend != nil || reorg != nil || done != nil {
			select {
			case s, ok := <-spend:
				if !ok {
					spend = nil
					continue
				}
				r.mu.Lock()
				r.spends = append(r.spends, s)
				r.mu.Unlock()
				r.add(fmt.Sprintf("spend %d %v in %d", s.Height, s.BlockHash, s.InputIndex))
			case _, ok := <-reorg:
				if !ok {
					reorg = nil
					continue
				}
				r.add("reorg")
			case _, ok := <-done:
				if !ok {
					done = nil
					continue
				}
				r.add("done")
			}
		}
		r.add("closed")
	}()
	return r
}

// start connects a client to addrs (node's by default), starts it and a
// notifier over it; both stop when the test ends.
func start(t *testing.T, node *peertest.Node, addrs ...string) (*client.Client, *notify.Notifier) {
	t.Helper()
	return startTimeout(t, node, 5*time.Second, addrs...)
}

// startTimeout is start with the client's timeout.
func startTimeout(t *testing.T, node *peertest.Node, timeout time.Duration, addrs ...string) (*client.Client, *notify.Notifier) {
	t.Helper()
	if len(addrs) == 0 {
		addrs = []string{node.P2PAddr}
	}
	ctx, cancel := context.WithCancel(context.Background())
	c, err := client.Connect(ctx, client.Config{Peers: addrs, Params: node.Params, Timeout: timeout})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Start(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := c.BestBlock(ctx); err != nil {
		t.Fatal(err)
	}
	n := notify.New(c, notify.Options{ReorgSafety: reorgSafety, PollInterval: 100 * time.Millisecond})
	if err := n.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := n.Stop(); err != nil {
			t.Errorf("Stop: %v", err)
		}
		cancel()
		c.Close()
	})
	return c, n
}

// aliceSpent mines, on node at height 110, a payment to alice (111) and
// its spend to carol (112).
func aliceSpent(t *testing.T, node *peertest.Node) (payAlice, spendAlice *wire.MsgTx) {
	t.Helper()
	alice, carol := peertest.NewKey("alice"), peertest.NewKey("carol")
	payAlice = node.SpendCoinbase(t, wire.NewTxOut(30_000_000, alice.PkScript()))
	node.Confirm(t, payAlice)
	spendAlice = node.Spend(t, []peertest.Output{peertest.OutputOf(payAlice, 0, alice)}, wire.NewTxOut(30_000_000-peertest.Fee, carol.PkScript()))
	node.Confirm(t, spendAlice)
	return payAlice, spendAlice
}

// hashAt returns the node's block hash at height h.
func hashAt(t *testing.T, node *peertest.Node, h int32) chainhash.Hash {
	t.Helper()
	hash, err := node.RPC().GetBlockHash(int64(h))
	if err != nil {
		t.Fatal(err)
	}
	return *hash
}

// invalidate takes the node's blocks from height h out of its chain; the
// transactions in them go back to its mempool.
func invalidate(t *testing.T, node *peertest.Node, h int32) {
	t.Helper()
	hash := hashAt(t, node, h)
	if err := node.RPC().InvalidateBlock(&hash); err != nil {
		t.Fatal(err)
	}
}

// TestNotifierConfirmationsAndSpends: against one btcd node, a
// confirmation and a spend registered after the event from a height hint
// in the past are told at once; registered before it, when it happens;
// a reorganization of 1 block that moves the spend sends Reorg, then the
// spend in its new block; one of 6 blocks that moves the confirmed
// transaction sends NegativeConf(6), then the confirmation in its new
// block; nothing is told twice for one block; Done at ReorgSafety; Cancel
// and Stop close the channels.
func TestNotifierConfirmationsAndSpends(t *testing.T) {
	node := peertest.StartBtcd(t, peertest.WithArgs("--nobanning"))
	node.Generate(t, 110)
	alice, bob, carol := peertest.NewKey("alice"), peertest.NewKey("bob"), peertest.NewKey("carol")
	// History: alice paid at 111, her output spent at 112, then 113.
	payAlice, spendAlice := aliceSpent(t, node) // 111, 112
	node.Generate(t, 1)                         // 113

	_, n := start(t, node)
	txid := payAlice.TxHash()
	past, err := n.RegisterConfirmations(&txid, alice.PkScript(), 2, 105)
	if err != nil {
		t.Fatal(err)
	}
	pastConf := followConf(past)
	op := wire.OutPoint{Hash: txid, Index: 0}
	ps, err := n.RegisterSpend(&op, alice.PkScript(), 105)
	if err != nil {
		t.Fatal(err)
	}
	pastSpend := followSpend(ps)
	// Script only, from a hint below the notifier's rescan.
	byScript, err := n.RegisterConfirmations(nil, carol.PkScript(), 1, 100)
	if err != nil {
		t.Fatal(err)
	}
	carolConf := followConf(byScript)
	pastConf.waitCount(t, "conf ", 1)
	pastSpend.waitCount(t, "spend ", 1)
	carolConf.waitCount(t, "conf ", 1)
	if c := pastConf.confs[0]; c.Height != 111 || c.BlockHash != hashAt(t, node, 111) || c.Tx.TxHash() != txid || c.TxIndex != 1 {
		t.Errorf("past confirmation %+v", c)
	}
	if s := pastSpend.spends[0]; s.Height != 112 || s.SpenderTxid != spendAlice.TxHash() || s.InputIndex != 0 || s.OutPoint != op {
		t.Errorf("past spend %+v", s)
	}
	if c := carolConf.confs[0]; c.Height != 112 || c.Tx.TxHash() != spendAlice.TxHash() {
		t.Errorf("script-only confirmation %+v", c)
	}

	// Before the event: bob's payment, 3 confirmations; its spend.
	payBob := node.BuildCoinbaseSpend(t, wire.NewTxOut(20_000_000, peertest.NewKey("dave").PkScript()), wire.NewTxOut(20_000_000, bob.PkScript()))
	bobID := payBob.TxHash()
	fc, err := n.RegisterConfirmations(&bobID, bob.PkScript(), 3, 113)
	if err != nil {
		t.Fatal(err)
	}
	bobConf := followConf(fc)
	bobOut := wire.OutPoint{Hash: bobID, Index: 1}
	fs, err := n.RegisterSpend(&bobOut, bob.PkScript(), 113)
	if err != nil {
		t.Fatal(err)
	}
	bobSpend := followSpend(fs)
	if _, err := node.RPC().SendRawTransaction(payBob, true); err != nil {
		t.Fatal(err)
	}
	node.Confirm(t, payBob) // 114
	bobConf.waitCount(t, "left 2", 1)
	node.Generate(t, 2) // 116
	bobConf.waitCount(t, "conf ", 1)
	if c := bobConf.confs[0]; c.Height != 114 || c.BlockHash != hashAt(t, node, 114) {
		t.Errorf("bob's confirmation %+v", c)
	}
	spendBob := node.Spend(t, []peertest.Output{peertest.OutputOf(payBob, 1, bob)}, wire.NewTxOut(20_000_000-peertest.Fee, carol.PkScript()))
	node.Confirm(t, spendBob) // 117
	bobSpend.waitCount(t, "spend ", 1)
	if s := bobSpend.spends[0]; s.Height != 117 || s.SpenderTxid != spendBob.TxHash() || s.BlockHash != hashAt(t, node, 117) {
		t.Errorf("bob's spend %+v", s)
	}

	// A reorganization of 1 block: the spend moves to the new 117.
	invalidate(t, node, 117)
	node.Generate(t, 2) // 117', 118'
	bobSpend.waitCount(t, "reorg", 1)
	bobSpend.waitCount(t, "spend ", 2)
	if s := bobSpend.spends[1]; s.Height != 117 || s.BlockHash != hashAt(t, node, 117) || s.BlockHash == bobSpend.spends[0].BlockHash {
		t.Errorf("bob's spend after the reorganization %+v (before: %v)", s, bobSpend.spends[0].BlockHash)
	}

	// A reorganization of 6 blocks (113..118): bob's payment and its
	// spend go back to the mempool and into the new 113.
	invalidate(t, node, 113)
	node.Generate(t, 8) // 113'..120'
	bobConf.waitCount(t, "neg ", 1)
	bobConf.waitCount(t, "conf ", 2)
	bobSpend.waitCount(t, "spend ", 3)
	// 118 down to 114, bob's block: 5 blocks out when it leaves.
	if got := bobConf.snapshot(); !contains(got, "neg 5") {
		t.Errorf("bob's confirmation told %q, want neg 5", got)
	}
	if c := bobConf.confs[1]; c.Height != 113 || c.BlockHash != hashAt(t, node, 113) {
		t.Errorf("bob's confirmation after the reorganization %+v", c)
	}
	if s := bobSpend.spends[2]; s.Height != 113 || s.BlockHash != hashAt(t, node, 113) {
		t.Errorf("bob's spend after the reorganization %+v", s)
	}

	// Cancel closes a registration's channels.
	cancelled, err := n.RegisterConfirmations(nil, peertest.NewKey("erin").PkScript(), 1, 120)
	if err != nil {
		t.Fatal(err)
	}
	erin := followConf(cancelled)
	cancelled.Cancel()
	erin.waitCount(t, "closed", 1)

	// Done once ReorgSafety deep: alice's confirmation at 111 (the
	// reorganizations left it).
	node.Generate(t, 4) // 124
	pastConf.waitCount(t, "done", 1)
	pastSpend.waitCount(t, "done", 1)
	pastConf.waitCount(t, "closed", 1)

	// At most once per block: every confirmation and spend names a
	// distinct block.
	for name, rec := range map[string]*record{"alice": pastConf, "carol": carolConf, "bob": bobConf, "alice's spend": pastSpend, "bob's spend": bobSpend} {
		seen := map[string]bool{}
		for _, l := range rec.snapshot() {
			if strings.HasPrefix(l, "conf ") || strings.HasPrefix(l, "spend ") {
				if seen[l] {
					t.Errorf("%s: %q told twice: %q", name, l, rec.snapshot())
				}
				seen[l] = true
			}
		}
	}
	if got := pastConf.count("conf "); got != 1 {
		t.Errorf("alice's confirmation told %d times: %q", got, pastConf.snapshot())
	}
	if err := n.Stop(); err != nil {
		t.Fatal(err)
	}
	for _, rec := range []*record{bobConf, bobSpend, carolConf, pastSpend} {
		rec.waitCount(t, "closed", 1)
	}
	if _, err := n.RegisterConfirmations(nil, bob.PkScript(), 1, 0); err == nil {
		t.Error("a registration after Stop was taken")
	}
}

func contains(lines []string, s string) bool {
	for _, l := range lines {
		if l == s {
			return true
		}
	}
	return false
}
