package client

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/btcsuite/btcd/wire"
	"github.com/spvfilter/spvfilter/peer/peertest"
)

// TestColludersPrefixDoesNotBanHonest: two colluders, the only
// peers while the chain ends inside checkpoint segment 0, forge block
// 500's filter and every filter header after it, and the client verifies
// those with them alone. The chain then passes height 1000, an honest
// peer joins, and the new heights are verified from the checkpoints:
// the colluders send the true checkpoint at 1000 (the honest node's),
// so the checkpoints agree. The forged filter headers 0..990 verified
// before do not reach that agreed checkpoint: they are not taken as a
// known prefix, and the whole segment is asked again from its start. The
// honest peer, whose previous header differs from the forged one, is not
// banned (that header is no word of its own), no ban of it is kept, and
// the next run over the data directory takes it.
func TestColludersPrefixDoesNotBanHonest(t *testing.T) {
	for _, stored := range []bool{false, true} {
		t.Run(fmt.Sprintf("stored=%v", stored), func(t *testing.T) { testColludersPrefix(t, stored) })
	}
}

func testColludersPrefix(t *testing.T, stored bool) {
	needFixture(t)
	const h, below = 500, 990
	node := peertest.CopyChainTo(t, fx.node, below)
	trueCheckpoints := func(forge peertest.LieFunc) peertest.LieFunc {
		return func(m wire.Message) ([]wire.Message, bool) {
			if _, ok := m.(*wire.MsgCFCheckpt); ok {
				return []wire.Message{m}, false
			}
			return forge(m)
		}
	}
	var cfg Config
	if stored {
		cfg.DataDir = t.TempDir()
	}
	s := colludersThenHonest(t, node, cfg, h, below, 20, trueCheckpoints)
	c, colluders, honest := s.c, s.addrs, s.honest
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	tip := c.Chain().Height()
	c.opMu.Lock()
	err := c.verifyRange(ctx, below+1, tip)
	c.opMu.Unlock()
	t.Logf("verifying %d..%d with the honest peer joined: %v", below+1, tip, err)
	for _, p := range c.Peers() {
		t.Logf("%s: banned %v %s", p.Address, p.Banned, p.Reason)
		if !slices.Contains(colluders, p.Address) && p.Banned {
			t.Errorf("the honest peer is banned: %s", p.Reason)
		}
	}
	for _, b := range c.Bans() {
		if strings.Contains(b.Reason, honest) {
			t.Errorf("the honest peer's ban is kept: %+v", b)
		}
	}
	if !stored {
		return
	}
	// The next run, given the honest peer alone.
	c.Close()
	again, err := Connect(ctx, Config{Peers: []string{honest}, Params: node.Params, Timeout: 5 * time.Second, DataDir: cfg.DataDir})
	if err != nil {
		t.Errorf("the next run, given the honest peer: %v", err)
		return
	}
	defer again.Close()
	for _, p := range again.Peers() {
		if p.Banned {
			t.Errorf("the next run, given the honest peer: banned: %s", p.Reason)
		}
	}
}
