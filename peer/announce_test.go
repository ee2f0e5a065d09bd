package peer

import (
	"context"
	"net"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/btcsuite/btcd/wire"
	"github.com/spvfilter/spvfilter/peer/peertest"
)

// announcements collects what OnAnnounce receives.
type announcements struct {
	mu  sync.Mutex
	all Announcement
}

func (a *announcements) add(x Announcement) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.all.Blocks = append(a.all.Blocks, x.Blocks...)
	a.all.Txs = append(a.all.Txs, x.Txs...)
}

// has reports whether h was announced as a block or a transaction.
func (a *announcements) has(block bool, h chainhash.Hash) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	if block {
		return slices.Contains(a.all.Blocks, h)
	}
	return slices.Contains(a.all.Txs, h)
}

// waitFor polls cond for up to five seconds.
func waitFor(cond func() bool) bool {
	for end := time.Now().Add(5 * time.Second); time.Now().Before(end); time.Sleep(20 * time.Millisecond) {
		if cond() {
			return true
		}
	}
	return cond()
}

// TestAnnouncements: with RelayTx a node announces the transactions that
// enter its mempool; without, only blocks. Both reach OnAnnounce.
func TestAnnouncements(t *testing.T) {
	needFixture(t)
	var relay, quiet announcements
	for _, c := range []struct {
		relay bool
		a     *announcements
	}{{true, &relay}, {false, &quiet}} {
		p, err := Dial(context.Background(), Config{Addr: fx.node.P2PAddr, Params: fx.node.Params, RelayTx: c.relay, OnAnnounce: c.a.add})
		if err != nil {
			t.Fatal(err)
		}
		defer p.Close()
	}
	tx := fx.node.SpendCoinbase(t, wire.NewTxOut(1_000_000, fx.alice.P2TRScript()))
	if !waitFor(func() bool { return relay.has(false, tx.TxHash()) }) {
		t.Fatalf("transaction %v not announced with RelayTx: %+v", tx.TxHash(), relay.all)
	}
	fx.confirm(t, tx)
	hash, err := fx.node.RPC().GetBlockHash(int64(fx.tip))
	if err != nil {
		t.Fatal(err)
	}
	for name, a := range map[string]*announcements{"relay": &relay, "quiet": &quiet} {
		if !waitFor(func() bool { return a.has(true, *hash) }) {
			t.Errorf("%s: block %v not announced: %+v", name, hash, a.all)
		}
	}
	if quiet.has(false, tx.TxHash()) {
		t.Errorf("transaction announced without RelayTx")
	}
}

// TestGetAddr: addresses btcd learnt from one peer reach another with
// getaddr, through addrv2 (negotiated in the handshake); btcd answers
// once per connection. The node is told to connect nowhere else, so the
// addresses it learns are never dialled.
func TestGetAddr(t *testing.T) {
	node := peertest.StartBtcd(t, peertest.WithArgs("--nobanning", "--connect="+peertest.ClosedAddr(t)))
	params := node.Params
	ctx := context.Background()
	seeder, err := Dial(ctx, Config{Addr: node.P2PAddr, Params: params, Timeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer seeder.Close()
	if !seeder.addrV2.Load() {
		t.Fatal("btcd did not negotiate addrv2")
	}
	seeded := map[string]bool{}
	msg := wire.NewMsgAddr()
	for i := 0; i < 200; i++ {
		ip := net.IPv4(23, 1, byte(i), 7)
		msg.AddAddress(wire.NewNetAddressTimestamp(time.Now(), wire.SFNodeNetwork, ip, 8333))
		seeded[net.JoinHostPort(ip.String(), "8333")] = true
	}
	if err := seeder.write(ctx, "addr", msg, seeder.deadline()); err != nil {
		t.Fatal(err)
	}
	var got []*wire.NetAddressV2
	var p *Peer
	waitFor(func() bool {
		if p != nil {
			p.Close()
		}
		if p, err = Dial(ctx, Config{Addr: node.P2PAddr, Params: params, Timeout: 5 * time.Second}); err != nil {
			t.Fatal(err)
		}
		if got, err = p.GetAddr(ctx); err != nil {
			t.Fatal(err)
		}
		return len(got) > 0
	})
	defer p.Close()
	if len(got) == 0 || len(got) > wire.MaxAddrPerMsg {
		t.Fatalf("%d addresses", len(got))
	}
	for _, a := range got {
		if !seeded[net.JoinHostPort(a.Addr.String(), "8333")] || a.Port != 8333 {
			t.Errorf("address %v:%d was not seeded", a.Addr, a.Port)
		}
	}
	t.Logf("%d of %d seeded addresses returned", len(got), len(seeded))
	if again, err := p.GetAddr(ctx); err != nil || len(again) != 0 {
		t.Fatalf("second getaddr on the connection: %d addresses, %v", len(again), err)
	}
}
