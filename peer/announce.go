package peer

import (
	"context"
	"sync"

	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/btcsuite/btcd/wire"
)

// maxPending bounds what waits for Config.OnAnnounce and
// Config.OnAddresses: the newest maxPending block hashes, transaction
// hashes and addresses are kept.
const maxPending = 1000

// Announcement is what a node announced: blocks (inv of blocks or witness
// blocks, the last of an unsolicited headers message) and transactions
// (inv of transactions or witness transactions), oldest first.
type Announcement struct {
	Blocks []chainhash.Hash
	Txs    []chainhash.Hash
}

// notifier hands announcements and addresses to the callbacks from one
// goroutine, merging what arrives while they run.
type notifier struct {
	wake chan struct{}

	mu      sync.Mutex
	pending Announcement
	addrs   []*wire.NetAddressV2
}

func newNotifier() *notifier { return &notifier{wake: make(chan struct{}, 1)} }

// newest appends add to s and keeps the last maxPending.
func newest[T any](s, add []T) []T {
	s = append(s, add[max(0, len(add)-maxPending):]...)
	if n := len(s) - maxPending; n > 0 {
		s = append(s[:0:0], s[n:]...)
	}
	return s
}

// announce queues a for OnAnnounce; a nil notifier drops it.
func (n *notifier) announce(a Announcement) {
	if n == nil || len(a.Blocks)+len(a.Txs) == 0 {
		return
	}
	n.mu.Lock()
	n.pending.Blocks = newest(n.pending.Blocks, a.Blocks)
	n.pending.Txs = newest(n.pending.Txs, a.Txs)
	n.mu.Unlock()
	n.signal()
}

// gossip queues addresses for OnAddresses; a nil notifier drops them.
func (n *notifier) gossip(addrs []*wire.NetAddressV2) {
	if n == nil || len(addrs) == 0 {
		return
	}
	n.mu.Lock()
	n.addrs = newest(n.addrs, addrs)
	n.mu.Unlock()
	n.signal()
}

func (n *notifier) signal() {
	select {
	case n.wake <- struct{}{}:
	default:
	}
}

// take returns and clears what is pending.
func (n *notifier) take() (Announcement, []*wire.NetAddressV2) {
	n.mu.Lock()
	defer n.mu.Unlock()
	a, addrs := n.pending, n.addrs
	n.pending, n.addrs = Announcement{}, nil
	return a, addrs
}

// notifyLoop calls the callbacks until the connection ends, and once
// more then for what came last.
func (p *Peer) notifyLoop() {
	for ended := false; !ended; {
		select {
		case <-p.done:
			ended = true
		case <-p.notes.wake:
		}
		a, addrs := p.notes.take()
		if len(a.Blocks)+len(a.Txs) > 0 && p.cfg.OnAnnounce != nil {
			p.cfg.OnAnnounce(a)
		}
		if len(addrs) > 0 && p.cfg.OnAddresses != nil {
			p.cfg.OnAddresses(addrs)
		}
	}
}

// announceInv passes on the blocks and transactions of an inv.
func (p *Peer) announceInv(m *wire.MsgInv) {
	if p.notes == nil {
		return
	}
	var a Announcement
	for _, iv := range m.InvList {
		switch iv.Type {
		case wire.InvTypeBlock, wire.InvTypeWitnessBlock:
			a.Blocks = append(a.Blocks, iv.Hash)
		case wire.InvTypeTx, wire.InvTypeWitnessTx:
			a.Txs = append(a.Txs, iv.Hash)
		}
	}
	p.notes.announce(a)
}

// addrV2List converts the addresses of an addr message.
func addrV2List(m *wire.MsgAddr) []*wire.NetAddressV2 {
	out := make([]*wire.NetAddressV2, 0, len(m.AddrList))
	for _, na := range m.AddrList {
		ip := na.IP.To4()
		if ip == nil {
			ip = na.IP.To16()
		}
		if ip == nil {
			continue
		}
		out = append(out, wire.NetAddressV2FromBytes(na.Timestamp, na.Services, ip, na.Port))
	}
	return out
}

// GetAddr asks the node for the addresses of other nodes (getaddr) and
// returns those it sends before the pong of a ping sent after the
// request, at most wire.MaxAddrPerMsg. btcd answers the first getaddr of
// a connection at once (nothing when it knows no address) and ignores
// the others; Bitcoin Core answers later, and its answer then reaches
// Config.OnAddresses.
func (p *Peer) GetAddr(ctx context.Context) ([]*wire.NetAddressV2, error) {
	const op = "getaddr"
	end, err := p.begin(ctx, op)
	if err != nil {
		return nil, err
	}
	defer end()
	deadline := p.deadline()
	if err := p.send(ctx, op, wire.NewMsgGetAddr(), deadline); err != nil {
		return nil, err
	}
	nonce, err := p.sendBarrier(ctx, op, deadline)
	if err != nil {
		return nil, err
	}
	var out []*wire.NetAddressV2
	for {
		m, err := p.recv(ctx, op, deadline, func(m wire.Message) bool {
			switch m := m.(type) {
			case *wire.MsgAddr, *wire.MsgAddrV2:
				return len(out) < wire.MaxAddrPerMsg
			case *wire.MsgPong:
				return m.Nonce == nonce
			}
			return false
		})
		if err != nil {
			return nil, err
		}
		switch m := m.(type) {
		case *wire.MsgAddr:
			out = append(out, addrV2List(m)...)
		case *wire.MsgAddrV2:
			out = append(out, m.AddrList...)
		case *wire.MsgPong:
			return out[:min(len(out), wire.MaxAddrPerMsg)], nil
		}
	}
}
