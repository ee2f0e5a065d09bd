package notify_test

import (
	"bytes"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/btcsuite/btcd/wire"
	"github.com/spvfilter/spvfilter/peer/notify"
	"github.com/spvfilter/spvfilter/peer/peertest"
)

// branchForger is a Liar behaviour that forges, with peertest.Forge, the
// filters of the blocks from height from on that choose picks, on
// whichever branch the node is: made anew by reorganize, its answers stay
// consistent with its own filter headers through reorganizations. It
// notes the blocks whose filter or filter hash it forged.
type branchForger struct {
	t      *testing.T
	node   *peertest.Node
	from   int32
	choose func(int32, *wire.MsgBlock) bool
	forge  func(*wire.MsgBlock) []byte

	mu     sync.Mutex
	lie    peertest.LieFunc
	forged map[chainhash.Hash]int // answers forged, by block
}

func newBranchForger(t *testing.T, node *peertest.Node, from int32, choose func(int32, *wire.MsgBlock) bool, forge func(*wire.MsgBlock) []byte) *branchForger {
	f := &branchForger{t: t, node: node, from: from, choose: choose, forge: forge, forged: map[chainhash.Hash]int{}}
	f.lie = peertest.Forge(t, node, from, choose, forge)
	return f
}

// reorganize runs change, which reorganizes the node's chain, while the
// liar holds its answers, and forges the new branch from then on.
func (f *branchForger) reorganize(change func()) {
	f.mu.Lock()
	defer f.mu.Unlock()
	change()
	f.lie = peertest.Forge(f.t, f.node, f.from, f.choose, f.forge)
}

func (f *branchForger) answer(m wire.Message) ([]wire.Message, bool) {
	var block chainhash.Hash
	switch m := m.(type) {
	case *wire.MsgCFilter:
		block = m.BlockHash
	case *wire.MsgCFHeaders:
		block = m.StopHash
	case *wire.MsgCFCheckpt:
		block = m.StopHash
	default:
		return []wire.Message{m}, false
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	hdr, err := f.node.RPC().GetBlockHeaderVerbose(&block)
	if err != nil {
		// A block the node's chain left, which the forger of the new
		// branch cannot place: the liar hangs up rather than answer
		// honestly, which would contradict what it said before.
		f.t.Logf("the liar hangs up on %T of block %v: %v", m, block, err)
		return nil, true
	}
	var before []chainhash.Hash
	var data []byte
	switch m := m.(type) {
	case *wire.MsgCFilter:
		data = bytes.Clone(m.Data)
	case *wire.MsgCFHeaders:
		for _, h := range m.FilterHashes {
			before = append(before, *h)
		}
	}
	out, hangup := f.lie(m)
	switch m := m.(type) {
	case *wire.MsgCFilter:
		if !bytes.Equal(data, m.Data) {
			f.forged[block]++
		}
	case *wire.MsgCFHeaders:
		first := hdr.Height - int32(len(m.FilterHashes)) + 1
		for i, h := range m.FilterHashes {
			if *h == before[i] {
				continue
			}
			if hash, err := f.node.RPC().GetBlockHash(int64(first) + int64(i)); err == nil {
				f.forged[*hash]++
			}
		}
	}
	return out, hangup
}

// waitForged reports whether the liar forged an answer about block,
// waiting up to wait: its answer may come after the events that the
// honest peers' answers told.
func (f *branchForger) waitForged(block chainhash.Hash, wait time.Duration) bool {
	for deadline := time.Now().Add(wait); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		f.mu.Lock()
		n := f.forged[block]
		f.mu.Unlock()
		if n > 0 {
			return true
		}
	}
	return false
}

