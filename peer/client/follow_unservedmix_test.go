package client

import (
	"encoding/binary"
	"errors"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/btcsuite/btcd/wire"
	"github.com/spvfilter/spvfilter/peer/peertest"
)

// TestUnservedAmongRealAnnouncementsBanned: a peer relays its node's
// announcement of every new block (it serves it: its node is honest),
// and between two blocks announces fakeRun random block hashes it then
// does not serve, each costing the client a header sync. fakeRun is
// under maxUndelivered, so a count of unserved blocks in a row that one
// served block resets never reaches it. The peer is banned without proof
// (an *UnservedError) once the blocks it did not serve reach
// maxUndelivered, whatever it served between them: after at most
// maxUndelivered + maxAnnounced fake announcements (the last sync may
// take in a whole batch), within the rounds played.
//
// Measured before (a served block reset the count): 6 rounds of 15 fake
// announcements, 90 fakes and 25 getheaders to the peer, never banned.
// Now: banned in round 2, after 22 fakes and 6 getheaders.
func TestUnservedAmongRealAnnouncementsBanned(t *testing.T) {
	const (
		rounds  = 6
		fakeRun = maxUndelivered * 3 / 4
	)
	node := peertest.StartBtcd(t, peertest.WithArgs("--nobanning"))
	node.Generate(t, 110)
	liar := peertest.NewLiar(t, node.P2PAddr, node.Params.Net, nil)
	c := connectTo(t, node, 10*time.Second, liar.Addr)
	startService(t, c)
	time.Sleep(2 * time.Second) // the first syncs end before the attack
	asked := count(liar.Commands(), wire.CmdGetHeaders)
	fakes, round := 0, 0
	var st PeerStatus
	banned := func() bool {
		st = peerStatus(c, liar.Addr)
		return st.Banned
	}
attack:
	for round = 1; round <= rounds; round++ {
		// A real block, relayed by the peer as its node announces it.
		hash := node.Generate(t, 1)[0]
		for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(20 * time.Millisecond) {
			if _, ok := c.chain.HeightOf(*hash); ok {
				break
			}
			if banned() {
				break attack
			}
			if time.Now().After(deadline) {
				t.Fatalf("round %d: the real block %v, announced by the peer, is not in the chain within 20 s", round, hash)
			}
		}
		time.Sleep(announceSettle) // its sync charged the peer
		for range fakeRun {
			if banned() {
				break attack
			}
			var h chainhash.Hash
			binary.LittleEndian.PutUint64(h[:], rand.Uint64())
			inv := wire.NewMsgInv()
			if err := inv.AddInvVect(wire.NewInvVect(wire.InvTypeBlock, &h)); err != nil {
				t.Fatal(err)
			}
			if err := liar.Inject(inv); err != nil {
				break attack
			}
			fakes++
			time.Sleep(150 * time.Millisecond)
		}
		// Their syncs end, and charge the peer, before the next block.
		time.Sleep(announceSettle + 2*time.Second)
		if banned() {
			break
		}
	}
	syncs := count(liar.Commands(), wire.CmdGetHeaders) - asked
	t.Logf("after %d round(s) of a served block and %d unserved fakes: %d fake announcements, %d getheaders to the peer; banned %v: %q",
		min(round, rounds), fakeRun, fakes, syncs, st.Banned, st.Reason)
	if !st.Banned {
		t.Fatalf("a peer that announced %d blocks it did not serve, %d between each two it served, is not banned after %d rounds (%d header syncs): a served block erased its count",
			fakes, fakeRun, rounds, syncs)
	}
	var ue *UnservedError
	if !errors.As(st.Err, &ue) {
		t.Fatalf("the peer is banned for %v, want an *UnservedError", st.Err)
	}
	if limit := maxUndelivered + maxAnnounced; fakes > limit {
		t.Errorf("the peer made %d fake announcements before its ban, want at most %d", fakes, limit)
	}
	if ban, ok := c.pool.IsBanned(liar.Addr); !ok || ban.Proof {
		t.Errorf("the ban kept %+v (kept %v), want one resting on no proof", ban, ok)
	}
}
