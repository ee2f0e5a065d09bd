package btcwallet

import (
	"slices"
	"testing"
	"time"

	"github.com/btcsuite/btcd/wire"
	"github.com/btcsuite/btcwallet/waddrmgr"
	"github.com/spvfilter/spvfilter/peer/client"
	"github.com/spvfilter/spvfilter/peer/peertest"
)

// lateProof is a wallet whose client has two colluders, which forge the
// filter of every block paying the wallet and announce it at once, and an
// honest peer whose announcements reach the client later (a slower link).
type lateProof struct {
	h         *harness
	l         *walletLife
	c         *client.Client
	net       *testNet
	script    []byte
	colluders []string
}

// startLateProof starts a lateProof wallet, synced to the chain's tip.
func startLateProof(t *testing.T) *lateProof {
	// Later than the client waits for a block's announcements to settle
	// (a second at most), so that the honest word is still a late claim.
	const lateDelay = 1300 * time.Millisecond
	net := startNodes(t, testChainSpec, 2)
	script := seedKeys(t, [][2]uint32{{waddrmgr.ExternalBranch, 0}})[0].P2WPKHScript()
	_, height := net.tip(t)
	hides := func(_ int32, b *wire.MsgBlock) bool { return paysScript(b, script) }
	var colluders []string
	for range 2 {
		lie := peertest.Forge(t, net.nodes[1], height+1, hides, peertest.EmptyFilter)
		colluders = append(colluders, peertest.NewLiar(t, net.nodes[1].P2PAddr, params.Net, lie).Addr)
	}
	honest := peertest.NewLiar(t, net.nodes[0].P2PAddr, params.Net, func(m wire.Message) ([]wire.Message, bool) {
		if _, ok := m.(*wire.MsgInv); ok {
			time.Sleep(lateDelay)
		}
		return []wire.Message{m}, false
	}, peertest.AlsoSees(wire.CmdInv))
	addrs := append(slices.Clone(colluders), honest.Addr)
	c := sharedClient(t, addrs, 5*time.Second)
	h := &harness{t: t, addrs: addrs, bc: sharedCase("spvfilter", c, lowestFirst), log: newNotificationLog(), limit: waitLimit, net: net}
	t.Cleanup(func() {
		if t.Failed() {
			for _, st := range c.Peers() {
				t.Logf("peer %s: tip %d, banned %v (%s)", st.Address, st.Tip, st.Banned, st.Reason)
			}
			t.Logf("notifications:\n%v", h.log)
		}
	})
	l := h.syncedWallet(t, script)
	return &lateProof{h: h, l: l, c: c, net: net, script: script, colluders: colluders}
}

// check checks that each of heights' payments reached the wallet once,
// late (as RelevantTx with its block, not with the block's connection),
// and that the colluders, and only they, are banned.
func (p *lateProof) check(t *testing.T, heights ...int32) {
	t.Helper()
	for _, height := range heights {
		var late, filtered int
		for _, n := range p.h.log.of("receive") {
			switch {
			case n.kind == kindRelevantTx && n.height == height:
				late++
			case n.kind == kindFilteredBlockConnected && n.height == height:
				filtered += n.txs
			}
		}
		if late != 1 || filtered != 0 {
			t.Errorf("the payment in block %d reached the wallet %d times late (RelevantTx with its block) and %d times with the block, want once late", height, late, filtered)
		}
	}
	for _, st := range p.c.Peers() {
		if colluder := slices.Contains(p.colluders, st.Address); st.Banned != colluder {
			t.Errorf("peer %s (colluder: %v) banned: %v (%s)", st.Address, colluder, st.Banned, st.Reason)
		}
	}
	t.Logf("notifications:\n%v", p.h.log)
}

// TestLateProofReachesWallet: the block that pays the wallet is reported
// to it on the colluders' filter, without the payment; once the honest
// peer's word proves them false, the block is scanned again and the
// payment reaches the wallet with its block: the wallet's balance and
// history hold it, confirmed in that block.
func TestLateProofReachesWallet(t *testing.T) {
	p := startLateProof(t)
	pay := spendGenerated(t, p.net, 2, wire.NewTxOut(int64(received), p.script))
	hash := *p.net.miner.Confirm(t, pay)
	p.net.waitSame(t)
	tip, height := p.net.tip(t)
	st := p.h.waitSynced(p.l, "the payment", tip, func(s walletState) bool { return s.Confirmed == received })
	p.h.expectState(st, paymentState(pay, hash, height, height))
	p.check(t, height)
}

// TestLateProofOfSeveralReachesWallet: three consecutive blocks pay the
// wallet, each reported to it on the colluders' filter; then one more
// block is mined. Every payment reaches the wallet once, late, with its
// block: the wallet's balance holds all three.
func TestLateProofOfSeveralReachesWallet(t *testing.T) {
	p := startLateProof(t)
	p.h.limit = 30 * time.Second
	var heights []int32
	for i := range 3 {
		pay := spendGenerated(t, p.net, 2+int32(i), wire.NewTxOut(int64(received), p.script))
		p.net.miner.Confirm(t, pay)
		p.net.waitSame(t)
		tip, height := p.net.tip(t)
		p.h.waitSynced(p.l, "the paying block", tip, nil)
		heights = append(heights, height)
	}
	p.net.mine(t, 1)
	p.net.waitSame(t)
	tip, _ := p.net.tip(t)
	want := 3 * received
	p.h.waitSynced(p.l, "the three payments", tip, func(s walletState) bool { return s.Confirmed == want })
	p.check(t, heights...)
}
