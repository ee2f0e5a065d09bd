package peertest

import (
	"math/rand/v2"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/btcsuite/btcd/wire"
)

// CoreUserAgent is the user agent a CoreLike proxy puts in the node's
// version message.
const CoreUserAgent = "/Satoshi:27.0.0/"

// CoreLike is a test peer: a proxy in front of a real btcd that serves
// transactions as Bitcoin Core does (net_processing's FindTxForGetData).
// A getdata for a transaction the node has not announced on that
// connection is answered with notfound, whatever the node's mempool
// holds; the node's reject messages are dropped (Core sends none since
// BIP 61 was removed); its version message carries CoreUserAgent. The
// node announces the transactions its mempool takes to the connections
// that set the relay flag, as Core does, though on btcd's trickle (every
// 10 s by default) rather than Core's (5 s on average to inbound peers,
// on a Poisson timer: see CoreLikeTrickle). Everything else goes to and
// from the node unchanged.
type CoreLike struct {
	Addr   string
	srv    server
	target string
	net    wire.BitcoinNet
	lie    coreLie
	// trickle, if not nil, draws the delay to a connection's next
	// announcements (CoreLikeTrickle, CoreLikeTicks).
	trickle func() time.Duration

	mu     sync.Mutex
	conns  []*coreConn                    // the live connections, for false announcements
	echoed map[chainhash.Hash]*wire.MsgTx // an echo's transactions, at most maxCoreAnnounced
}

// coreLie is how a CoreLike lies, if at all.
type coreLie struct {
	// announce: the transactions the client announces are not passed on;
	// their txids are announced at once to the proxy's other
	// connections.
	announce bool
	// serve, if set, is served for any getdata of a transaction the
	// proxy announced falsely (notfound otherwise).
	serve *wire.MsgTx
	// echo: the proxy asks the client for the transactions it
	// announces, keeps them, announces them to its other connections
	// once it has them and serves them there.
	echo bool
}

// CoreLikeOption changes how a CoreLike behaves.
type CoreLikeOption func(*CoreLike)

// CoreLikeAnnouncesFalsely makes the proxy keep the transactions the
// client announces from the node and announce their txids at once to
// its other connections, as a node claiming to have accepted them; a
// getdata for one is answered with serve, or with notfound if serve is
// nil.
func CoreLikeAnnouncesFalsely(serve *wire.MsgTx) CoreLikeOption {
	return func(c *CoreLike) { c.lie = coreLie{announce: true, serve: serve} }
}

// CoreLikeEchoes makes the proxy take the transactions the client
// offers (it asks for them) and keep them from the node, then announce
// each to its other connections and serve it there, as a node that took
// it would: an echo, which no node behind it ever saw.
func CoreLikeEchoes() CoreLikeOption {
	return func(c *CoreLike) { c.lie = coreLie{announce: true, echo: true} }
}

// CoreLikeTrickle makes the proxy hold the node's announcements of
// transactions back and pass them on, on each connection, when a
// Poisson timer of mean fires, all those held at once: as Bitcoin Core
// announces to an inbound peer (mean 5 s, net_processing's
// INBOUND_INVENTORY_BROADCAST_INTERVAL), so that a transaction the node
// took is announced after a delay exponentially distributed of that mean
// (the timer is memoryless), and not after mean with probability
// e^-t/mean. Run the node with a short trickle (--trickleinterval) so
// that its own adds little. A transaction is served by getdata only
// once announced (see CoreLike).
func CoreLikeTrickle(mean time.Duration) CoreLikeOption {
	return func(c *CoreLike) {
		c.trickle = func() time.Duration { return time.Duration(rand.ExpFloat64() * float64(mean)) }
	}
}

// CoreLikeTicks is CoreLikeTrickle on a timer that fires every period,
// the first time period after the connection opened: a transaction is
// announced between 0 and period after the node (or a lie) announced
// it, at a time a test can tell beforehand.
func CoreLikeTicks(period time.Duration) CoreLikeOption {
	return func(c *CoreLike) { c.trickle = func() time.Duration { return period } }
}

// maxCoreAnnounced bounds the txids a CoreLike connection remembers as
// announced by the node.
const maxCoreAnnounced = 100_000

// coreConn is one client connection of a CoreLike.
type coreConn struct {
	c       *CoreLike
	client  net.Conn
	writeMu sync.Mutex // both directions write to the client

	mu        sync.Mutex
	announced map[chainhash.Hash]bool // txids the node (or a lie) announced here
	lied      map[chainhash.Hash]bool // txids a lie announced here
	held      []*wire.InvVect         // the node's announcements held back (CoreLikeTrickle)
}

