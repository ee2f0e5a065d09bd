package client

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/spvfilter/spvfilter/peer"
	"github.com/spvfilter/spvfilter/peer/peertest"
)

// TestScanBlockDamagedLonePeer: the block past the last filter
// checkpoint that pays carol, which the scan downloads for its match,
// is damaged on the way from a lone peer: damage proves nothing about
// the node, and the peer is the only one. While the damaged answers in
// a row stay within maxDamagedAsks, the peer is dialled again and asked
// again: the scan finds every payment, and the peer is neither banned
// nor dropped. Past it, the scan fails with the damage, the peer
// dropped, not banned, after maxDamagedAsks+1 damaged answers. A peer
// whose block asked again is an intact lie (its last transaction
// changed, so that it no longer matches its header) is banned for it, as
// without the damage.
func TestScanBlockDamagedLonePeer(t *testing.T) {
	needFixture(t)
	late := fx.height[fx.late.TxHash()]
	hash := blockHashAt(t, late)
	for _, tt := range []loneDamage{
		{name: "once", blocks: true, damage: 1},
		{name: "as many times as asked again", blocks: true, damage: maxDamagedAsks},
		{name: "every time", blocks: true, damage: -1, want: peer.ErrDamaged},
		{name: "then a lie", blocks: true, damage: 1, lie: true, want: peer.ErrBadBlock},
	} {
		t.Run(tt.name, func(t *testing.T) {
			tt.check(t, hash, late)
		})
	}
}

// TestScanBlockDamagedTwoPeers: two peers of the same node, each behind
// a link that damages the block paying carol past the last filter
// checkpoint once. The damaged answer cancels the other peer's requests
// in flight (and with them its connection): both are dialled again as
// needed, the blocks not in are planned again, and the scan finds every
// payment with neither peer banned nor dropped.
func TestScanBlockDamagedTwoPeers(t *testing.T) {
	needFixture(t)
	late := fx.height[fx.late.TxHash()]
	hash := blockHashAt(t, late)
	d1 := peertest.NewBlockDamager(t, fx.node.P2PAddr, hash, 1)
	d2 := peertest.NewBlockDamager(t, fx.node.P2PAddr, hash, 1)
	c := connect(t, 10*time.Second, d1.Addr, d2.Addr)
	res, err := c.ScanBIP157(context.Background(), ScanRequest{Watch: items(fx.watch), To: c.Chain().Height()})
	t.Logf("block messages of height %d damaged: %d and %d; scan error %v", late, d1.Damaged(), d2.Damaged(), err)
	if d1.Damaged()+d2.Damaged() == 0 {
		t.Fatal("no block message of the block passed a damaging link")
	}
	if err != nil {
		t.Fatal(err)
	}
	checkMatches(t, res, fx.want)
	for _, addr := range []string{d1.Addr, d2.Addr} {
		if st := peerStatus(c, addr); st.Banned || st.Reason != "" || st.Err != nil {
			t.Errorf("peer %s after the scan: %+v, want it in use", addr, st)
		}
	}
}

// TestFetchBlockDamagedLonePeer: the block a dispute downloads
// (fetchBlock) is damaged on the way from a lone peer: while the damaged
// answers stay within maxDamagedAsks, the peer is dialled again and
// asked again, and the block comes, the peer in use; past it, the
// download fails with the damage after maxDamagedAsks+1 damaged answers,
// the peer not banned.
func TestFetchBlockDamagedLonePeer(t *testing.T) {
	needFixture(t)
	h := fx.height[fx.late.TxHash()]
	hash := blockHashAt(t, h)
	for _, tt := range []struct {
		name   string
		damage int
		want   error
	}{
		{"once", 1, nil},
		{"as many times as asked again", maxDamagedAsks, nil},
		{"every time", -1, peer.ErrDamaged},
	} {
		t.Run(tt.name, func(t *testing.T) {
			d := peertest.NewBlockDamager(t, fx.node.P2PAddr, hash, tt.damage)
			c := connect(t, 10*time.Second, d.Addr)
			b, err := c.fetchBlock(context.Background(), nil, h)
			st := peerStatus(c, d.Addr)
			t.Logf("%d block messages damaged: error %v; peer %+v", d.Damaged(), err, st)
			if st.Banned {
				t.Fatalf("the peer behind the damaging link was banned: %s", st.Reason)
			}
			if tt.want != nil {
				if !errors.Is(err, tt.want) {
					t.Fatalf("block through a link that damages every answer: %v, want %v", err, tt.want)
				}
				if got, want := d.Damaged(), maxDamagedAsks+1; got != want {
					t.Errorf("%d damaged answers before the download failed, want %d", got, want)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if b.BlockHash() != hash || d.Damaged() != tt.damage {
				t.Fatalf("got block %v after %d damaged answers, want %v after %d", b.BlockHash(), d.Damaged(), hash, tt.damage)
			}
			if st.Reason != "" || st.Err != nil {
				t.Errorf("the peer after the download: %+v, want it in use", st)
			}
		})
	}
}
