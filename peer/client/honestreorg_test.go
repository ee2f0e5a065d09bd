package client

import (
	"fmt"
	"os"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/btcsuite/btcd/wire"
	"github.com/spvfilter/spvfilter/peer/peertest"
)

// reorgTiming says where, among an honest node's answers, its
// reorganization lands: the node's proxy never alters a message, it only
// holds one while the node's chain changes.
type reorgTiming struct {
	name string
	// on is the command of the node's answer that triggers the
	// reorganization.
	on string
	// before: the whole new branch is mined before the answer is passed
	// on; otherwise the old blocks are invalidated first and the new
	// branch is mined in the background (rollback), or everything runs in
	// the background while the answer is held for hold (race).
	before, rollback bool
	hold             time.Duration
	// skip is how many answers of the command pass before the one that
	// triggers it, a new block on the old branch mined after each.
	skip int
	// second: only the second address's answer triggers it; late holds
	// that address's announcements (inv, headers), so that it claims
	// each block after the first (a late claim, see lateClaims).
	second bool
	late   time.Duration
}

var reorgTimings = []reorgTiming{
	{name: "cfheaders before", on: wire.CmdCFHeaders, before: true},
	{name: "cfheaders rollback", on: wire.CmdCFHeaders, rollback: true, hold: 300 * time.Millisecond},
	{name: "cfheaders race", on: wire.CmdCFHeaders, hold: 300 * time.Millisecond},
	{name: "cfilter before", on: wire.CmdCFilter, before: true},
	{name: "second cfheaders", on: wire.CmdCFHeaders, before: true, skip: 1},
	{name: "late word", on: wire.CmdCFHeaders, before: true, second: true, late: 150 * time.Millisecond},
	{name: "late word race", on: wire.CmdCFHeaders, hold: 200 * time.Millisecond, second: true, late: 150 * time.Millisecond, skip: 1},
}

// reorgProxy is an honest node's proxy that, once armed, reorganizes the
// node's chain while it holds an answer of one command (see
// reorgTiming), and passes every message on unchanged.
type reorgProxy struct {
	node   *peertest.Node
	timing reorgTiming
	fork   int32 // the last block both branches share

	mu      sync.Mutex
	proxies []*peertest.Liar // in front of the client's peers
	armed   bool
	seen    int // armed answers of the timing's command
	fired   bool
	oldTip  int32         // the old branch's tip when it fired
	asked   int           // the client's getcfheaders when it fired
	done    chan struct{} // closed once the new branch is mined
	err     error
}

// getCFHeaders counts the client's getcfheaders through the proxies.
func (p *reorgProxy) getCFHeaders() int {
	n := 0
	for _, l := range p.proxies {
		for _, m := range l.Requests() {
			if _, ok := m.(*wire.MsgGetCFHeaders); ok {
				n++
			}
		}
	}
	return n
}

func (p *reorgProxy) arm() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.armed = true
}

// hasFired reports whether the reorganization started.
func (p *reorgProxy) hasFired() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.fired
}

// answerOf returns the behaviour of the proxy in front of the client's
// address i (0 or 1).
func (p *reorgProxy) answerOf(i int) peertest.LieFunc {
	return func(m wire.Message) ([]wire.Message, bool) {
		switch m.Command() {
		case wire.CmdInv, wire.CmdHeaders:
			if i == 1 {
				time.Sleep(p.timing.late)
			}
			return []wire.Message{m}, false
		}
		if p.timing.second && i != 1 {
			return []wire.Message{m}, false
		}
		return p.answer(m)
	}
}

// answer passes m on unchanged, after the reorganization where m is the
// armed answer of the timing's command that triggers it.
func (p *reorgProxy) answer(m wire.Message) ([]wire.Message, bool) {
	if m.Command() != p.timing.on {
		return []wire.Message{m}, false
	}
	p.mu.Lock()
	if p.armed {
		p.seen++
	}
	fire := p.armed && !p.fired && p.seen > p.timing.skip
	p.fired = p.fired || fire
	proxies := p.proxies
	p.mu.Unlock()
	if !fire {
		return []wire.Message{m}, false
	}
	if err := p.note(proxies); err != nil {
		p.finish(err)
		return []wire.Message{m}, false
	}
	switch {
	case p.timing.before:
		p.finish(p.invalidate())
	case p.timing.rollback:
		err := p.invalidate()
		go p.finish(err)
		time.Sleep(p.timing.hold)
	default:
		go p.finish(p.invalidate())
		time.Sleep(p.timing.hold)
	}
	return []wire.Message{m}, false
}

