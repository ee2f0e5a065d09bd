package addrbook

import (
	"context"
	"fmt"
	"net"
	"slices"
	"testing"
	"time"

	"github.com/btcsuite/btcd/addrmgr"
	"github.com/btcsuite/btcd/btcjson"
	"github.com/btcsuite/btcd/chaincfg"
	btcdpeer "github.com/btcsuite/btcd/peer"
	"github.com/btcsuite/btcd/wire"
	"github.com/spvfilter/spvfilter/peer"
	"github.com/spvfilter/spvfilter/peer/peertest"
)

// TestDiscover follows addresses from real btcd nodes' gossip and a DNS
// seed into the address book and on to a dialled node. Node a is
// connected to node b and to nothing else (--connect), so that it never
// dials what it is told.
//
// btcd gossips no loopback address: its address manager keeps only
// routable addresses (addrmgr.IsRoutable), its getaddr answer is drawn
// from that manager, and it advertises its own address only when
// routable. So a node on loopback is learnt here from an addrv2 message a
// proxy in front of a slips in, and from a seed answered by a test
// resolver; what btcd itself gossips is checked with onion addresses.
func TestDiscover(t *testing.T) {
	b := peertest.StartBtcd(t)
	a := peertest.StartBtcd(t, peertest.WithArgs("--connect="+b.P2PAddr))
	waitConnected(t, a, b.P2PAddr)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	const need = wire.SFNodeCF | wire.SFNodeWitness

	t.Run("btcd gossips routable addresses only", func(t *testing.T) {
		// a is connected to b, yet tells nothing of it.
		if got := getAddr(ctx, t, a.P2PAddr); len(got) != 0 {
			t.Fatalf("a gossiped %v before it was told any address", keys(got))
		}
		told := []*wire.NetAddressV2{na(t, b.P2PAddr, wire.SFNodeNetwork), na(t, "10.0.0.1:18444", wire.SFNodeNetwork)}
		var onions []string
		for i := range 30 {
			told = append(told, onionNA(i, wire.SFNodeNetwork))
			onions = append(onions, onion(i)+":8333")
		}
		tell(t, a, told)
		// btcd answers a getaddr (once per connection) with 23% of the
		// addresses it holds, rounded down: 6 of 30; 7 had it kept 31
		// or 32.
		got := getAddr(ctx, t, a.P2PAddr)
		if len(got) != 6 || slices.ContainsFunc(keys(got), func(k string) bool { return !slices.Contains(onions, k) }) {
			t.Fatalf("a gossiped %v; want 6 of the 30 onion addresses, neither b's nor the private one", keys(got))
		}
		book, _ := openBook(t, a.Params, t.TempDir(), nil)
		if n := book.Add(got, a.P2PAddr); n != len(got) {
			t.Errorf("the book took %d of %d", n, len(got))
		}
		if p, ok := book.Pick(wire.SFNodeNetwork, []string{a.P2PAddr}, nil); !ok || !slices.Contains(keys(got), p) {
			t.Errorf("picked %q, %v; want one of %v", p, ok, keys(got))
		}
	})

	t.Run("an address gossiped through a proxy is dialled", func(t *testing.T) {
		dir := t.TempDir()
		book, _ := openBook(t, a.Params, dir, nil)
		proxy := peertest.NewLiar(t, a.P2PAddr, a.Params.Net, nil)
		taken := make(chan int, 1)
		p, err := peer.Dial(ctx, peer.Config{Addr: proxy.Addr, Params: a.Params, Timeout: 30 * time.Second,
			OnAddresses: func(addrs []*wire.NetAddressV2) { taken <- book.Add(addrs, proxy.Addr) }})
		if err != nil {
			t.Fatal(err)
		}
		defer p.Close()
		msg := wire.NewMsgAddrV2()
		msg.AddrList = []*wire.NetAddressV2{na(t, b.P2PAddr, wire.SFNodeNetwork|need)}
		if err := proxy.Inject(msg); err != nil {
			t.Fatal(err)
		}
		select {
		case n := <-taken:
			if n != 1 {
				t.Fatalf("the book took %d addresses of 1", n)
			}
		case <-time.After(30 * time.Second):
			t.Fatal("the gossip never reached the book")
		}
		addr := dialPicked(ctx, t, book, need, []string{proxy.Addr}, b.P2PAddr)
		if err := book.Close(); err != nil {
			t.Fatal(err)
		}
		again, _ := openBook(t, a.Params, dir, nil)
		ks, _ := again.Known()
		if len(ks) != 1 || ks[0].Addr != addr || !ks[0].Tried || ks[0].Services&need != need {
			t.Errorf("the next life knows %+v; want %s, tried, with its services", ks, addr)
		}
	})

	t.Run("an address from a DNS seed is dialled", func(t *testing.T) {
		_, port, _ := net.SplitHostPort(b.P2PAddr)
		params := withSeeds(b.Params, port, chaincfg.DNSSeed{Host: "seed.regtest.example", HasFiltering: true})
		dns := &fakeDNS{answers: map[string][]net.IP{fmt.Sprintf("x%x.seed.regtest.example", uint64(need)): ips("127.0.0.1")}}
		addrs, errs := Seed(ctx, params, need, dns.resolve)
		if len(addrs) != 1 || errs != nil {
			t.Fatalf("seed: %v, %v", keys(addrs), errs)
		}
		book, _ := openBook(t, params, "", nil)
		if n := book.Add(addrs, "seed.regtest.example"); n != 1 {
			t.Fatalf("the book took %d of 1", n)
		}
		dialPicked(ctx, t, book, need, nil, b.P2PAddr)
	})
}