// waitScanned waits until n's rescan has scanned height h.
func waitScanned(t *testing.T, n *notify.Notifier, h int32) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for notify.RescanHeight(n) <= h {
		if time.Now().After(deadline) {
			t.Fatalf("the rescan is at height %d after a minute, want past %d", notify.RescanHeight(n), h)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// holds picks the blocks that hold tx.
func holds(tx *wire.MsgTx) func(int32, *wire.MsgBlock) bool {
	id := tx.TxHash()
	return blocksWith(func(t *wire.MsgTx) bool { return t.TxHash() == id })
}

// TestNotifierReorgsWithLiar: beside two honest peers, a liar serves, for
// every block that spends bob's output, a filter without the scripts its
// inputs spend (which the block cannot prove false), consistent with its
// own filter headers on whichever branch the node is. Registered before
// the events: the confirmation of bob's payment (111), that of its spend
// to carol (112), and the spend of bob's output. Each is told in its
// block; a reorganization of 1 block moves the spend (Reorg and
// NegativeConf, then both in the new 112), one of 6 blocks moves it again
// (112'..117'); the payment, never moved, is told once. Registered after
// all that, from a height hint in the past, the spend's confirmation and
// the spend are told from the history in its last block. Every event
// names the node's block at its height, nothing is told twice for one
// block, the liar forged the spend's block on a branch at least (which,
// the log says), and nobody is banned (no answer proves a lie).
func TestNotifierReorgsWithLiar(t *testing.T) {
	node := peertest.StartBtcd(t, peertest.WithArgs("--nobanning"))
	node.Generate(t, 110)
	bob, carol := peertest.NewKey("bob"), peertest.NewKey("carol")
	payBob := node.BuildCoinbaseSpend(t, wire.NewTxOut(20_000_000, bob.PkScript()))
	spendBob := peertest.BuildSpend(t, []peertest.Output{peertest.OutputOf(payBob, 0, bob)}, wire.NewTxOut(20_000_000-peertest.Fee, carol.PkScript()))
	forger := newBranchForger(t, node, 105, holds(spendBob), peertest.OutputsOnly)
	liar := peertest.NewLiar(t, node.P2PAddr, node.Params.Net, forger.answer)
	honest1 := peertest.NewLiar(t, node.P2PAddr, node.Params.Net, nil)
	honest2 := peertest.NewLiar(t, node.P2PAddr, node.Params.Net, nil)
	c, n := start(t, node, liar.Addr, honest1.Addr, honest2.Addr)

	bobID, spendID := payBob.TxHash(), spendBob.TxHash()
	op := wire.OutPoint{Hash: bobID, Index: 0}
	register := func(hint uint32) (pay, conf, spend *record) {
		t.Helper()
		pe, err := n.RegisterConfirmations(&bobID, bob.PkScript(), 1, hint)
		if err != nil {
			t.Fatal(err)
		}
		ce, err := n.RegisterConfirmations(&spendID, carol.PkScript(), 2, hint)
		if err != nil {
			t.Fatal(err)
		}
		se, err := n.RegisterSpend(&op, bob.PkScript(), hint)
		if err != nil {
			t.Fatal(err)
		}
		return followConf(pe), followConf(ce), followSpend(se)
	}
	pay, conf, spend := register(110)
	for _, tx := range []*wire.MsgTx{payBob, spendBob} {
		if _, err := node.RPC().SendRawTransaction(tx, true); err != nil {
			t.Fatal(err)
		}
		node.Confirm(t, tx) // 111, 112
	}
	node.Generate(t, 1) // 113
	pay.waitCount(t, "conf ", 1)
	conf.waitCount(t, "conf ", 1)
	spend.waitCount(t, "spend ", 1)
	check := func(what string, height, want int32, hash chainhash.Hash) {
		t.Helper()
		if height != want || hash != hashAt(t, node, want) {
			t.Errorf("%s at height %d in %v, want height %d in %v", what, height, hash, want, hashAt(t, node, want))
		}
	}
	check("bob's payment", int32(pay.confs[0].Height), 111, pay.confs[0].BlockHash)
	check("the spend's confirmation", int32(conf.confs[0].Height), 112, conf.confs[0].BlockHash)
	check("the spend", spend.spends[0].Height, 112, spend.spends[0].BlockHash)
	lied := []chainhash.Hash{hashAt(t, node, 112)}

	// moved waits for the k-th reorganization to reach the spend and its
	// confirmation, and checks both are told again in the new 112.
	moved := func(k int, stage string) {
		t.Helper()
		spend.waitCount(t, "reorg", k)
		spend.waitCount(t, "spend ", k+1)
		conf.waitCount(t, "neg ", k)
		conf.waitCount(t, "conf ", k+1)
		check("the spend "+stage, spend.spends[k].Height, 112, spend.spends[k].BlockHash)
		check("the spend's confirmation "+stage, int32(conf.confs[k].Height), 112, conf.confs[k].BlockHash)
		lied = append(lied, hashAt(t, node, 112))
	}

	// A reorganization of 1 block: the spend moves to the new 112. (Each
	// once the rescan is past the tip: btcd leaves unanswered a request
	// whose stop block left its chain, and the peers asked would be
	// dropped as stalled.)
	waitScanned(t, n, 113)
	forger.reorganize(func() {
		invalidate(t, node, 112)
		node.Generate(t, 3) // 112'..114'
	})
	moved(1, "after 1 block")

	// A reorganization of 6 blocks (112'..117'): the spend moves again.
	node.Generate(t, 3) // 117'
	waitScanned(t, n, 117)
	forger.reorganize(func() {
		invalidate(t, node, 112)
		node.Generate(t, 8) // 112''..119''
	})
	moved(2, "after 6 blocks")

	// Registered now, from a height hint in the past: told from the
	// history.
	latePay, lateConf, lateSpend := register(105)
	latePay.waitCount(t, "conf ", 1)
	lateConf.waitCount(t, "conf ", 1)
	lateSpend.waitCount(t, "spend ", 1)
	check("bob's payment, registered late", int32(latePay.confs[0].Height), 111, latePay.confs[0].BlockHash)
	check("the spend's confirmation, registered late", int32(lateConf.confs[0].Height), 112, lateConf.confs[0].BlockHash)
	check("the spend, registered late", lateSpend.spends[0].Height, 112, lateSpend.spends[0].BlockHash)

	if got := pay.count("conf "); got != 1 || pay.count("neg ") != 0 {
		t.Errorf("bob's payment, never moved: %q, want one confirmation", pay.snapshot())
	}
	records := map[string]*record{"bob's payment": pay, "the spend's confirmation": conf, "the spend": spend,
		"bob's payment, late": latePay, "the spend's confirmation, late": lateConf, "the spend, late": lateSpend}
	for name, rec := range records {
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
	// The liar was there: it forged the filter of the spend's block on
	// a branch at least (on which depends on whom the client asked, and
	// when: a liar slower than the honest peers may be left out).
	var forged []string
	for i, stage := range []string{"before the reorganizations", "after the reorganization of 1 block", "after the reorganization of 6 blocks"} {
		if forger.waitForged(lied[i], 5*time.Second) {
			forged = append(forged, stage)
		}
	}
	t.Logf("the liar forged the spend's block %q", forged)
	if len(forged) == 0 {
		t.Errorf("the liar forged nothing about the blocks spending bob's output: the test proves nothing")
	}
	for _, st := range c.Peers() {
		if st.Banned {
			t.Errorf("banned, though no answer proves a lie (the liar never contradicts itself): %+v", st)
		}
	}
}