// note records the client's getcfheaders so far and the old tip.
func (p *reorgProxy) note(proxies []*peertest.Liar) error {
	asked := (&reorgProxy{proxies: proxies}).getCFHeaders()
	tip, err := p.node.RPC().GetBlockCount()
	p.mu.Lock()
	defer p.mu.Unlock()
	p.asked, p.oldTip = asked, int32(tip)
	return err
}

// force reorganizes the node at once, unless an answer triggered it
// already (the client may have left that peer out as too slow), and
// reports whether it did.
func (p *reorgProxy) force() bool {
	p.mu.Lock()
	fired := p.fired
	p.fired = true
	proxies := p.proxies
	p.mu.Unlock()
	if fired {
		return false
	}
	err := p.note(proxies)
	if err == nil {
		err = p.invalidate()
	}
	p.finish(err)
	return true
}

// newTip waits, two minutes at most, for the new branch to be mined
// (finish) and returns the node's tip then.
func (p *reorgProxy) newTip(t *testing.T) int32 {
	t.Helper()
	select {
	case <-p.done:
	case <-time.After(2 * time.Minute):
		t.Fatalf("no reorganization: no %s answer came", p.timing.on)
	}
	if p.err != nil {
		t.Fatalf("reorganizing: %v", p.err)
	}
	n, err := p.node.RPC().GetBlockCount()
	if err != nil {
		t.Fatal(err)
	}
	return int32(n)
}

// invalidate invalidates the node's block above the fork.
func (p *reorgProxy) invalidate() error {
	hash, err := p.node.RPC().GetBlockHash(int64(p.fork + 1))
	if err != nil {
		return err
	}
	return p.node.RPC().InvalidateBlock(hash)
}

// finish mines the new branch, a block longer than the old one (unless
// err), and records the outcome.
func (p *reorgProxy) finish(err error) {
	if err == nil {
		_, err = p.node.GenerateErr(int(p.oldTip-p.fork) + 1)
	}
	p.mu.Lock()
	p.err = err
	p.mu.Unlock()
	close(p.done)
}

// connectedChain returns the blocks a following rescan's events leave
// connected, by height from the first connected.
func connectedChain(events []Event) (first int32, chain []chainhash.Hash) {
	first = -1
	for _, e := range events {
		switch e.Kind {
		case EventConnected:
			if first < 0 {
				first = e.Height
			}
			chain = append(chain[:e.Height-first], e.BlockHash)
		case EventDisconnected:
			chain = chain[:e.Height-first]
		}
	}
	return first, chain
}

// TestHonestReorgBetweenAnswersNotBanned: honest nodes reorganize 1, 6
// or 110 blocks deep while the client waits for an answer of theirs to a
// getcfheaders (or getcfilters) of a new block: the answer was made on
// the old branch, the next ones on the new. The client's two peers are
// proxies that hold that answer while the chain changes and never alter
// a message, in front of one node, or of two nodes connected to each
// other, the second learning the new branch from the first. A following
// rescan, with the service or without, follows the new branch, reports
// the old blocks disconnected and the new ones connected, as the nodes
// hold them, asks again after the reorganization, and never bans a node.
// By default each timing runs once, at one of the depths in turn and
// with one or two nodes in turn; with SPVFILTER_LONG=1 every timing runs
// at every depth with one node and with two.
func TestHonestReorgBetweenAnswersNotBanned(t *testing.T) {
	depths := []int32{1, 6, 110}
	full := os.Getenv("SPVFILTER_LONG") == "1"
	runs := 0
	for i, timing := range reorgTimings {
		for d, depth := range depths {
			for _, nodes := range []int{1, 2} {
				if !full && (d != i%len(depths) || nodes != 1+i%2) {
					continue
				}
				service := runs%2 == 1
				runs++
				name := fmt.Sprintf("%d blocks/%s/%d nodes/service %v", depth, timing.name, nodes, service)
				t.Run(name, func(t *testing.T) { honestReorgBetweenAnswers(t, depth, timing, nodes, service) })
			}
		}
	}
}

