package peer

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"time"

	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/btcsuite/btcd/wire"
)

// payloadLimits are tighter limits than btcd's wire for messages whose
// wire limit is the 32 MB protocol maximum: the reason of a reject is
// free text, alert is obsolete, and 1 MB of filter-header checkpoints
// covers 32 million blocks.
var payloadLimits = map[string]uint32{
	wire.CmdReject:    64 << 10,
	wire.CmdAlert:     4 << 10,
	wire.CmdCFCheckpt: 1 << 20,
}

// readLoop reads messages until the connection ends. It answers pings and
// serves getdata itself, offers every other message to the request in
// flight, and handles what no request takes as unsolicited, within the
// node's budgets. Unknown commands are skipped, as the protocol allows;
// any other decoding failure ends the connection.
func (p *Peer) readLoop() {
	defer p.closeConn()
	for {
		select {
		case <-p.done:
			return // what is buffered is not read after a drop
		default:
		}
		msg, cmd, n, err := p.readMessage()
		p.received.Add(uint64(n))
		if errors.Is(err, wire.ErrUnknownMessage) {
			err = p.budget.charge(kindUnknown, 1, n, time.Now())
			if err != nil {
				p.closeWith(fmt.Errorf("%w %q", err, cmd))
				return
			}
			continue
		}
		if errors.Is(err, ErrProtocol) {
			p.closeWith(err)
			return
		}
		if err != nil {
			p.readErr.Store(&err)
			return
		}
		if err := p.dispatch(msg, n); err != nil {
			p.closeWith(err)
			return
		}
	}
}

// readMessage reads the next message, refusing a payload above
// payloadLimits before reading it. It returns the message's command and
// size (header included) also when the command is unknown.
func (p *Peer) readMessage() (wire.Message, string, int, error) {
	hdr, err := p.br.Peek(wire.MessageHeaderSize)
	if err != nil {
		return nil, "", 0, err
	}
	cmd := string(bytes.TrimRight(hdr[4:16], "\x00"))
	size := binary.LittleEndian.Uint32(hdr[16:20])
	if limit, ok := payloadLimits[cmd]; ok && size > limit {
		return nil, cmd, 0, fmt.Errorf("%w: %q message of %d bytes, at most %d accepted", ErrProtocol, cmd, size, limit)
	}
	n, msg, _, err := wire.ReadMessageWithEncodingN(p.br, p.pver.Load(), p.cfg.Params.Net, wire.WitnessEncoding)
	if errors.Is(err, wire.ErrUnknownMessage) {
		n = wire.MessageHeaderSize + int(size) // wire does not count what it skips
	}
	return msg, cmd, n, err
}

// dispatch handles one message of n bytes; an error ends the connection.
func (p *Peer) dispatch(msg wire.Message, n int) error {
	now := time.Now()
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
	if p.handOff(msg) {
		return nil
	}
	return p.unsolicited(msg, n, now)
}

// handOff offers msg to the request in flight and reports whether it took
// it.
func (p *Peer) handOff(msg wire.Message) bool {
	r := p.req.Load()
	if r == nil {
		return false
	}
	select {
	case r.offer <- msg:
		return <-r.verdict
	case <-r.ended:
		return false
	case <-p.done:
		return true // nobody is left to tell
	}
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
