package client

import (
	"fmt"
	"testing"
	"time"

	"github.com/btcsuite/btcd/wire"
	"github.com/spvfilter/spvfilter/peer/peertest"
)

// TestFollowGoesOnAfterRolledBackNodeStalls: an honest node rolls back
// its tip (the old branch's blocks invalidated) just after answering the
// client's getcfheaders of a new block, and mines its new branch only
// after several of the client's timeouts. The client's next request
// names a block no longer on the node's chain, which btcd does not
// answer: the step stalls, and the header sync that follows shows a node
// behind, not yet a reorganization. The following rescan, with the
// service or without, syncs the headers again and scans anew (a bounded
// number of times) rather than ending with the stall: once the new branch
// is mined it reports the old blocks disconnected and the new ones
// connected, and the node is not banned.
func TestFollowGoesOnAfterRolledBackNodeStalls(t *testing.T) {
	for _, service := range []bool{false, true} {
		t.Run(fmt.Sprintf("service %v", service), func(t *testing.T) { followRolledBackStall(t, service) })
	}
}

func followRolledBackStall(t *testing.T, service bool) {
	const (
		fork    int32 = 120
		timeout       = 2 * time.Second
		late          = 3 * timeout // until the new branch is mined
	)
	node := peertest.StartBtcd(t, peertest.WithArgs("--nobanning"))
	t.Cleanup(func() { node.Stop() })
	node.Generate(t, int(fork+1))
	p := &reorgProxy{node: node, timing: reorgTiming{on: wire.CmdCFHeaders}, fork: fork, done: make(chan struct{})}
	rollBack := func(m wire.Message) ([]wire.Message, bool) {
		if m.Command() != wire.CmdCFHeaders {
			return []wire.Message{m}, false
		}
		p.mu.Lock()
		fire := p.armed && !p.fired
		p.fired = p.fired || fire
		proxies := p.proxies
		p.mu.Unlock()
		if fire {
			err := p.note(proxies)
			if err == nil {
				err = p.invalidate()
			}
			go func() {
				time.Sleep(late)
				p.finish(err)
			}()
		}
		return []wire.Message{m}, false
	}
	p.proxies = []*peertest.Liar{peertest.NewLiar(t, node.P2PAddr, node.Params.Net, rollBack)}
	c := connectTo(t, node, timeout, p.proxies[0].Addr)
	if service {
		startService(t, c)
	}
	log, stop := follow(t, c, fork-10, peertest.NewKey("alice").PkScript())
	log.waitFor(t, "the old tip", tipAt(fork+1))
	p.arm()
	node.Generate(t, 1) // on the old branch: its filter header is asked for
	newTip := p.newTip(t)
	log.waitForWithin(t, "the new tip", tipAt(newTip), 2*time.Minute)
	if err := stop(); err != nil {
		t.Fatalf("the following rescan ended with %v", err)
	}
	events := log.snapshot()
	checkOrder(t, events)
	checkReorgReported(t, node, events, fork, p.oldTip, newTip)
	for _, st := range c.Peers() {
		if st.Banned {
			t.Errorf("an honest node (%s) is banned: %s", st.Address, st.Reason)
		}
	}
}
