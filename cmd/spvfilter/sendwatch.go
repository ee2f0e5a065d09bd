package main

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"net"
	"strings"
	"sync"

	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/btcsuite/btcd/wire"

	"github.com/spvfilter/spvfilter/peer"
	"github.com/spvfilter/spvfilter/peer/addrbook"
	"github.com/spvfilter/spvfilter/peer/client"
)

// txWatch watches, on every connection of a send, what the node does
// with the transaction sent, to end the wait for a node that dropped it
// without a word as soon as that is known rather than after --timeout.
//
// btcd reads nothing more from a peer while it processes a transaction
// the peer sent (its handler waits for the mempool's verdict), and
// answers a getdata for a transaction from its mempool. So once the
// transaction was sent, btcd's answer to a getdata for it sent after it
// is its verdict: the transaction, accepted; a reject message before it,
// refused with a reason; notfound without a reject, dropped without a
// word (an orphan, or a transaction spending an output spent already).
// The connection to such a node is then closed, which ends the client's
// wait for it at once; the client goes on with its other peers. Only
// nodes calling themselves btcd are watched: another kind of node may
// answer notfound for a transaction it holds (Bitcoin Core does not
// serve one it has not announced to the peer asking), and is waited for
// as before.
type txWatch struct {
	txid  chainhash.Hash
	magic wire.BitcoinNet
	// forms are the transaction's encodings, with and without witness.
	forms [2][]byte
	dial  peer.DialFunc
	mu    sync.Mutex
	// dropped holds the addresses of the nodes that dropped the
	// transaction without a word.
	dropped map[string]bool
}

// watchSend has the connections of cfg watched for tx (see txWatch):
// they are made by a dialer of the watch's, through cfg's proxy if any.
func watchSend(cfg *client.Config, tx *wire.MsgTx) (*txWatch, error) {
	w := &txWatch{txid: tx.TxHash(), magic: cfg.Params.Net, dropped: map[string]bool{}}
	var full, bare bytes.Buffer
	if err := tx.Serialize(&full); err != nil {
		return nil, err
	}
	if err := tx.SerializeNoWitness(&bare); err != nil {
		return nil, err
	}
	w.forms = [2][]byte{full.Bytes(), bare.Bytes()}
	switch {
	case cfg.Dialer != nil:
		w.dial = cfg.Dialer
	case cfg.Proxy != "":
		dial, err := peer.SOCKS5(cfg.Proxy)
		if err != nil {
			return nil, badInputWords("--proxy", err)
		}
		w.dial = dial
		// The same proxy, dialled by the watch: the seeds stay unasked.
		cfg.Proxy = ""
	default:
		w.dial = plainDial
		// A dialer set, the client asks the seeds only through a
		// resolver: the system's, as without one.
		cfg.Resolver = addrbook.SystemResolver
	}
	cfg.Dialer = w.dialWatched
	return w, nil
}

// plainDial connects without a proxy, as the client does, and refuses
// an onion address, which it would look up in the DNS.
func plainDial(ctx context.Context, network, addr string) (net.Conn, error) {
	if addrbook.IsOnion(addr) {
		return nil, fmt.Errorf("%s: an onion address needs --proxy, such as Tor's socks5://127.0.0.1:9050", addr)
	}
	return (&net.Dialer{}).DialContext(ctx, network, addr)
}

// dialWatched dials addr and watches the connection.
func (w *txWatch) dialWatched(ctx context.Context, network, addr string) (net.Conn, error) {
	conn, err := w.dial(ctx, network, addr)
	if err != nil {
		return nil, err
	}
	c := &watchedConn{Conn: conn, w: w, addr: addr}
	txMax := uint32(len(w.forms[0]))
	c.out = msgStream{magic: w.magic, txMax: txMax}
	c.in = msgStream{magic: w.magic, txMax: txMax}
	return c, nil
}

// droppedBy reports whether the node at addr dropped the transaction
// without a word.
func (w *txWatch) droppedBy(addr string) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.dropped[addr]
}

// watchedConn is a connection whose messages about the watched
// transaction are followed; it passes every byte unchanged.
type watchedConn struct {
	net.Conn
	w    *txWatch
	addr string
	out  msgStream // what we send; Write's
	in   msgStream // what the node sends; Read's

	mu       sync.Mutex
	btcd     bool // the node calls itself btcd
	served   bool // the transaction was sent
	asked    int  // getdata for it sent
	answered int  // answers to them received (tx or notfound)
	// askedBefore is asked when the transaction was sent: answers past
	// it are to a getdata sent after the transaction.
	askedBefore int
	refused     bool // a reject message for it came
	closed      bool
}

func (c *watchedConn) Write(b []byte) (int, error) {
	c.out.feed(b, c.sent)
	return c.Conn.Write(b)
}

func (c *watchedConn) Read(b []byte) (int, error) {
	n, err := c.Conn.Read(b)
	if n > 0 {
		c.in.feed(b[:n], c.received)
	}
	return n, err
}

