package client

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestLateJoinerNotBannedOnAgreedHeader: two colluders, the only peers
// while the filter headers are verified, forged block 500's filter and
// every filter header after it, checkpoints included. An honest peer
// joins, and the new heights at the tip are verified with it too (a tip
// plan, without checkpoints): its filter header before them is not the
// agreed one, which proves nothing against it, since the colluders agreed
// on that header without it. It is not banned: the heights are verified
// again from every peer's checkpoints, where they part, and block 500
// proves the colluders false. With the filter headers in memory or in a
// data directory.
func TestLateJoinerNotBannedOnAgreedHeader(t *testing.T) {
	for _, stored := range []bool{false, true} {
		t.Run(fmt.Sprintf("stored=%v", stored), func(t *testing.T) { testLateJoiner(t, stored) })
	}
}

func testLateJoiner(t *testing.T, stored bool) {
	needFixture(t)
	const h = 500
	tip := fx.tip
	var cfg Config
	if stored {
		cfg.DataDir = t.TempDir()
	}
	s := colludersThenHonest(t, fx.node, cfg, h, tip-5, 0, nil)
	c, colluders := s.c, s.addrs
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c.opMu.Lock()
	err := c.verifyRange(ctx, tip-4, tip)
	verifiedTo := c.verifiedTo
	c.opMu.Unlock()
	if err != nil {
		t.Errorf("verifying the new heights with the honest peer joined: %v", err)
	}
	if verifiedTo != tip {
		t.Errorf("filter headers verified up to %d, want %d", verifiedTo, tip)
	}
	for _, p := range c.Peers() {
		t.Logf("%s: banned %v %s", p.Address, p.Banned, p.Reason)
		switch colluder := slices.Contains(colluders, p.Address); {
		case !colluder && p.Banned:
			t.Errorf("the honest peer is banned: %s", p.Reason)
		case colluder && (!p.Banned || !strings.Contains(p.Reason, "proves it false")):
			t.Errorf("colluder %s: banned %v (%s), want banned on block %d's proof", p.Address, p.Banned, p.Reason, h)
		}
	}
}
