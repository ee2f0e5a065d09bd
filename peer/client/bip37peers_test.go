package client

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/btcsuite/btcd/wire"
	"github.com/spvfilter/spvfilter/bip37"
	"github.com/spvfilter/spvfilter/peer/peertest"
)

// hangupOnce is a lie shared by several relays: the first relay to
// forward its after-th merkle block hangs up instead, once; every
// message is counted per relay.
type hangupOnce struct {
	after int
	mu    sync.Mutex
	done  bool
	seen  int
}

// relay is one relay's view of the shared lie, counting what it
// forwarded.
type relay struct {
	h                 *hangupOnce
	mu                sync.Mutex
	merkleBlocks, txs int
	hungUp            bool
	lie               *peertest.Liar
}

func (r *relay) forward(m wire.Message) ([]wire.Message, bool) {
	switch m.(type) {
	case *wire.MsgMerkleBlock:
		if r.h.hangUp() {
			r.mu.Lock()
			r.hungUp = true
			r.mu.Unlock()
			return nil, true
		}
		r.mu.Lock()
		r.merkleBlocks++
		r.mu.Unlock()
	case *wire.MsgTx:
		r.mu.Lock()
		r.txs++
		r.mu.Unlock()
	}
	return []wire.Message{m}, false
}

func (h *hangupOnce) hangUp() bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.done {
		return false
	}
	h.seen++
	h.done = h.seen > h.after
	return h.done
}

// filterLoads are the filterload messages the client sent through l.
func filterLoads(l *peertest.Liar) []*wire.MsgFilterLoad {
	var out []*wire.MsgFilterLoad
	for _, m := range l.Requests() {
		if fl, ok := m.(*wire.MsgFilterLoad); ok {
			out = append(out, fl)
		}
	}
	return out
}