// sent follows a message we send.
func (c *watchedConn) sent(cmd string, payload []byte) {
	c.mu.Lock()
	defer c.mu.Unlock()
	switch cmd {
	case wire.CmdTx:
		if !c.served && (bytes.Equal(payload, c.w.forms[0]) || bytes.Equal(payload, c.w.forms[1])) {
			c.served, c.askedBefore = true, c.asked
		}
	case wire.CmdGetData:
		var m wire.MsgGetData
		if m.BtcDecode(bytes.NewBuffer(payload), wire.ProtocolVersion, wire.WitnessEncoding) == nil && c.lists(m.InvList) {
			c.asked++
		}
	}
}

// received follows a message the node sends.
func (c *watchedConn) received(cmd string, payload []byte) {
	c.mu.Lock()
	defer c.mu.Unlock()
	switch cmd {
	case wire.CmdVersion:
		var m wire.MsgVersion
		if m.BtcDecode(bytes.NewBuffer(payload), wire.ProtocolVersion, wire.BaseEncoding) == nil {
			c.btcd = strings.Contains(m.UserAgent, "/btcd:") // "/btcwire:0.5.0/btcd:0.24.2/"
		}
	case wire.CmdReject:
		var m wire.MsgReject
		if m.BtcDecode(bytes.NewBuffer(payload), wire.ProtocolVersion, wire.BaseEncoding) == nil && m.Cmd == wire.CmdTx && m.Hash == c.w.txid {
			c.refused = true
		}
	case wire.CmdTx:
		var m wire.MsgTx
		if m.BtcDecode(bytes.NewBuffer(payload), wire.ProtocolVersion, wire.WitnessEncoding) == nil && m.TxHash() == c.w.txid {
			c.answered++
		}
	case wire.CmdNotFound:
		var m wire.MsgNotFound
		if m.BtcDecode(bytes.NewBuffer(payload), wire.ProtocolVersion, wire.BaseEncoding) != nil || !c.lists(m.InvList) {
			return
		}
		c.answered++
		if c.btcd && c.served && !c.refused && c.answered > c.askedBefore && !c.closed {
			c.closed = true
			c.w.mu.Lock()
			c.w.dropped[c.addr] = true
			c.w.mu.Unlock()
			// The read loop gets this notfound, then the end of the
			// connection.
			go c.Conn.Close()
		}
	}
}

// lists reports whether invs name the watched transaction.
func (c *watchedConn) lists(invs []*wire.InvVect) bool {
	for _, iv := range invs {
		if (iv.Type == wire.InvTypeTx || iv.Type == wire.InvTypeWitnessTx) && iv.Hash == c.w.txid {
			return true
		}
	}
	return false
}

// maxWatchedPayload bounds the payload a msgStream keeps: the messages
// it follows about one transaction are small, but for the transaction
// itself, which is kept only at its own length.
const maxWatchedPayload = 64 << 10

// msgStream cuts one direction of a connection into messages and hands
// the payloads of those it follows to a callback; the others' payloads
// are skipped unread. It stops at the first header that does not begin
// with the network's magic (the connection is then the peer package's to
// end).
type msgStream struct {
	magic  wire.BitcoinNet
	txMax  uint32 // the longest tx payload kept
	hdr    [wire.MessageHeaderSize]byte
	nhdr   int
	cmd    string
	left   uint32 // payload bytes still to come
	keep   bool   // the payload is kept for the callback
	buf    []byte
	broken bool
}

// followed reports whether a message of cmd with a payload of n bytes is
// handed to the callback.
func (s *msgStream) followed(cmd string, n uint32) bool {
	switch cmd {
	case wire.CmdVersion, wire.CmdReject, wire.CmdGetData, wire.CmdNotFound:
		return n <= maxWatchedPayload
	case wire.CmdTx:
		return n <= s.txMax
	}
	return false
}

// feed takes the next bytes of the stream.
func (s *msgStream) feed(b []byte, fn func(cmd string, payload []byte)) {
	for len(b) > 0 && !s.broken {
		if s.nhdr < len(s.hdr) {
			k := copy(s.hdr[s.nhdr:], b)
			s.nhdr += k
			b = b[k:]
			if s.nhdr < len(s.hdr) {
				return
			}
			if wire.BitcoinNet(binary.LittleEndian.Uint32(s.hdr[:4])) != s.magic {
				s.broken = true
				return
			}
			s.cmd = string(bytes.TrimRight(s.hdr[4:16], "\x00"))
			s.left = binary.LittleEndian.Uint32(s.hdr[16:20])
			s.keep = s.followed(s.cmd, s.left)
			s.buf = s.buf[:0]
		}
		k := int(min(uint32(len(b)), s.left))
		if s.keep {
			s.buf = append(s.buf, b[:k]...)
		}
		s.left -= uint32(k)
		b = b[k:]
		if s.left == 0 {
			if s.keep {
				fn(s.cmd, s.buf)
			}
			s.nhdr = 0
			if cap(s.buf) > maxWatchedPayload {
				s.buf = nil // a transaction's room is not kept
			}
		}
	}
}
