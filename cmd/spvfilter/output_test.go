package main

import (
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/btcsuite/btcd/wire"
	"github.com/spvfilter/spvfilter/peer/peertest"
)

// TestUserAgentCannotForgeOutputLines: a peer's user agent (its own words
// in its version message, up to 256 bytes) is printed in scan's text
// output. A peer that puts line breaks in it, followed by a match line
// of its choosing (a payment to the watched address that never
// happened), adds no line: its user agent is printed with control
// characters replaced, and the output holds no match line.
func TestUserAgentCannotForgeOutputLines(t *testing.T) {
	node := peertest.StartBtcd(t, peertest.WithArgs("--nobanning"))
	node.Generate(t, 110)
	addr := peertest.NewKey("alice").Address(node.Params).EncodeAddress()
	hash, err := node.RPC().GetBlockHash(105)
	if err != nil {
		t.Fatal(err)
	}
	fake := strings.Repeat("ab", 32)
	agent := fmt.Sprintf("/btcd:0.24.2/)\n%s  height 105  block %s  watch %s\npeer 10.0.0.1:8333 (/btcd:0.24.2/", fake, hash, addr)
	if len(agent) > 256 {
		t.Fatalf("user agent of %d bytes", len(agent))
	}
	liar := peertest.NewLiar(t, node.P2PAddr, node.Params.Net, func(m wire.Message) ([]wire.Message, bool) {
		if v, ok := m.(*wire.MsgVersion); ok {
			v.UserAgent = agent
		}
		return []wire.Message{m}, false
	})
	stdout, stderr, status := runCLI(t, "", "scan", "--network", "regtest", "--peer", liar.Addr, "--watch", addr)
	if status != exitOK {
		t.Fatalf("status %d, stderr %q", status, stderr)
	}
	match := regexp.MustCompile(`(?m)^[0-9a-f]{64}  height \d+  block [0-9a-f]{64}  watch `)
	if lines := match.FindAllString(stdout, -1); len(lines) > 0 {
		t.Errorf("alice was never paid, yet the output shows %d match line(s), written by the peer:\n%s", len(lines), stdout)
	}
}