func honestReorgBetweenAnswers(t *testing.T, depth int32, timing reorgTiming, nodes int, service bool) {
	const fork int32 = 120
	node := peertest.StartBtcd(t, peertest.WithArgs("--nobanning"))
	t.Cleanup(func() { node.Stop() })
	oldTip := fork + depth
	node.Generate(t, int(oldTip))
	second := node
	if nodes == 2 {
		second = peertest.StartBtcd(t, peertest.WithArgs("--nobanning", "--connect="+node.P2PAddr))
		t.Cleanup(func() { second.Stop() })
		waitHeight(t, second, oldTip)
	}
	p := &reorgProxy{node: node, timing: timing, fork: fork, done: make(chan struct{})}
	p.proxies = []*peertest.Liar{
		peertest.NewLiar(t, node.P2PAddr, node.Params.Net, p.answerOf(0), peertest.AlsoSees(wire.CmdInv)),
		peertest.NewLiar(t, second.P2PAddr, node.Params.Net, p.answerOf(1), peertest.AlsoSees(wire.CmdInv)),
	}
	c := connectTo(t, node, 10*time.Second, p.proxies[0].Addr, p.proxies[1].Addr)
	if service {
		startService(t, c)
	}
	log, stop := follow(t, c, fork-10, peertest.NewKey("alice").PkScript())
	log.waitFor(t, "the old tip", tipAt(oldTip))
	p.arm()
	// New blocks on the old branch, whose filter headers the client asks
	// for, until the reorganization starts.
	for i := 0; i <= timing.skip+3 && !p.hasFired(); i++ {
		node.Generate(t, 1)
		time.Sleep(time.Second)
	}
	if p.force() {
		t.Logf("no %s answer triggered the reorganization: it comes between answers of no request", timing.on)
	}
	newTip := p.newTip(t)
	if nodes == 2 {
		waitHeight(t, second, newTip)
	}
	log.waitForWithin(t, "the new tip", tipAt(newTip), 2*time.Minute)
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	events := log.snapshot()
	checkOrder(t, events)
	checkReorgReported(t, node, events, fork, p.oldTip, newTip)
	// The reorganization landed between two of the client's requests.
	if after := p.getCFHeaders(); after <= p.asked {
		t.Errorf("no getcfheaders after the reorganization (%d before it)", p.asked)
	}
	for _, st := range c.Peers() {
		if st.Banned {
			t.Errorf("an honest node (%s) is banned: %s", st.Address, st.Reason)
		} else if st.Reason != "" {
			t.Logf("an honest node (%s) not in use: %s", st.Address, st.Reason)
		}
	}
}

// checkReorgReported checks that the events report the old branch's
// blocks above fork disconnected (highest first, oldTip at most) and
// leave connected the node's blocks up to newTip.
func checkReorgReported(t *testing.T, node *peertest.Node, events []Event, fork, oldTip, newTip int32) {
	t.Helper()
	disc := disconnectedHeights(events)
	if len(disc) == 0 || disc[0] > oldTip || !slices.Equal(disc, descending(disc[0], fork+1)) {
		t.Errorf("disconnected %v, want from %d at most down to %d", disc, oldTip, fork+1)
	}
	first, chain := connectedChain(events)
	for h := fork + 1; h <= newTip; h++ {
		want, err := node.RPC().GetBlockHash(int64(h))
		if err != nil {
			t.Fatal(err)
		}
		if i := h - first; i < 0 || int(i) >= len(chain) || chain[i] != *want {
			t.Errorf("the rescan leaves height %d not connected to the node's block %v", h, want)
		}
	}
	if int(newTip-first+1) != len(chain) {
		t.Errorf("the rescan leaves %d blocks connected from %d, want up to %d", len(chain), first, newTip)
	}
	t.Logf("%d events, %d disconnected: %v", len(events), len(disc), disc[:min(len(disc), 8)])
}

// descending returns the heights from down to to.
func descending(from, to int32) []int32 {
	var out []int32
	for h := from; h >= to; h-- {
		out = append(out, h)
	}
	return out
}

// waitHeight waits until node's tip is at height h.
func waitHeight(t *testing.T, node *peertest.Node, h int32) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		n, err := node.RPC().GetBlockCount()
		if err == nil && int32(n) == h {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the node's tip is at %d (%v), want %d", n, err, h)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