// NewCoreLike starts a CoreLike on 127.0.0.1 in front of the btcd at
// target; it stops when the test ends.
func NewCoreLike(t testing.TB, target string, btcnet wire.BitcoinNet, opts ...CoreLikeOption) *CoreLike {
	t.Helper()
	c := &CoreLike{target: target, net: btcnet}
	for _, opt := range opts {
		opt(c)
	}
	c.Addr = c.srv.start(t, c.serve)
	return c
}

// serve pipes one client connection to the node.
func (c *CoreLike) serve(client net.Conn) {
	node, err := net.Dial("tcp", c.target)
	if err != nil || !c.srv.track(node) {
		client.Close()
		return
	}
	cc := &coreConn{c: c, client: client, announced: map[chainhash.Hash]bool{}, lied: map[chainhash.Hash]bool{}}
	c.mu.Lock()
	c.conns = append(c.conns, cc)
	c.mu.Unlock()
	defer c.forget(cc)
	closeBoth := func() { client.Close(); node.Close() }
	if c.trickle != nil {
		ended := make(chan struct{})
		defer close(ended)
		c.srv.run(func() { cc.trickle(ended) })
	}
	c.srv.run(func() {
		defer closeBoth()
		cc.fromNode(node)
	})
	defer closeBoth()
	cc.fromClient(node)
}

// forget drops cc from the live connections.
func (c *CoreLike) forget(cc *coreConn) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for i, x := range c.conns {
		if x == cc {
			c.conns = append(c.conns[:i], c.conns[i+1:]...)
			return
		}
	}
}

// others returns the live connections other than cc.
func (c *CoreLike) others(cc *coreConn) []*coreConn {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []*coreConn
	for _, x := range c.conns {
		if x != cc {
			out = append(out, x)
		}
	}
	return out
}

// fromNode passes the node's messages on: it drops rejects, renames the
// node in its version message, and records the transactions announced.
func (cc *coreConn) fromNode(node net.Conn) {
	for {
		cmd, frame, err := readFrame(node)
		if err != nil {
			return
		}
		switch cmd {
		case wire.CmdReject:
			continue
		case wire.CmdVersion, wire.CmdInv:
			m, err := decodeFrame(frame, cc.c.net)
			if err != nil {
				return
			}
			if v, ok := m.(*wire.MsgVersion); ok {
				v.UserAgent = CoreUserAgent
				frame = encodeFrame(v, cc.c.net)
			}
			if inv, ok := m.(*wire.MsgInv); ok {
				if cc.c.trickle != nil {
					inv = cc.hold(inv)
					if len(inv.InvList) == 0 {
						continue
					}
					frame = encodeFrame(inv, cc.c.net)
				}
				cc.recordAnnounced(inv.InvList, false)
			}
		}
		if cc.write(frame) != nil {
			return
		}
	}
}

// fromClient passes the client's messages to the node, answering a
// getdata for transactions not announced here with notfound.
func (cc *coreConn) fromClient(node net.Conn) {
	for {
		cmd, frame, err := readFrame(cc.client)
		if err != nil {
			return
		}
		switch cmd {
		case wire.CmdGetData:
			m, err := decodeFrame(frame, cc.c.net)
			if err != nil {
				return
			}
			pass, answers := cc.getData(m.(*wire.MsgGetData))
			for _, a := range answers {
				if cc.write(encodeFrame(a, cc.c.net)) != nil {
					return
				}
			}
			if len(pass.InvList) == 0 {
				continue
			}
			frame = encodeFrame(pass, cc.c.net)
		case wire.CmdInv:
			if !cc.c.lie.announce {
				break
			}
			m, err := decodeFrame(frame, cc.c.net)
			if err != nil {
				return
			}
			if cc.c.lie.echo {
				if cc.askFor(m.(*wire.MsgInv)) != nil {
					return
				}
				continue
			}
			cc.lieAbout(m.(*wire.MsgInv))
			continue
		case wire.CmdTx:
			if !cc.c.lie.echo {
				break
			}
			m, err := decodeFrame(frame, cc.c.net)
			if err != nil {
				return
			}
			cc.echo(m.(*wire.MsgTx))
			continue
		}
		if _, err := node.Write(frame); err != nil {
			return
		}
	}
}

// hold keeps back the transactions of the node's inv, for the Poisson
// timer (see trickle), and returns the rest of it, to pass on at once.
func (cc *coreConn) hold(inv *wire.MsgInv) *wire.MsgInv {
	rest := wire.NewMsgInv()
	cc.mu.Lock()
	defer cc.mu.Unlock()
	for _, iv := range inv.InvList {
		switch {
		case iv.Type != wire.InvTypeTx && iv.Type != wire.InvTypeWitnessTx:
			rest.AddInvVect(iv)
		case len(cc.held) < maxCoreAnnounced:
			cc.held = append(cc.held, iv)
		}
	}
	return rest
}

