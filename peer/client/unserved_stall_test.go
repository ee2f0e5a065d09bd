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
// maxUndelivered, and dialled again after its backoff with its score, so
// that what it costs stays bounded: one header sync and one proofWait
// for each of its connections. The honest node beside it follows new
// blocks meanwhile.
//
// Measured (one run): a minute of one fake announcement each 50 ms (316
// injected, the others while it was not connected), the liar dropped 7
// times ("could not be heard"), 8 getheaders and 7 getdata to it, never
// banned; a new block in the chain 0.27 s after it was mined.
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
	for end := time.Now().Add(time.Minute); time.Now().Before(end); time.Sleep(50 * time.Millisecond) {
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
			t.Fatalf("a new block not in the chain within 20 s of the stalling announcer's minute")
		}
	}
	t.Logf("a minute of fakes from a peer that never answers a getdata: %d fakes injected, %d getheaders and %d getdata to it, seen dropped %d times (%q); a new block in the chain %v after it was mined",
		fakes, syncs, getdata, drops, reason, time.Since(start).Round(10*time.Millisecond))
	if drops == 0 || !strings.Contains(reason, "could not be heard") {
		t.Errorf("the stalling announcer was not dropped for its unserved blocks (drops %d, last reason %q)", drops, reason)
	}
	// Each connection: its first sync may end below maxUndelivered, and
	// later ones, each a batch, end it.
	if limit := 4 * (drops + 1); syncs > limit {
		t.Errorf("%d header syncs of the stalling announcer's fakes in a minute, want at most %d (4 a connection)", syncs, limit)
	}
}
