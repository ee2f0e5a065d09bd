package client

import (
	"encoding/binary"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/btcsuite/btcd/wire"
	"github.com/spvfilter/spvfilter/peer/peertest"
)

// stallBlocks forwards everything but the node's blocks and notfounds:
// a peer asked for a block never answers.
func stallBlocks(m wire.Message) ([]wire.Message, bool) {
	switch m.(type) {
	case *wire.MsgBlock, *wire.MsgNotFound:
		return nil, false
	}
	return []wire.Message{m}, false
}

// TestUnservedStallingLiarDropped: a peer announces random block hashes
// and, asked for them, never answers (where a notfound would have it
// banned). A silence is no word against its announcement: it is dropped,
// not banned, each time a sync of its fakes finds its score at
// maxUndelivered, and dialled again after its backoff with its score. It
// is waited for once (a getdata, proofWait): within withheldMemory after,
// it is dropped at its next crossing without being asked, so what it
// costs stays bounded: one header sync a connection, one proofWait each
// withheldMemory. The honest node beside it follows new blocks
// meanwhile, none waiting for the liar.
//
// Measured: 30 s of one fake announcement each 50 ms (161 injected, the
// others while it was not connected): dropped 6 times ("could not be
// heard"), 7 getheaders and 1 getdata to it, never banned; a new block
// in the chain 0.26 s after it was mined. Before it was not waited for
// again (each crossing asked it): 5 drops, 7 getheaders, 6 getdata, and
// the new block waited out a proofWait (2.0 to 2.55 s, 3 runs).
func TestUnservedStallingLiarDropped(t *testing.T) {
	node := peertest.StartBtcd(t, peertest.WithArgs("--nobanning"))
	node.Generate(t, 110)
	liar := peertest.NewLiar(t, node.P2PAddr, node.Params.Net, stallBlocks, peertest.AlsoSees(wire.CmdNotFound))
	c := connectTo(t, node, 10*time.Second, node.P2PAddr, liar.Addr)
	startService(t, c)
	time.Sleep(2 * time.Second)
	asked := count(liar.Commands(), wire.CmdGetHeaders)
	fakes, drops, up := 0, 0, true
	var reason string
	for end := time.Now().Add(30 * time.Second); time.Now().Before(end); time.Sleep(50 * time.Millisecond) {
		st := peerStatus(c, liar.Addr)
		if st.Banned {
			t.Fatalf("the stalling announcer is banned after %d fakes: %s (a silence is no word against its announcement)", fakes, st.Reason)
		}
		now := st.Reason == ""
		if up && !now {
			drops++
			reason = st.Reason
		}
		up = now
		var h chainhash.Hash
		binary.LittleEndian.PutUint64(h[:], rand.Uint64())
		inv := wire.NewMsgInv()
		if err := inv.AddInvVect(wire.NewInvVect(wire.InvTypeBlock, &h)); err != nil {
			t.Fatal(err)
		}
		if liar.Inject(inv) == nil {
			fakes++
		}
	}
	syncs := count(liar.Commands(), wire.CmdGetHeaders) - asked
	getdata := count(liar.Commands(), wire.CmdGetData)
	start := time.Now()
	tip := *node.Generate(t, 1)[0]
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if _, hash := c.Chain().Tip(); hash == tip {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("a new block not in the chain within 20 s of the stalling announcer's 30 s")
		}
	}
	took := time.Since(start)
	t.Logf("30 s of fakes from a peer that never answers a getdata: %d fakes injected, %d getheaders and %d getdata to it, seen dropped %d times (%q); a new block in the chain %v after it was mined",
		fakes, syncs, getdata, drops, reason, took.Round(10*time.Millisecond))
	if limit := proofWait + announceLeadWait + announceSettle + time.Second; took > limit {
		t.Errorf("a new block took %v to reach the chain beside the stalling announcer, want at most %v (one proofWait waited out)", took, limit)
	}
	if drops == 0 || !strings.Contains(reason, "could not be heard") {
		t.Errorf("the stalling announcer was not dropped for its unserved blocks (drops %d, last reason %q)", drops, reason)
	}
	if getdata > 2 {
		t.Errorf("%d getdata to the stalling announcer in 30 s, want one wait (two at most): it was waited for at each crossing", getdata)
	}
	// Each connection: its first sync may end below maxUndelivered, and
	// later ones, each a batch, end it.
	if limit := 4 * (drops + 1); syncs > limit {
		t.Errorf("%d header syncs of the stalling announcer's fakes in 30 s, want at most %d (4 a connection)", syncs, limit)
	}
}