// dialPicked picks an address from book, checks it is want, dials it and
// records the connection in the book; it returns the address.
func dialPicked(ctx context.Context, t *testing.T, book *Book, need wire.ServiceFlag, inUse []string, want string) string {
	t.Helper()
	addr, ok := book.Pick(need, inUse, nil)
	if !ok || addr != want {
		t.Fatalf("picked %q, %v; want %s", addr, ok, want)
	}
	book.Attempt(addr)
	p, err := peer.Dial(ctx, peer.Config{Addr: addr, Params: book.params, Timeout: 30 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	if p.Services()&need != need {
		t.Fatalf("%s offers %v, want %v", addr, p.Services(), need)
	}
	book.Connected(addr, p.Services())
	book.Good(addr)
	return addr
}

// getAddr asks the node at addr for addresses over a new connection.
func getAddr(ctx context.Context, t *testing.T, addr string) []*wire.NetAddressV2 {
	t.Helper()
	p, err := peer.Dial(ctx, peer.Config{Addr: addr, Params: &chaincfg.RegressionNetParams, Timeout: 30 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	got, err := p.GetAddr(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return got
}

// tell sends addrs to node in one addrv2 message over a connection of
// btcd's own peer package, and waits for the pong of a ping sent after
// it: the node has handled the message by then.
func tell(t *testing.T, node *peertest.Node, addrs []*wire.NetAddressV2) {
	t.Helper()
	verack := make(chan struct{}, 1)
	pong := make(chan uint64, 4)
	p, err := btcdpeer.NewOutboundPeer(&btcdpeer.Config{
		UserAgentName: "addrteller", UserAgentVersion: "1.0", ChainParams: node.Params,
		TrickleInterval: 10 * time.Millisecond,
		Listeners: btcdpeer.MessageListeners{
			OnVerAck: func(*btcdpeer.Peer, *wire.MsgVerAck) { verack <- struct{}{} },
			OnPong:   func(_ *btcdpeer.Peer, m *wire.MsgPong) { pong <- m.Nonce },
		},
	}, node.P2PAddr)
	if err != nil {
		t.Fatal(err)
	}
	conn, err := net.Dial("tcp", node.P2PAddr)
	if err != nil {
		t.Fatal(err)
	}
	p.AssociateConnection(conn)
	defer func() {
		p.Disconnect()
		p.WaitForDisconnect()
	}()
	timeout := time.After(30 * time.Second)
	select {
	case <-verack:
	case <-timeout:
		t.Fatalf("no verack from %s", node.P2PAddr)
	}
	msg := wire.NewMsgAddrV2()
	msg.AddrList = addrs
	p.QueueMessage(msg, nil)
	const nonce = 0x5eed
	p.QueueMessage(wire.NewMsgPing(nonce), nil)
	for {
		select {
		case n := <-pong:
			if n == nonce {
				return
			}
		case <-timeout:
			t.Fatalf("no pong from %s", node.P2PAddr)
		}
	}
}

// waitConnected waits until node has a peer at addr.
func waitConnected(t *testing.T, node *peertest.Node, addr string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		peers, err := node.RPC().GetPeerInfo()
		if err != nil {
			t.Fatal(err)
		}
		if slices.ContainsFunc(peers, func(p btcjson.GetPeerInfoResult) bool { return p.Addr == addr }) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s never connected to %s", node.P2PAddr, addr)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// keys returns the host:port of each address.
func keys(addrs []*wire.NetAddressV2) []string {
	out := make([]string, len(addrs))
	for i, a := range addrs {
		out[i] = addrmgr.NetAddressKey(a)
	}
	return out
}
