package peertest

import (
	"bytes"
	"crypto/rand"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/btcsuite/btcd/wire"
)

// WatchKind is what a WatchProxy does to an announcement connection.
type WatchKind int

// The kinds of WatchProxy.
const (
	// WatchPasses passes every connection on unchanged, only counting
	// them.
	WatchPasses WatchKind = iota
	// WatchStalls accepts the connection and never answers: the
	// version handshake never ends.
	WatchStalls
	// WatchFloods passes the connection on but for the node's inv
	// messages, which its flood replaces, and once the handshake is over
	// sends inv messages of random transaction hashes, 50,000 each, until
	// the connection ends: the client never hears the node announce on
	// it, however late the flood comes on a loaded machine.
	WatchFloods
	// WatchRepeats passes the connection on, but sends each inv of the
	// node's WatchRepeatCount times.
	WatchRepeats
	// WatchServes passes the connection on, but answers every getdata
	// of a transaction with the proxy's transaction (see
	// NewWatchProxy), whatever was asked.
	WatchServes
	// WatchNoPong passes the connection on, but drops the client's
	// pings: the handshake ends, no ping is ever answered.
	WatchNoPong
	// WatchServesLate answers, on every connection, the client's
	// getdata of transactions WatchServeDelay late: on the client's own
	// connection passed on to the node, on an announcement connection
	// with the proxy's transaction, as WatchServes does.
	WatchServesLate
	// WatchSlowVerack passes the connection on, but holds the client's
	// verack, and what follows it, WatchVerackDelay: a node slow to
	// read the end of the handshake, after it sent its own verack.
	WatchSlowVerack
	// WatchWithholds passes the connection on, but drops the client's
	// getdata of transactions on an announcement connection: the node
	// announces, and is never asked.
	WatchWithholds
	// WatchFloodsUnopened is WatchFloods that also drops the client's
	// pings, as WatchNoPong does: the flood comes while the client still
	// waits for the answer that opens its watch, which never comes.
	WatchFloodsUnopened
)

// WatchServeDelay is how late a WatchServesLate proxy answers a getdata
// of transactions.
const WatchServeDelay = time.Second

// WatchVerackDelay is how long a WatchSlowVerack proxy holds the
// client's verack.
const WatchVerackDelay = 300 * time.Millisecond

// WatchRepeatCount is how many times a WatchRepeats proxy sends each of
// the node's inv messages.
const WatchRepeatCount = 1000

// WatchProxy is a test peer: a proxy in front of a node that passes a
// client's connections unchanged, but for those whose version message
// sets the relay flag (an announcement connection, as peer.TxWatch
// opens; a light client's own connection does not set it), which it
// treats as its WatchKind says. It counts the connections it holds.
type WatchProxy struct {
	Addr string

	srv    server
	target string
	net    wire.BitcoinNet
	kind   WatchKind
	serve  *wire.MsgTx

	open    atomic.Int32 // client connections open now
	watches atomic.Int32 // announcement connections accepted, in all
}

// NewWatchProxy starts a WatchProxy of kind on 127.0.0.1 in front of the
// node at target; serve is what a WatchServes proxy serves. It stops when
// the test ends.
func NewWatchProxy(t testing.TB, target string, btcnet wire.BitcoinNet, kind WatchKind, serve *wire.MsgTx) *WatchProxy {
	t.Helper()
	w := &WatchProxy{target: target, net: btcnet, kind: kind, serve: serve}
	w.Addr = w.srv.start(t, w.handle)
	return w
}

// Open returns how many client connections the proxy holds open now.
func (w *WatchProxy) Open() int { return int(w.open.Load()) }

// Watches returns how many announcement connections the proxy accepted.
func (w *WatchProxy) Watches() int { return int(w.watches.Load()) }

// handle serves one client connection.
func (w *WatchProxy) handle(client net.Conn) {
	w.open.Add(1)
	defer w.open.Add(-1)
	defer client.Close()
	cmd, version, err := readFrame(client)
	if err != nil || cmd != wire.CmdVersion {
		return
	}
	m, err := decodeFrame(version, w.net)
	if err != nil {
		return
	}
	watch := !m.(*wire.MsgVersion).DisableRelayTx
	if watch {
		w.watches.Add(1)
	}
	if watch && w.kind == WatchStalls {
		buf := make([]byte, 512)
		for {
			if _, err := client.Read(buf); err != nil {
				return
			}
		}
	}
	node, err := net.Dial("tcp", w.target)
	if err != nil || !w.srv.track(node) {
		return
	}
	defer node.Close()
	if _, err := node.Write(version); err != nil {
		return
	}
	c := &watchConn{p: w, client: client, watch: watch, stop: make(chan struct{})}
	defer close(c.stop)
	w.srv.run(func() {
		defer client.Close()
		c.fromNode(node)
	})
	c.fromClient(node)
}

