package client

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/btcsuite/btcd/wire"
	"github.com/spvfilter/spvfilter/peer"
	"github.com/spvfilter/spvfilter/peer/peertest"
	"github.com/spvfilter/spvfilter/peer/pool"
)

// forgeTipHash has a liar's cfheaders state another filter hash for the
// block tip (the last hash of an answer ending there).
func forgeTipHash(m wire.Message, tip chainhash.Hash) {
	if cf, ok := m.(*wire.MsgCFHeaders); ok && cf.StopHash == tip && len(cf.FilterHashes) > 0 {
		forged := *cf.FilterHashes[len(cf.FilterHashes)-1]
		forged[0] ^= 1
		cf.FilterHashes[len(cf.FilterHashes)-1] = &forged
	}
}

// blockLiar starts a relay to the fixture's node that serves blocks not
// their headers' (a transaction changed), setting lied, if not nil, once
// it served one; with forge, it also states another filter hash for the
// block tip (forgeTipHash).
func blockLiar(t *testing.T, tip chainhash.Hash, forge bool, lied *atomic.Bool) *peertest.Liar {
	t.Helper()
	return peertest.NewLiar(t, fx.node.P2PAddr, fx.node.Params.Net, func(m wire.Message) ([]wire.Message, bool) {
		if forge {
			forgeTipHash(m, tip)
		}
		if b, ok := m.(*wire.MsgBlock); ok {
			b.Transactions[0].LockTime ^= 1
			if lied != nil {
				lied.Store(true)
			}
		}
		return []wire.Message{m}, false
	})
}

// TestDisputeNamesRefusals: FilterHeader of the tip with two peers, an
// honest one that hangs up on every block request (before passing it
// on) and a liar that serves blocks not their headers'. A dispute about
// the tip's filter is settled by its block: the liar states another
// filter hash for it (settleAt), or, with a data directory whose stored
// filter header of the tip a peer stating another hash wrote, the two
// peers agree and the store differs (settleStored). When the dispute's
// download asks the honest peer first, its end is planned again onto
// the liar, whose lie fails the download: the error the query returns
// names the lie and the end, each found by errors.As, the liar banned
// for its own lie alone and the peer that hung up charged nothing.
// settleAt and settleStored pass the download's error on as it is;
// before, the query (agreedFilterHeader) returned the lie's own error
// alone, the refusals dropped where the failure was judged.
func TestDisputeNamesRefusals(t *testing.T) {
	needFixture(t)
	tip := blockHashAt(t, fx.tip)
	for _, tt := range []struct {
		name   string
		stored bool
	}{
		{"the peers disagree", false},
		{"the store differs", true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			const rounds = 10
			ran, named := 0, 0
			for round := 0; round < rounds && ran < 3; round++ {
				dir := ""
				if tt.stored {
					dir = t.TempDir()
					forger := peertest.NewLiar(t, fx.node.P2PAddr, fx.node.Params.Net, func(m wire.Message) ([]wire.Message, bool) {
						forgeTipHash(m, tip)
						return []wire.Message{m}, false
					})
					w := connectWith(t, Config{Peers: []string{forger.Addr}, Params: fx.node.Params, Timeout: 10 * time.Second, DataDir: dir})
					if _, err := w.FilterHeader(context.Background(), fx.tip); err != nil {
						t.Fatal(err)
					}
					w.Close()
				}
				quitter, ends := hangUpOnAsk(t, fx.node.P2PAddr, 1)
				liar := blockLiar(t, tip, !tt.stored, nil)
				log := &linesLog{t: t, start: time.Now()}
				// ConnectOnly: the peer that wrote the store is not dialled
				// again from the peers it remembers.
				c := connectWith(t, Config{Peers: []string{quitter, liar.Addr}, Params: fx.node.Params, Timeout: 10 * time.Second, Log: log, DataDir: dir, ConnectOnly: true})
				ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
				_, err := c.FilterHeader(ctx, fx.tip)
				cancel()
				if ends.Load() == 0 {
					t.Logf("round %d: the dispute's block was not asked of the peer that hangs up first: %v", round, err)
					continue
				}
				ran++
				ok, quitSt := lieAfterEndNamed(t, round, c, err, liar.Addr, quitter)
				if ok {
					named++
				}
				if quitSt.Banned || log.count("dropped "+quitter) > 0 {
					t.Errorf("round %d: the peer that hung up charged: %+v", round, quitSt)
				}
			}
			t.Logf("%d rounds with the peer that hangs up asked first: the error named its end in %d", ran, named)
			if ran == 0 {
				t.Fatalf("the peer that hangs up was never asked first in %d rounds: the attack did not run", rounds)
			}
		})
	}
}

