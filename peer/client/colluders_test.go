package client

import (
	"context"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/btcsuite/btcd/wire"
	"github.com/spvfilter/spvfilter/peer/addrbook"
	"github.com/spvfilter/spvfilter/peer/peertest"
)

// The tests of this file play colluders that would have the client ban
// the honest peer, or replace it, on what no block decides: from the
// address book, and from a data directory they wrote.

// seedBook writes addrs into the address book of the data directory dir,
// as if a peer had gossiped them.
func seedBook(t *testing.T, node *peertest.Node, dir string, addrs ...string) {
	t.Helper()
	book, _, err := addrbook.Open(node.Params, filepath.Join(dir, node.Params.Name), nil)
	if err != nil {
		t.Fatal(err)
	}
	var nas []*wire.NetAddressV2
	for _, a := range addrs {
		na, err := addrbook.ParseAddr(a, wire.SFNodeNetwork|wire.SFNodeWitness|wire.SFNodeCF, time.Now())
		if err != nil {
			t.Fatal(err)
		}
		nas = append(nas, na)
	}
	if n := book.Add(nas, "gossip"); n != len(addrs) {
		t.Fatalf("the book took %d of %d addresses", n, len(addrs))
	}
	if err := book.Close(); err != nil {
		t.Fatal(err)
	}
}

// keyPathLiars returns n colluders of the spends chain that hide its P2TR
// key-path spend behind a filter leaving out the script it spends, which
// no block can disprove, and the watch list of every script of the chain.
func keyPathLiars(t *testing.T, s *spends, n int) ([]string, []WatchItem) {
	t.Helper()
	drop := s.script[peertest.P2TRKeyPath]
	lie := peertest.ForgeFilter(t, s.node, s.height[peertest.P2TRKeyPath], peertest.LeaveOut(t, s.node, func(p []byte) bool { return string(p) == string(drop) }))
	var liars []string
	for range n {
		liars = append(liars, peertest.NewLiar(t, s.node.P2PAddr, s.node.Params.Net, lie).Addr)
	}
	var watch []WatchItem
	for _, sc := range s.script {
		watch = append(watch, ScriptItem(sc))
	}
	return liars, watch
}

// scanWithDir connects to peers (and those of dir's address book, up to
// target, unless connectOnly) with the data directory dir, scans the whole
// chain and closes the client.
func scanWithDir(t *testing.T, node *peertest.Node, dir string, target int, connectOnly bool, watch []WatchItem, peers ...string) (*ScanResult, []PeerStatus, error) {
	t.Helper()
	ctx := context.Background()
	c, err := Connect(ctx, Config{Peers: peers, Params: node.Params, DataDir: dir, Timeout: 10 * time.Second, TargetPeers: target, ConnectOnly: connectOnly})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	res, err := c.ScanBIP157(ctx, ScanRequest{Watch: watch, To: -1})
	return res, c.Peers(), err
}

// TestColludersFromTheBookBanNobody: an honest relay gossiped three
// colluders, now in the address book; they hide a P2TR key-path spend
// behind a filter no block can disprove. The client dials them beside the
// honest peer given: the dispute is reported as a conflict naming both
// sides, nobody is banned (the majority buys nothing) and the block is
// scanned whole, so the spend is found. The next run with the same data
// directory and the honest peer uses it again, with no ban on disk.
func TestColludersFromTheBookBanNobody(t *testing.T) {
	s := needSpends(t)
	liars, watch := keyPathLiars(t, s, 3)
	honest := peertest.NewLiar(t, s.node.P2PAddr, s.node.Params.Net, nil).Addr
	dir := t.TempDir()
	seedBook(t, s.node, dir, liars...)
	spend := s.spend[peertest.P2TRKeyPath].TxHash()
	for run := 1; run <= 2; run++ {
		res, peers, err := scanWithDir(t, s.node, dir, 4, false, watch, honest)
		if err != nil {
			t.Fatalf("run %d: %v", run, err)
		}
		used := 0
		for _, st := range peers {
			if st.Banned {
				t.Errorf("run %d: %s banned: %s", run, st.Address, st.Reason)
			}
			if slices.Contains(liars, st.Address) && st.Compared {
				used++
			}
		}
		if st := status(t, res, honest); st.Reason != "" || !st.Compared {
			t.Errorf("run %d: the honest peer: %+v", run, st)
		}
		if !hasMatch(res, spend) {
			t.Errorf("run %d: the P2TR key-path spend at %d is missing", run, s.height[peertest.P2TRKeyPath])
		}
		if used == 0 || len(res.Conflicts) != 1 || !hasWarning(res.Warnings, "cannot decide", honest) {
			t.Errorf("run %d: %d colluders used, conflicts %+v, warnings %q", run, used, res.Conflicts, res.Warnings)
		}
		t.Logf("run %d: %d colluders from the book used; %v", run, used, res.Conflicts)
	}
}

// TestPoisonedDataDirConflictIsNotFatal: two colluders alone write a data
// directory whose filter headers hide a P2TR key-path spend. Then the
// honest peer alone (ConnectOnly) with that directory: the stored headers
// and the peer differ where the block decides neither. Every run used to
// fail with a *ConflictError until the directory was deleted; now the
// scan reports the conflict with the store, scans the block whole (the
// spend is found), and takes the peer's headers, so the next run has no
// conflict at all.
func TestPoisonedDataDirConflictIsNotFatal(t *testing.T) {
	s := needSpends(t)
	liars, watch := keyPathLiars(t, s, 2)
	honest := peertest.NewLiar(t, s.node.P2PAddr, s.node.Params.Net, nil).Addr
	spend := s.spend[peertest.P2TRKeyPath].TxHash()
	dir := t.TempDir()
	poisoned, _, err := scanWithDir(t, s.node, dir, 2, true, watch, liars...)
	if err != nil {
		t.Fatal(err)
	}
	if hasMatch(poisoned, spend) {
		t.Fatal("the colluders did not hide the spend")
	}
	for run, want := range []int{1, 0} {
		res, _, err := scanWithDir(t, s.node, dir, 1, true, watch, honest)
		if err != nil {
			t.Fatalf("run %d with the honest peer: %v", run+1, err)
		}
		if !hasMatch(res, spend) {
			t.Errorf("run %d: the spend is missing", run+1)
		}
		if len(res.Conflicts) != want {
			t.Errorf("run %d: conflicts %+v, want %d", run+1, res.Conflicts, want)
		}
		if want == 1 && !hasWarning(res.Warnings, "stored in", "decides neither", honest) {
			t.Errorf("run %d: warnings %q", run+1, res.Warnings)
		}
	}
}
