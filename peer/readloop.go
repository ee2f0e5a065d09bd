package peer

import (
	"errors"
	"fmt"
	"time"

	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/btcsuite/btcd/wire"
)

// readLoop reads messages until the connection ends. It answers pings and
// serves getdata itself, offers every other message to the request in
// flight, and handles what no request takes as unsolicited, within the
// node's budgets. Unknown commands are skipped, as the protocol allows;
// a frame or payload that breaks the protocol ends the connection with
// ErrProtocol, one damaged on the way with ErrDamaged, one whose payload
// does not follow its header within Config.Timeout (a quarter more at
// most) with ErrStalled (see frame.go). While a getcfilters answer is
// on its way, it lets filters gather before it reads (see gatherFor).
func (p *Peer) readLoop() {
	defer p.closeConn()
	for {
		select {
		case <-p.done:
			return // what is buffered is not read after a drop
		default:
		}
		p.gather()
		pver := p.pver.Load()
		f, err := p.frames.next(pver)
		p.received.Add(uint64(f.size))
		if errors.Is(err, wire.ErrUnknownMessage) {
			err = p.budget.charge(kindUnknown, 1, f.size, time.Now())
			if err != nil {
				p.closeWith(fmt.Errorf("%w %q", err, f.cmd))
				return
			}
			continue
		}
		if errors.Is(err, ErrProtocol) || errors.Is(err, ErrDamaged) || errors.Is(err, ErrStalled) {
			p.closeWith(err)
			return
		}
		if err != nil {
			p.readErr.Store(&err)
			return
		}
		msg, err := f.decode(pver)
		if err != nil {
			p.closeWith(err)
			return
		}
		if err := p.dispatch(delivery{msg, f.sum, f.checked}, f.size); err != nil {
			p.closeWith(err)
			return
		}
	}
}

// delivery is a message as the read loop hands it on, with the payload
// checksum the node gave it and whether it was checked (see intact).
type delivery struct {
	msg     wire.Message
	sum     [4]byte
	checked bool
}

// dispatch handles one message of n bytes; an error ends the connection.
func (p *Peer) dispatch(d delivery, n int) error {
	now := time.Now()
	msg := d.msg
	switch m := msg.(type) {
	case *wire.MsgPing:
		if err := p.budget.charge(kindPing, 1, n, now); err != nil {
			return err
		}
		p.w.pong(m.Nonce)
		return nil
	case *wire.MsgGetData:
		if err := p.budget.charge(kindGetData, len(m.InvList), n, now); err != nil {
			return err
		}
		p.serveOffers(m)
		return nil
	}
	if p.handOff(d) {
		return nil
	}
	if pong, ok := msg.(*wire.MsgPong); ok && p.barriers.came(pong.Nonce) {
		return nil // after its request's whole answer
	}
	return p.unsolicited(msg, n, now)
}

// handOff offers d to the request in flight and reports whether it took
// it. It waits until the request says what it wants (see await), runs
// want on d, and, when d is wanted, runs take on it or passes it on (see
// wanted); a want is kept until it took the messages it was for.
func (p *Peer) handOff(d delivery) bool {
	r := p.req.Load()
	if r == nil {
		return false
	}
	if p.held.r != r {
		p.held = heldWant{r: r}
	}
	if p.held.n == 0 {
		select {
		case p.held.wanted = <-r.wants:
		case <-r.ended:
			return false
		case <-p.done:
			return true // nobody is left to tell
		}
	}
	if !p.held.want(d.msg) {
		return false
	}
	p.held.n--
	if p.held.take != nil {
		if !p.held.take(d) && p.held.n > 0 {
			return true
		}
		p.held.n = 0
	}
	select {
	case r.offer <- d: // room for the one message passed on
		return true
	case <-r.ended: // it gave up
		return false
	case <-p.done:
		return true
	}
}

// gatherFor is how long the read loop waits before it reads, while the
// answer of a request for many messages (a getcfilters) is on its way and
// the next message is not buffered whole. A node writes each filter on
// its own: read as they come, each costs a wake-up of the read loop and a
// read, often two, one of them finding nothing, and the wake-ups, not the
// bytes, are most of what reading costs. In 5 ms a node serving from
// memory writes some 80 filters of 500 elements (100 kB), taken in one
// read (see readBufferSize), where a millisecond's wait took a fifth of
// that for the same wake-up; the socket's buffer holds far more. An
// answer is late by 5 ms at most, its last read's.
const gatherFor = 5 * time.Millisecond

// gather waits gatherFor when the request in flight is taking many
// messages and the next message is not buffered whole (see
// frameReader.buffered): waiting for a header alone would leave the rest
// of its message to a read of its own, often one that finds nothing and
// waits for the network.
func (p *Peer) gather() {
	if p.held.take == nil || p.held.n < 2 || p.held.r != p.req.Load() || p.frames.buffered() {
		return
	}
	time.Sleep(gatherFor)
}

// heldWant is the read loop's: what the request r still wants.
type heldWant struct {
	r *request
	wanted
}

// unsolicited charges a message no request took to the node's budgets
// and passes on what the client wants to hear of: announcements,
// addresses, rejects.
func (p *Peer) unsolicited(msg wire.Message, n int, now time.Time) error {
	k, units := classify(msg)
	if err := p.budget.charge(k, units, n, now); err != nil {
		return err
	}
	switch m := msg.(type) {
	case *wire.MsgInv:
		p.announceInv(m)
	case *wire.MsgHeaders:
		if len(m.Headers) > 0 {
			p.notes.announce(Announcement{Blocks: []chainhash.Hash{m.Headers[len(m.Headers)-1].BlockHash()}})
		}
	case *wire.MsgAddr:
		p.notes.gossip(addrV2List(m))
	case *wire.MsgAddrV2:
		p.notes.gossip(m.AddrList)
	case *wire.MsgReject:
		p.rejected(m)
	}
	return nil
}

// classify returns a message's budget and how many units it costs.
func classify(msg wire.Message) (kind, int) {
	switch m := msg.(type) {
	case *wire.MsgInv:
		return kindInv, len(m.InvList)
	case *wire.MsgNotFound:
		return kindNotFound, len(m.InvList)
	case *wire.MsgAddr:
		return kindAddr, len(m.AddrList)
	case *wire.MsgAddrV2:
		return kindAddr, len(m.AddrList)
	case *wire.MsgHeaders:
		return kindHeaders, 1
	case *wire.MsgReject:
		return kindReject, 1
	case *wire.MsgTx, *wire.MsgBlock, *wire.MsgMerkleBlock, *wire.MsgCFilter, *wire.MsgCFHeaders, *wire.MsgCFCheckpt:
		return kindData, 1
	}
	return kindOther, 1
}