// lieAfterEndNamed checks err, what an operation of c ended with in round
// once its dispute's download met quitter's end and then liar's lie: the
// lie named and liar banned for it alone, quitter's end named after it
// (errors.As finds it), and no *pool.Failure left to judge again. It
// reports whether all held, and returns quitter's status.
func lieAfterEndNamed(t *testing.T, round int, c *Client, err error, liar, quitter string) (bool, pool.Status) {
	t.Helper()
	liarSt := c.pool.Status(clientMember(t, c, liar))
	quitSt := c.pool.Status(clientMember(t, c, quitter))
	t.Logf("round %d: %v; liar %+v; the peer that hung up %+v", round, err, liarSt, quitSt)
	if strings.Contains(liarSt.Reason, quitter) {
		t.Errorf("round %d: the liar's ban names the other peer's end: %s", round, liarSt.Reason)
	}
	var pe *peer.PeerError
	var f *pool.Failure
	switch {
	case err == nil:
		t.Errorf("round %d: no error, liar banned %v: want its lie named", round, liarSt.Banned)
	case !errors.Is(err, peer.ErrBadBlock) || !strings.Contains(err.Error(), liar) || !liarSt.Banned:
		t.Errorf("round %d: %v, liar banned %v: want its lie named and it banned", round, err, liarSt.Banned)
	case !errors.Is(err, peer.ErrDisconnected) || !errors.As(err, &pe) || !strings.Contains(err.Error(), "peer "+quitter+": getdata block: "+peer.ErrDisconnected.Error()):
		t.Errorf("round %d: %v: the end of %s not named", round, err, quitter)
	case errors.As(err, &f):
		t.Errorf("round %d: %v still holds a failure, to be judged again", round, err)
	default:
		return true, quitSt
	}
	return false, quitSt
}

// hangUpThenGone starts a loopback relay to the fixture's node that hangs
// up on the first getdata of blocks a client sends it, as a node that
// crashes on the request, and from then on hangs up on every connection
// at its first message, as that node's address would while it stays
// down. It returns the relay's address and the count of its hang-ups on
// a block request.
func hangUpThenGone(t *testing.T) (string, *atomic.Int32) {
	t.Helper()
	var ends atomic.Int32
	addr := hangUpOnClient(t, fx.node.P2PAddr, func() func(string, []byte) bool {
		return func(cmd string, body []byte) bool {
			if ends.Load() > 0 {
				return true
			}
			if cmd != wire.CmdGetData || !asksBlocks(body) {
				return false
			}
			ends.Add(1)
			return true
		}
	})
	return addr, &ends
}

