package client

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/btcsuite/btcd/wire"
	"github.com/spvfilter/spvfilter/peer"
	"github.com/spvfilter/spvfilter/peer/peertest"
)

// TestScanFilterDamagedLonePeer: the filter of the block past the last
// filter checkpoint that pays carol, which the scan's ordinary download
// gets (no filter feed verifies it), is damaged on the way from a lone
// peer: damage proves nothing about the node, and the peer is the only
// one. While the damaged answers in a row stay within maxDamagedAsks,
// the peer is dialled again and asked again: the scan finds every
// payment, and the peer is neither banned nor dropped. Past it, the scan
// fails with the damage, the peer dropped, not banned, after
// maxDamagedAsks+1 damaged answers. A peer whose answer asked again is
// an intact lie (an empty filter, off the agreed filter header) is
// banned for it, as without the damage.
func TestScanFilterDamagedLonePeer(t *testing.T) {
	needFixture(t)
	late := fx.height[fx.late.TxHash()]
	hash := blockHashAt(t, late)
	for _, tt := range []loneDamage{
		{name: "once", damage: 1},
		{name: "as many times as asked again", damage: maxDamagedAsks},
		{name: "every time", damage: -1, want: peer.ErrDamaged},
		{name: "then a lie", damage: 1, lie: true, want: peer.ErrBadFilter},
	} {
		t.Run(tt.name, func(t *testing.T) {
			tt.check(t, hash, late)
		})
	}
}

// loneDamage is a case of TestScanFilterDamagedLonePeer and
// TestScanBlockDamagedLonePeer: whether the block messages of the block
// are damaged (else its cfilter messages), how many (negative: all),
// whether the node's filter of it is replaced by an empty one, or its
// block changed so that it no longer matches its header, before (lie),
// and the scan's error (nil: it finds every payment).
type loneDamage struct {
	name   string
	blocks bool
	damage int
	lie    bool
	want   error
}

// kind names the messages damaged.
func (tt loneDamage) kind() string {
	if tt.blocks {
		return wire.CmdBlock
	}
	return wire.CmdCFilter
}

// lies is the Liar's change of the node's answer about block, with lie.
func (tt loneDamage) lies(block chainhash.Hash) peertest.LieFunc {
	return func(m wire.Message) ([]wire.Message, bool) {
		switch m := m.(type) {
		case *wire.MsgCFilter:
			if !tt.blocks && m.BlockHash == block {
				m.Data = []byte{0}
			}
		case *wire.MsgBlock:
			if tt.blocks && m.BlockHash() == block {
				m.Transactions[len(m.Transactions)-1].LockTime ^= 0x10
			}
		}
		return []wire.Message{m}, false
	}
}

// check scans through a Damager of block (at height h) to the fixture's
// node (through a Liar, with lie), the client's only peer, and checks
// the outcome.
func (tt loneDamage) check(t *testing.T, block chainhash.Hash, h int32) {
	target := fx.node.P2PAddr
	if tt.lie {
		target = peertest.NewLiar(t, target, fx.node.Params.Net, tt.lies(block)).Addr
	}
	d := peertest.NewFilterDamager(t, target, block, tt.damage)
	if tt.blocks {
		d = peertest.NewBlockDamager(t, target, block, tt.damage)
	}
	c := connect(t, 10*time.Second, d.Addr)
	if c.Chain().Height() < h || c.Chain().Hash(h) != block {
		t.Fatalf("the chain (height %d) lacks block %v at height %d", c.Chain().Height(), block, h)
	}
	start := time.Now()
	res, err := c.ScanBIP157(context.Background(), ScanRequest{Watch: items(fx.watch), To: c.Chain().Height()})
	st := peerStatus(c, d.Addr)
	t.Logf("%d %s messages of height %d damaged; scan in %v: error %v; peer banned %v, reason %q",
		d.Damaged(), tt.kind(), h, time.Since(start).Round(time.Millisecond), err, st.Banned, st.Reason)
	if d.Damaged() == 0 {
		t.Fatalf("no %s message of the block passed the damaging link", tt.kind())
	}
	switch {
	case tt.lie:
		if !errors.Is(err, tt.want) || !st.Banned {
			t.Fatalf("a lie asked again after damage: error %v, peer banned %v; want %v and a ban", err, st.Banned, tt.want)
		}
		return
	case st.Banned:
		t.Fatalf("the peer behind the damaging link was banned: %s", st.Reason)
	}
	if bans := c.pool.Bans(); len(bans) != 0 {
		t.Errorf("bans after damage on the way: %+v", bans)
	}
	if tt.want != nil {
		if !errors.Is(err, tt.want) {
			t.Fatalf("scan through a link that damages every answer: %v, want %v", err, tt.want)
		}
		if !errors.Is(st.Err, tt.want) {
			t.Errorf("the peer after the scan: %+v, want it dropped for the damage", st)
		}
		if got, want := d.Damaged(), maxDamagedAsks+1; got != want {
			t.Errorf("%d damaged answers before the scan failed, want %d (asked again %d times)", got, want, maxDamagedAsks)
		}
		return
	}
	if err != nil {
		t.Fatal(err)
	}
	if d.Damaged() != tt.damage {
		t.Errorf("%d %s messages damaged, want %d", d.Damaged(), tt.kind(), tt.damage)
	}
	checkMatches(t, res, fx.want)
	if st.Reason != "" || st.Err != nil {
		t.Errorf("the peer after the scan: %+v, want it in use", st)
	}
}
