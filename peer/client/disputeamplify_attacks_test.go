package client

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/btcsuite/btcd/wire"
	"github.com/spvfilter/spvfilter/peer/peertest"
)

// prevLiar is a peer that states a false filter header before the heights
// asked in every cfheaders answer, except for a while after it sent its
// checkpoints: then the client verifies from the checkpoints, where its
// checkpoints bind it, and it answers honestly.
type prevLiar struct {
	window time.Duration
	mu     sync.Mutex
	honest time.Time // honest until then
	lies   int
}

func (l *prevLiar) lie(m wire.Message) ([]wire.Message, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	switch m := m.(type) {
	case *wire.MsgCFCheckpt:
		l.honest = time.Now().Add(l.window)
	case *wire.MsgCFHeaders:
		if time.Now().After(l.honest) {
			m.PrevFilterHeader[0] ^= 0xff
			l.lies++
		}
	}
	return []wire.Message{m}, false
}

// lieCount returns how many cfheaders answers it falsified.
func (l *prevLiar) lieCount() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.lies
}

// TestPrevLiarBannedOnOwnWord: one liar among two honest peers states a
// false filter header before the new heights whenever the client follows
// the tip (a tip plan, no checkpoints asked), and answers honestly for a
// while after it sent its checkpoints. The client kept the filter header
// its own filter hashes stated there when the heights below were
// verified (see ownHeaders): the false one contradicts it, about the same
// block, and the liar is banned on that proof at its first lie. (Without
// its own word kept, its false header is no proof: its word is held, and
// the next verification, from the checkpoints, holds it against the
// checkpoint it sends then, see holdToCheckpoints.) A new block then
// costs what it costs with three honest peers; the liar never buys the
// whole chain again.
func TestPrevLiarBannedOnOwnWord(t *testing.T) {
	for _, stored := range []bool{false, true} {
		t.Run(fmt.Sprintf("stored=%v", stored), func(t *testing.T) { testPrevLiarBanned(t, stored) })
	}
}

func testPrevLiarBanned(t *testing.T, stored bool) {
	needFixture(t)
	tip := fx.tip
	const window = 4 * time.Second
	steps := [][2]int32{{tip - 5, tip - 3}, {tip - 2, tip}}
	run := func(third string, wait bool) (bytes []uint64, c *Client) {
		cfg := Config{Peers: append(honestPeers(t, 2), third), Params: fx.node.Params, Timeout: 5 * time.Second}
		if stored {
			cfg.DataDir = t.TempDir()
		}
		c = connectWith(t, cfg)
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		if err := c.verifyFilterHeaders(ctx, 0, tip-6); err != nil {
			t.Fatal(err)
		}
		for _, s := range steps {
			if wait {
				time.Sleep(window + time.Second)
			}
			c.opMu.Lock()
			b0 := c.pool.BytesReceived()
			start := time.Now()
			err := c.verifyRange(ctx, s[0], s[1])
			b := c.pool.BytesReceived() - b0
			verifiedTo := c.verifiedTo
			c.opMu.Unlock()
			t.Logf("verifying %d..%d: %d bytes received, %v, verified to %d, err %v", s[0], s[1], b, time.Since(start).Round(time.Millisecond), verifiedTo, err)
			if err != nil {
				t.Fatalf("verifying %d..%d: %v", s[0], s[1], err)
			}
			bytes = append(bytes, b)
		}
		return bytes, c
	}
	control, _ := run(honestPeers(t, 1)[0], false)
	liar := &prevLiar{window: window}
	liarAddr := peertest.NewLiar(t, fx.node.P2PAddr, fx.node.Params.Net, liar.lie).Addr
	attacked, c := run(liarAddr, true)
	t.Logf("tip %d; bytes a block, three honest peers: %v; with the liar: %v; the liar falsified %d answers", tip, control, attacked, liar.lieCount())
	banned := false
	for _, p := range c.Peers() {
		if p.Address == liarAddr {
			banned = p.Banned
			t.Logf("liar: banned %v, reason %q", p.Banned, p.Reason)
			if !p.Banned || !strings.Contains(p.Reason, "before, by its own filter hashes") {
				t.Errorf("the liar is not banned on its own earlier filter headers: banned %v, %q", p.Banned, p.Reason)
			}
		}
	}
	for i := range steps {
		if attacked[i] > 4*control[i] && !banned {
			t.Errorf("verifying %d..%d with the liar cost %d bytes, %.1fx the %d with an honest third peer, and the liar is not banned",
				steps[i][0], steps[i][1], attacked[i], float64(attacked[i])/float64(control[i]), control[i])
		}
	}
}