// TestScanDisputeNamesRefusals: a scan of the last blocks with two peers,
// one that hangs up on its first block request and is gone from then on,
// and a liar that states another filter hash for the tip and serves
// blocks not their headers'. The dispute about the tip's filter is
// settled by its block; when its download asks the peer that hangs up
// first, the block is planned again onto the liar, whose lie fails the
// download and the scan's pass. The liar is banned for its own lie, and
// no peer is left to try again with (the other cannot be dialled again),
// so the scan ends with the failure judged (scanRun.failed): the lie's
// own error, the end of the peer that hung up named after it, found by
// errors.As, and no *pool.Failure left to judge again. The range holds
// no watched script's block, so the dispute's block is the only one the
// scan asks for.
func TestScanDisputeNamesRefusals(t *testing.T) {
	needFixture(t)
	tip := blockHashAt(t, fx.tip)
	const rounds = 10
	ran, named := 0, 0
	for round := 0; round < rounds && ran < 3; round++ {
		quitter, ends := hangUpThenGone(t)
		liar := blockLiar(t, tip, true, nil)
		log := &linesLog{t: t, start: time.Now()}
		c := connectWith(t, Config{Peers: []string{quitter, liar.Addr}, Params: fx.node.Params, Timeout: 10 * time.Second, Log: log, ConnectOnly: true})
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		_, err := c.ScanBIP157(ctx, ScanRequest{Watch: items(fx.watch), From: fx.tip - 5, To: fx.tip})
		cancel()
		if ends.Load() == 0 {
			t.Logf("round %d: the dispute's block was not asked of the peer that hangs up first: %v", round, err)
			continue
		}
		ran++
		ok, quitSt := lieAfterEndNamed(t, round, c, err, liar.Addr, quitter)
		if ok {
			named++
		}
		if quitSt.Banned {
			t.Errorf("round %d: the peer that hung up banned: %+v", round, quitSt)
		}
	}
	t.Logf("%d rounds with the peer that hangs up asked first: the scan's error named its end in %d", ran, named)
	if ran == 0 {
		t.Fatalf("the peer that hangs up was never asked first in %d rounds: the attack did not run", rounds)
	}
}

// TestScanDisputeNotesRefusals: TestScanDisputeNamesRefusals with a third
// peer, honest, and the peer that hangs up on its first block request of
// a connection back on the next: once the liar's lie failed the dispute's
// download and the liar is banned, the scan succeeds from the two others,
// and its warnings name the end of the peer that hung up, as a scan's own
// downloads do (see fetchWanted). Before, the dispute's download kept
// its notes to itself (fetchBlock), and the scan's result said nothing of
// that peer.
func TestScanDisputeNotesRefusals(t *testing.T) {
	needFixture(t)
	tip := blockHashAt(t, fx.tip)
	const rounds = 30
	ran, noted := 0, 0
	for round := 0; round < rounds && ran < 3; round++ {
		quitter, ends := hangUpOnAsk(t, fx.node.P2PAddr, 1)
		var lied atomic.Bool
		liar := blockLiar(t, tip, true, &lied)
		honest := peertest.NewLiar(t, fx.node.P2PAddr, fx.node.Params.Net, nil)
		c := connectWith(t, Config{Peers: []string{quitter, liar.Addr, honest.Addr}, Params: fx.node.Params, Timeout: 10 * time.Second, ConnectOnly: true})
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		res, err := c.ScanBIP157(ctx, ScanRequest{Watch: items(fx.watch), From: fx.tip - 5, To: fx.tip})
		cancel()
		if ends.Load() == 0 || !lied.Load() {
			t.Logf("round %d: the dispute's block was not asked of the peer that hangs up and then of the liar: %v", round, err)
			continue
		}
		ran++
		if err != nil {
			t.Errorf("round %d: the scan failed with an honest peer left: %v", round, err)
			continue
		}
		if st := c.pool.Status(clientMember(t, c, liar.Addr)); !st.Banned {
			t.Errorf("round %d: the liar not banned: %+v", round, st)
		}
		want := "peer " + quitter + ": getdata block: " + peer.ErrDisconnected.Error()
		if slices.ContainsFunc(res.Warnings, func(w string) bool { return strings.Contains(w, want) }) {
			noted++
		} else {
			t.Errorf("round %d: the warnings do not name the end of %s: %q", round, quitter, res.Warnings)
		}
		unharmedAt(t, c, honest.Addr)
	}
	t.Logf("%d rounds with the peer that hangs up asked first and the liar after: the warnings named its end in %d", ran, noted)
	if ran == 0 {
		t.Fatalf("the dispute's block was never asked of the peer that hangs up and then of the liar in %d rounds: the attack did not run", rounds)
	}
}