// watchConn is one client connection of a WatchProxy.
type watchConn struct {
	p      *WatchProxy
	client net.Conn
	watch  bool          // an announcement connection
	stop   chan struct{} // closed when the connection ends
	mu     sync.Mutex    // both directions, and a flood, write to the client
}

// write sends a frame to the client.
func (c *watchConn) write(frame []byte) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	_, err := c.client.Write(frame)
	return err
}

// fromNode passes the node's messages on; on an announcement
// connection, a WatchRepeats proxy repeats the node's invs, a
// WatchFloods or WatchFloodsUnopened one drops them and starts its flood
// after the node's verack.
func (c *watchConn) fromNode(node net.Conn) {
	flood := c.watch && (c.p.kind == WatchFloods || c.p.kind == WatchFloodsUnopened)
	repeat := c.watch && c.p.kind == WatchRepeats
	for {
		cmd, frame, err := readFrame(node)
		if err != nil {
			return
		}
		n := 1
		switch {
		case repeat && cmd == wire.CmdInv:
			n = WatchRepeatCount
		case flood && cmd == wire.CmdInv:
			n = 0
		}
		for range n {
			if c.write(frame) != nil {
				return
			}
		}
		if flood && cmd == wire.CmdVerAck {
			c.p.srv.run(c.flood)
		}
	}
}

// flood sends invs of random transaction hashes until the connection
// ends.
func (c *watchConn) flood() {
	inv := wire.NewMsgInv()
	for range wire.MaxInvPerMsg {
		var h chainhash.Hash
		rand.Read(h[:])
		inv.AddInvVect(wire.NewInvVect(wire.InvTypeTx, &h))
	}
	frame := encodeFrame(inv, c.p.net)
	for {
		select {
		case <-c.stop:
			return
		default:
		}
		if c.write(frame) != nil {
			return
		}
	}
}

// fromClient passes the client's messages to the node; on an
// announcement connection, a WatchServes proxy answers a getdata of
// transactions itself, a WatchSlowVerack one holds the verack, a
// WatchNoPong or WatchFloodsUnopened one drops the pings, a
// WatchWithholds one drops the
// getdata of transactions.
func (c *watchConn) fromClient(node net.Conn) {
	serves := c.watch && (c.p.kind == WatchServes || c.p.kind == WatchServesLate)
	late := c.p.kind == WatchServesLate
	slow := c.watch && c.p.kind == WatchSlowVerack
	for {
		cmd, frame, err := readFrame(c.client)
		if err != nil {
			return
		}
		if slow && cmd == wire.CmdVerAck {
			time.Sleep(WatchVerackDelay)
		}
		if c.watch && (c.p.kind == WatchNoPong || c.p.kind == WatchFloodsUnopened) && cmd == wire.CmdPing {
			continue
		}
		withholds := c.watch && c.p.kind == WatchWithholds
		if (serves || late || withholds) && cmd == wire.CmdGetData {
			m, err := decodeFrame(frame, c.p.net)
			if err != nil {
				return
			}
			if withholds && hasTx(m.(*wire.MsgGetData)) {
				continue
			}
			if late && hasTx(m.(*wire.MsgGetData)) {
				time.Sleep(WatchServeDelay)
			}
			if serves && hasTx(m.(*wire.MsgGetData)) {
				if c.write(encodeFrame(c.p.serve, c.p.net)) != nil {
					return
				}
				continue
			}
		}
		if _, err := node.Write(frame); err != nil {
			return
		}
	}
}

// hasTx reports whether m asks for a transaction.
func hasTx(m *wire.MsgGetData) bool {
	for _, iv := range m.InvList {
		if iv.Type == wire.InvTypeTx || iv.Type == wire.InvTypeWitnessTx {
			return true
		}
	}
	return false
}

// decodeFrame reads a frame of network btcnet.
func decodeFrame(frame []byte, btcnet wire.BitcoinNet) (wire.Message, error) {
	_, m, _, err := wire.ReadMessageWithEncodingN(bytes.NewReader(frame), wire.ProtocolVersion, btcnet, wire.WitnessEncoding)
	return m, err
}

// encodeFrame returns m as a frame of network btcnet, whatever its
// size: wire's own writer refuses a message over its command's limit.
func encodeFrame(m wire.Message, btcnet wire.BitcoinNet) []byte {
	var buf bytes.Buffer
	m.BtcEncode(&buf, wire.ProtocolVersion, wire.WitnessEncoding)
	return rawFrame(btcnet, m.Command(), buf.Bytes())
}