// trickle passes the held announcements on each time the timer fires
// (after c.trickle's delay), until ended is closed.
func (cc *coreConn) trickle(ended <-chan struct{}) {
	for {
		wait := time.NewTimer(cc.c.trickle())
		select {
		case <-ended:
			wait.Stop()
			return
		case <-wait.C:
		}
		cc.mu.Lock()
		held := cc.held
		cc.held = nil
		cc.mu.Unlock()
		for len(held) > 0 {
			inv := wire.NewMsgInv()
			n := min(len(held), wire.MaxInvPerMsg)
			inv.InvList, held = held[:n], held[n:]
			cc.recordAnnounced(inv.InvList, false)
			if cc.write(encodeFrame(inv, cc.c.net)) != nil {
				return
			}
		}
	}
}

// getData splits a client's getdata: what goes to the node, and the
// proxy's own answers (notfound for transactions not announced here, a
// lie's transaction for those it announced).
func (cc *coreConn) getData(m *wire.MsgGetData) (pass *wire.MsgGetData, answers []wire.Message) {
	pass = wire.NewMsgGetData()
	notFound := wire.NewMsgNotFound()
	cc.mu.Lock()
	defer cc.mu.Unlock()
	for _, iv := range m.InvList {
		isTx := iv.Type == wire.InvTypeTx || iv.Type == wire.InvTypeWitnessTx
		switch {
		case !isTx:
			pass.AddInvVect(iv)
		case cc.lied[iv.Hash] && cc.c.lie.serve != nil:
			answers = append(answers, cc.c.lie.serve)
		case cc.lied[iv.Hash] && cc.c.echoedTx(iv.Hash) != nil:
			answers = append(answers, cc.c.echoedTx(iv.Hash))
		case cc.announced[iv.Hash] && !cc.lied[iv.Hash]:
			pass.AddInvVect(iv)
		default:
			notFound.AddInvVect(iv)
		}
	}
	if len(notFound.InvList) > 0 {
		answers = append(answers, notFound)
	}
	return pass, answers
}

// recordAnnounced remembers the transactions of invs as announced here.
func (cc *coreConn) recordAnnounced(invs []*wire.InvVect, lie bool) {
	cc.mu.Lock()
	defer cc.mu.Unlock()
	for _, iv := range invs {
		if iv.Type != wire.InvTypeTx && iv.Type != wire.InvTypeWitnessTx || len(cc.announced) >= maxCoreAnnounced {
			continue
		}
		cc.announced[iv.Hash] = true
		if lie {
			cc.lied[iv.Hash] = true
		}
	}
}

// lieAbout announces the transactions of the client's inv to the
// proxy's other connections, which the node never sees: at once, or
// when their timer fires, as the node's (CoreLikeTrickle).
func (cc *coreConn) lieAbout(m *wire.MsgInv) {
	for _, other := range cc.c.others(cc) {
		other.recordAnnounced(m.InvList, true)
		if cc.c.trickle != nil {
			other.hold(m)
			continue
		}
		other.write(encodeFrame(m, cc.c.net))
	}
}

// askFor answers the client's inv with a getdata of its transactions,
// as a node that wants them.
func (cc *coreConn) askFor(m *wire.MsgInv) error {
	req := wire.NewMsgGetData()
	for _, iv := range m.InvList {
		if iv.Type == wire.InvTypeTx || iv.Type == wire.InvTypeWitnessTx {
			req.AddInvVect(wire.NewInvVect(wire.InvTypeWitnessTx, &iv.Hash))
		}
	}
	if len(req.InvList) == 0 {
		return nil
	}
	return cc.write(encodeFrame(req, cc.c.net))
}

// echo keeps tx, sent by the client, and announces it to the proxy's
// other connections.
func (cc *coreConn) echo(tx *wire.MsgTx) {
	txid := tx.TxHash()
	cc.c.mu.Lock()
	if cc.c.echoed == nil {
		cc.c.echoed = map[chainhash.Hash]*wire.MsgTx{}
	}
	if len(cc.c.echoed) >= maxCoreAnnounced {
		cc.c.mu.Unlock()
		return
	}
	cc.c.echoed[txid] = tx
	cc.c.mu.Unlock()
	inv := wire.NewMsgInv()
	inv.AddInvVect(wire.NewInvVect(wire.InvTypeTx, &txid))
	cc.lieAbout(inv)
}

// echoedTx returns the echo's transaction txid, or nil.
func (c *CoreLike) echoedTx(txid chainhash.Hash) *wire.MsgTx {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.echoed[txid]
}

// write sends a frame to the client.
func (cc *coreConn) write(frame []byte) error {
	cc.writeMu.Lock()
	defer cc.writeMu.Unlock()
	_, err := cc.client.Write(frame)
	return err
}