// checkReceived compares what the result says a peer received with what
// went through its relay: the same filters, bit for bit, and the merkle
// blocks and transactions the relay forwarded (a pass cut off counts
// those read whole before the cut, which may be fewer).
func checkReceived(t *testing.T, p BIP37Peer, r *relay) {
	t.Helper()
	loads := filterLoads(r.lie)
	if len(loads) == 0 || len(p.Filters) != len(loads) {
		t.Fatalf("%s: %d filters recorded, %d filterloads sent", p.Address, len(p.Filters), len(loads))
	}
	for i, fl := range loads {
		f := p.Filters[i]
		if !bytes.Equal(f.Bits(), fl.Filter) || f.HashFuncs() != fl.HashFuncs || f.Tweak() != fl.Tweak || f.Flags() != fl.Flags {
			t.Errorf("%s: filter %d recorded %d bytes k %d tweak %d, sent %d bytes k %d tweak %d", p.Address, i, f.Size(), f.HashFuncs(), f.Tweak(), len(fl.Filter), fl.HashFuncs, fl.Tweak)
		}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if p.MerkleBlocks > r.merkleBlocks || p.Txs > r.txs || !p.Abandoned && (p.Txs != r.txs || p.MerkleBlocks != r.merkleBlocks) {
		t.Errorf("%s: recorded %d merkle blocks %d txs, the relay forwarded %d, %d", p.Address, p.MerkleBlocks, p.Txs, r.merkleBlocks, r.txs)
	}
}

// TestBIP37PeersAbandonedPass: of two peers, the one asked first hangs
// up mid-scan; the scan ends at the other, and its result lists both,
// each with the filters it received (those of the abandoned pass too, bit
// for bit as sent), the merkle blocks and transactions it sent, and the
// first marked abandoned.
func TestBIP37PeersAbandonedPass(t *testing.T) {
	needFixture(t)
	h := &hangupOnce{after: 30}
	relays := map[string]*relay{}
	var addrs []string
	for range 2 {
		r := &relay{h: h}
		r.lie = peertest.NewLiar(t, fx.node.P2PAddr, fx.node.Params.Net, r.forward)
		relays[r.lie.Addr] = r
		addrs = append(addrs, r.lie.Addr)
	}
	c := connect(t, 0, addrs...)
	res, err := c.ScanBIP37(context.Background(), ScanRequest{Watch: items(fx.watch), To: c.Chain().Height()},
		BIP37Options{FPRate: 0.0001, Flags: wire.BloomUpdateAll})
	if err != nil {
		t.Fatal(err)
	}
	checkMatches(t, res, fx.want)
	if len(res.BIP37Peers) != 2 {
		t.Fatalf("peers %+v: want both", res.BIP37Peers)
	}
	first, last := res.BIP37Peers[0], res.BIP37Peers[1]
	if !first.Abandoned || last.Abandoned || !relays[first.Address].hungUp || last.Address != res.FilteringPeer {
		t.Errorf("first %s abandoned %v (hung up %v), last %s abandoned %v, filtering peer %s", first.Address, first.Abandoned, relays[first.Address].hungUp,
			last.Address, last.Abandoned, res.FilteringPeer)
	}
	for _, p := range res.BIP37Peers {
		checkReceived(t, p, relays[p.Address])
	}
	if first.MerkleBlocks == 0 || last.MerkleBlocks == 0 || last.Txs == 0 {
		t.Errorf("first sent %d merkle blocks, last %d with %d txs", first.MerkleBlocks, last.MerkleBlocks, last.Txs)
	}
}

// TestBIP37ReloadKeepsItsSize: a reload holding the outpoints found so
// far keeps the first filter's size and hash functions while they fit its
// headroom, so that it tells the node no more than the first; the result
// records every filter as sent and every transaction the node sent, false
// positives counted.
func TestBIP37ReloadKeepsItsSize(t *testing.T) {
	needFixture(t)
	r := &relay{h: &hangupOnce{done: true}}
	r.lie = peertest.NewLiar(t, fx.node.P2PAddr, fx.node.Params.Net, r.forward)
	res := scanForcingReloads(t, connect(t, 0, r.lie.Addr))
	if res.FilterReloads == 0 || len(res.BIP37Peers) != 1 {
		t.Fatalf("%d reloads, peers %+v", res.FilterReloads, res.BIP37Peers)
	}
	p := res.BIP37Peers[0]
	checkReceived(t, p, r)
	for i, f := range p.Filters[1:] {
		if f.Size() != p.Filters[0].Size() || f.HashFuncs() != p.Filters[0].HashFuncs() {
			t.Errorf("reload %d: %d bytes, %d hash functions; the first filter %d, %d", i+1, f.Size(), f.HashFuncs(), p.Filters[0].Size(), p.Filters[0].HashFuncs())
		}
	}
	fps := 0
	for _, m := range res.Matches {
		if m.FalsePositive {
			fps++
		}
	}
	if p.FalsePositiveTxs < fps || p.FalsePositiveTxs == 0 || p.Abandoned {
		t.Errorf("peer %d false positives, result %d, abandoned %v", p.FalsePositiveTxs, fps, p.Abandoned)
	}
}

// With MinFilterRate above FPRate, the filter loaded keeps FPRate's size
// and hash functions and is filled to MinFilterRate, from its bits,
// whatever its tweak; the scan still finds every payment.
func TestBIP37FilterFilledToMinRate(t *testing.T) {
	needFixture(t)
	watch := items(fx.watch)
	const rate, floor = 0.001, 0.02
	_, got, _ := scanOneFilter(t, watch, BIP37Options{FPRate: rate, Flags: wire.BloomUpdateAll, MinFilterRate: floor, MaxReloads: -1})
	bytes, k := bip37.SizingCore.Size(uint32(len(watch)*(1+WatchFilterHeadroom)), rate)
	if got.Size() != int(bytes) || got.HashFuncs() != k {
		t.Errorf("filter of %d bytes, %d hash functions; the rate sizes %d, %d", got.Size(), got.HashFuncs(), bytes, k)
	}
	_, hi := rateInterval(got.Size()*8, got.HashFuncs(), floor)
	if fr := got.Stats().FalsePositiveRate; fr < floor || fr > hi {
		t.Errorf("the filter loaded matches at %v from its bits, want within [%v, %.3g]", fr, floor, hi)
	}
}

// scanForcingReloads scans the fixture's chain at rate 0.02 watching also
// the miner's key hash as a P2WPKH script: every coinbase pays it with
// P2PKH and matches, which forces reloads.
func scanForcingReloads(t *testing.T, c *Client) *ScanResult {
	t.Helper()
	p2wpkh := append([]byte{0x00, 0x14}, fx.node.MinerKey.PkScript()[3:23]...)
	req := ScanRequest{Watch: append(items(fx.watch), ScriptItem(p2wpkh)), To: c.Chain().Height()}
	res, err := c.ScanBIP37(context.Background(), req, BIP37Options{FPRate: 0.02, Flags: wire.BloomUpdateAll})
	if err != nil {
		t.Fatal(err)
	}
	checkMatches(t, res, fx.want)
	return res
}

// TestBIP37ScanErrorNamesPeers: a scan whose only peer hangs up at every
// merkle block fails with a *BIP37ScanError wrapping the failure and
// naming the peer, with the filters it received, bit for bit as sent.
func TestBIP37ScanErrorNamesPeers(t *testing.T) {
	needFixture(t)
	cut := func(m wire.Message) ([]wire.Message, bool) {
		_, isBlock := m.(*wire.MsgMerkleBlock)
		return []wire.Message{m}, isBlock
	}
	l := peertest.NewLiar(t, fx.node.P2PAddr, fx.node.Params.Net, cut)
	c := connect(t, 0, l.Addr)
	_, err := c.ScanBIP37(context.Background(), ScanRequest{Watch: items(fx.watch), To: c.Chain().Height()},
		BIP37Options{FPRate: 0.0001, Flags: wire.BloomUpdateAll})
	var se *BIP37ScanError
	if !errors.As(err, &se) || se.Err == nil || !strings.Contains(err.Error(), l.Addr) || len(se.Peers) != 1 || !se.Peers[0].Abandoned {
		t.Fatalf("error %v (%T): want a BIP37ScanError naming %s, abandoned", err, err, l.Addr)
	}
	loads := filterLoads(l)
	if len(loads) == 0 || len(se.Peers[0].Filters) != len(loads) {
		t.Fatalf("%d filters recorded, %d filterloads", len(se.Peers[0].Filters), len(loads))
	}
	for i, fl := range loads {
		if !bytes.Equal(se.Peers[0].Filters[i].Bits(), fl.Filter) || se.Peers[0].Filters[i].Tweak() != fl.Tweak {
			t.Errorf("filter %d differs from the filterload", i)
		}
	}
}
