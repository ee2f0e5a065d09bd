package client

import (
	"context"
	"encoding/binary"
	"slices"
	"testing"
	"time"

	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/btcsuite/btcd/wire"
	"github.com/spvfilter/spvfilter/peer/banlist"
	"github.com/spvfilter/spvfilter/peer/peertest"
)

// TestUnservedAnnouncementsBanWithoutProof: a peer announces block after
// block it then does not serve (random hashes; its node is honest). It is
// banned for it in this life, but the ban rests on no proof (a node that
// reorganizes, or a slow one, fails to serve what it announced too): the
// ban kept on disk says so, and a later run given that peer by the user
// uses it, with a warning naming the ban.
func TestUnservedAnnouncementsBanWithoutProof(t *testing.T) {
	needFixture(t)
	honest := honestPeers(t, 1)[0]
	announcer := peertest.NewLiar(t, fx.node.P2PAddr, fx.node.Params.Net, nil)
	dir := t.TempDir()
	cfg := Config{Peers: []string{honest, announcer.Addr}, Params: fx.node.Params, DataDir: dir, Timeout: 10 * time.Second}
	c := connectWith(t, cfg)
	startService(t, c)
	banned := func() (PeerStatus, bool) {
		i := slices.IndexFunc(c.Peers(), func(st PeerStatus) bool { return st.Address == announcer.Addr && st.Banned })
		if i < 0 {
			return PeerStatus{}, false
		}
		return c.Peers()[i], true
	}
	var n uint64
	deadline := time.Now().Add(time.Minute)
	for {
		st, ok := banned()
		if ok {
			t.Logf("banned after %d unserved announcements: %s", n, st.Reason)
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("a peer that announced %d blocks it did not serve is not banned within a minute: %+v", n, c.Peers())
		}
		n++
		var hash chainhash.Hash
		binary.LittleEndian.PutUint64(hash[:], n)
		inv := wire.NewMsgInv()
		if err := inv.AddInvVect(wire.NewInvVect(wire.InvTypeBlock, &hash)); err != nil {
			t.Fatal(err)
		}
		announcer.Inject(inv) // a connection the client dropped is dialled again
		time.Sleep(50 * time.Millisecond)
	}
	ban, ok := c.pool.IsBanned(announcer.Addr)
	switch {
	case !ok:
		t.Fatalf("the announcer's ban is not kept: %+v", c.Bans())
	case ban.Proof:
		t.Errorf("the announcer's ban rests on a proof, want none (not serving an announced block proves no lie): %+v", ban)
	}
	c.Close()
	onDisk, notes := banlist.Read(dir + "/" + fx.node.Params.Name)
	i := slices.IndexFunc(onDisk, func(b banlist.Ban) bool { return b.Host == announcer.Addr })
	switch {
	case i < 0:
		t.Fatalf("the ban is not on disk: %+v (%q)", onDisk, notes)
	case onDisk[i].Proof:
		t.Errorf("the ban on disk rests on a proof: %+v", onDisk[i])
	}

	// A later run, given the announcer alone, uses it.
	ctx := context.Background()
	later, err := Connect(ctx, Config{Peers: []string{announcer.Addr}, Params: fx.node.Params, DataDir: dir, Timeout: 10 * time.Second, ConnectOnly: true})
	if err != nil {
		t.Fatalf("a later run given the announcer: %v", err)
	}
	defer later.Close()
	res, err := later.ScanBIP157(ctx, ScanRequest{Watch: items(fx.watch), To: -1})
	if err != nil {
		t.Fatalf("a later run given the announcer: %v", err)
	}
	checkMatches(t, res, fx.want)
	if st := status(t, res, announcer.Addr); st.Banned {
		t.Errorf("the announcer is not used by a later run the user gave it to: %+v", st)
	}
	if !hasWarning(res.Warnings, announcer.Addr, "no proof", "used") {
		t.Errorf("warnings %q do not name the announcer used despite its ban", res.Warnings)
	}
}
