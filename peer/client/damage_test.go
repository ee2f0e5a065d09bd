package client

import (
	"strings"
	"testing"

	"github.com/btcsuite/btcd/wire"
	"github.com/spvfilter/spvfilter/peer/peertest"
)

// TestDamageOnTheWayBansNobody: a filter or a block whose bytes are
// changed on the way from an honest node (the checksum the node computed
// left as it was) proves nothing about the node: the scan still finds
// everything, the peer behind the damaging link is not banned, and no
// ban is written.
func TestDamageOnTheWayBansNobody(t *testing.T) {
	needFixture(t)
	for _, tt := range []struct {
		name string
		cmd  string
		at   int
	}{
		{"a filter's data", wire.CmdCFilter, -1},
		{"a filter's block hash", wire.CmdCFilter, 5},
		{"a block's last transaction", wire.CmdBlock, -2},
	} {
		t.Run(tt.name, func(t *testing.T) {
			d := peertest.NewDamager(t, fx.node.P2PAddr, tt.cmd, tt.at)
			dir := t.TempDir()
			c := connectWith(t, Config{Peers: []string{d.Addr, honestPeers(t, 1)[0]}, Params: fx.node.Params, DataDir: dir})
			res, err := bip157(t, c)
			if err != nil {
				t.Fatal(err)
			}
			if d.Damaged() == 0 {
				t.Fatalf("no %s passed the damaging relay", tt.cmd)
			}
			checkMatches(t, res, fx.want)
			if st := status(t, res, d.Addr); st.Banned || strings.Contains(st.Reason, "banned") {
				t.Errorf("the peer behind the damaging link: %+v", st)
			}
			if bans := c.pool.Bans(); len(bans) != 0 {
				t.Errorf("bans after damage on the way: %+v", bans)
			}
		})
	}
}
