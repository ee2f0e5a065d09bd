package main

import (
	"testing"
	"time"

	"github.com/spvfilter/spvfilter/peer/peertest"
)

// TestScanFollowRedialsRestartedNode: scan --follow over one node that
// restarts, away for two seconds, and mines a block as soon as it is
// back. scan --follow runs the service, which redials the node and syncs
// its headers at once, so the new block is printed within seconds.
func TestScanFollowRedialsRestartedNode(t *testing.T) {
	node := peertest.StartBtcd(t, peertest.WithArgs("--nobanning"))
	node.Generate(t, 105)
	proxy := peertest.NewLiar(t, node.P2PAddr, node.Params.Net, nil)
	addr := peertest.NewKey("alice").Address(node.Params).EncodeAddress()
	p := startFollow(t, "--peer", proxy.Addr, "--network", "regtest", "--from", "100", "--watch", addr, "--timeout", "5s")
	if err := p.waitFor("tip 105", 30*time.Second, isEvent("tip", 105)); err != nil {
		t.Fatal(err)
	}
	proxy.Pause(t, 2*time.Second)
	node.Generate(t, 1) // 106, once the node is back
	if p.waitFor("tip 106", 15*time.Second, isEvent("tip", 106)) == nil {
		return
	}
	quiet := p.stderr.String()
	err := p.interrupt(t)
	var summary map[string]any
	for _, m := range p.got {
		if m["event"] == "summary" {
			summary = m
		}
	}
	t.Errorf("15 s after the node came back and mined block 106: nothing printed, standard error %q; after SIGINT (exit %v) the summary says %v",
		quiet, err, summary["warnings"])
}
