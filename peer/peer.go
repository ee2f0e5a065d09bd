package peer

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/btcsuite/btcd/chaincfg"
	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/btcsuite/btcd/wire"
)

// DefaultTimeout bounds the handshake and each request's whole answer when
// Config.Timeout is zero.
const DefaultTimeout = 30 * time.Second

// UserAgent is what the client calls itself in its version message.
const UserAgent = "/spvfilter:0.2.0/"

// minProtocolVersion is the oldest protocol a node may speak: BIP 111
// (NODE_BLOOM) and BIP 130, below which neither filter protocol exists.
const minProtocolVersion = wire.SendHeadersVersion

// Config says which node to talk to and how patiently.
type Config struct {
	// Addr is the node's host:port.
	Addr string
	// Params are the network's parameters; the network magic of every
	// message is checked against them.
	Params *chaincfg.Params
	// Timeout bounds the handshake and the whole answer to each request
	// (all 1,000 filters of a getcfilters, say), however the node paces
	// it; zero means DefaultTimeout. Nothing else cuts a request short.
	Timeout time.Duration
	// Log, if set, receives one line per request and notable event.
	Log io.Writer
	// OnHeaders, if set, is called during SyncHeaders after each batch of
	// headers, with the chain's height and the height the node announced.
	OnHeaders func(height, announced int32)
}

// Peer is a connection to one node after a completed handshake. Its
// request methods may be called from several goroutines; they run one at
// a time.
type Peer struct {
	cfg    Config
	conn   net.Conn
	remote *wire.MsgVersion
	pver   atomic.Uint32 // negotiated protocol version

	msgs     chan wire.Message
	done     chan struct{} // closed when the connection is gone
	doneOnce sync.Once
	readErr  atomic.Pointer[error] // why the read loop ended
	received atomic.Uint64

	offerMu sync.Mutex
	offers  map[chainhash.Hash]*offer // transactions announced, by txid

	writeMu   sync.Mutex
	pingNonce atomic.Uint64 // nonce of the ping a request waits for
	opMu      sync.Mutex    // one request at a time
	broken    atomic.Bool   // set after a protocol violation or timeout
}

// Dial connects to cfg.Addr and completes the version handshake.
func Dial(ctx context.Context, cfg Config) (*Peer, error) {
	if cfg.Params == nil {
		return nil, errors.New("peer: Config.Params is nil")
	}
	if _, _, err := net.SplitHostPort(cfg.Addr); err != nil {
		return nil, fmt.Errorf("peer: address %q: %w", cfg.Addr, err)
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = DefaultTimeout
	}
	p := &Peer{
		cfg:  cfg,
		msgs: make(chan wire.Message, 256),
		done: make(chan struct{}),
	}
	deadline := time.Now().Add(cfg.Timeout)
	dctx, cancel := context.WithDeadline(ctx, deadline)
	defer cancel()
	conn, err := (&net.Dialer{}).DialContext(dctx, "tcp", cfg.Addr)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, &PeerError{Peer: cfg.Addr, Op: "connect", Err: fmt.Errorf("%w: %v", ErrDisconnected, err)}
	}
	p.conn = conn
	p.pver.Store(wire.ProtocolVersion)
	go p.readLoop()
	if err := p.handshake(ctx, deadline); err != nil {
		p.Close()
		return nil, err
	}
	p.logf("connected to %s (%s, protocol %d, services %v, height %d)",
		cfg.Addr, p.remote.UserAgent, p.remote.ProtocolVersion, p.Services(), p.LastBlock())
	return p, nil
}

// handshake sends our version, waits for the node's version and verack,
// and acknowledges its version.
func (p *Peer) handshake(ctx context.Context, deadline time.Time) error {
	const op = "version handshake"
	me := wire.NewNetAddressIPPort(net.IPv4zero, 0, 0)
	you := wire.NewNetAddressIPPort(net.IPv4zero, 0, 0)
	if tcp, ok := p.conn.RemoteAddr().(*net.TCPAddr); ok {
		you = wire.NewNetAddressIPPort(tcp.IP, uint16(tcp.Port), 0)
	}
	v := wire.NewMsgVersion(me, you, rand.Uint64(), 0)
	v.UserAgent = UserAgent
	v.ProtocolVersion = int32(wire.ProtocolVersion)
	// A light client asks for what it wants; it does not want the node's
	// transaction announcements.
	v.DisableRelayTx = true
	if err := p.write(ctx, op, v, deadline); err != nil {
		return err
	}
	gotVerAck := false
	for p.remote == nil || !gotVerAck {
		m, err := p.recv(ctx, op, deadline, func(m wire.Message) bool {
			return is[*wire.MsgVersion](m) || is[*wire.MsgVerAck](m)
		})
		if err != nil {
			if errors.Is(err, ErrDisconnected) && p.remote == nil {
				return p.errorf(op, "%w: connection closed during the handshake (is the node on %s?)", ErrDisconnected, p.cfg.Params.Name)
			}
			return err
		}
		switch m := m.(type) {
		case *wire.MsgVersion:
			if p.remote != nil {
				return p.fail(op, "%w: second version message", ErrProtocol)
			}
			if uint32(m.ProtocolVersion) < minProtocolVersion {
				return p.fail(op, "%w: protocol version %d, at least %d needed", ErrProtocol, m.ProtocolVersion, minProtocolVersion)
			}
			p.remote = m
			p.pver.Store(min(wire.ProtocolVersion, uint32(m.ProtocolVersion)))
			if err := p.write(ctx, op, wire.NewMsgVerAck(), deadline); err != nil {
				return err
			}
		case *wire.MsgVerAck:
			if p.remote == nil {
				return p.fail(op, "%w: verack before version", ErrProtocol)
			}
			gotVerAck = true
		}
	}
	return nil
}

// readLoop reads messages until the connection ends, answers pings, and
// forwards what requests consume. Unknown commands are skipped, as the
// protocol allows; any other decoding failure ends the connection.
func (p *Peer) readLoop() {
	defer p.closeConn()
	for {
		n, msg, _, err := wire.ReadMessageWithEncodingN(p.conn, p.pver.Load(), p.cfg.Params.Net, wire.WitnessEncoding)
		p.received.Add(uint64(n))
		if errors.Is(err, wire.ErrUnknownMessage) {
			continue
		}
		if err != nil {
			p.readErr.Store(&err)
			return
		}
		switch m := msg.(type) {
		case *wire.MsgPing:
			// Written from its own goroutine: a blocked write must not
			// stop the reading.
			go p.write(context.Background(), "pong", wire.NewMsgPong(m.Nonce), time.Now().Add(p.cfg.Timeout))
			continue
		case *wire.MsgGetData:
			// The node asks for transactions we announced; anything
			// else it asks for we do not serve.
			p.serveOffers(m)
			continue
		case *wire.MsgVersion, *wire.MsgVerAck, *wire.MsgHeaders, *wire.MsgCFCheckpt, *wire.MsgCFHeaders,
			*wire.MsgCFilter, *wire.MsgMerkleBlock, *wire.MsgTx, *wire.MsgBlock, *wire.MsgNotFound,
			*wire.MsgInv:
		case *wire.MsgPong:
			if m.Nonce != p.pingNonce.Load() {
				continue
			}
		default:
			continue
		}
		select {
		case p.msgs <- msg:
		case <-p.done:
			return
		}
	}
}

func (p *Peer) closeConn() {
	p.doneOnce.Do(func() {
		p.conn.Close()
		close(p.done)
	})
}

// write sends msg, giving up at deadline.
func (p *Peer) write(ctx context.Context, op string, msg wire.Message, deadline time.Time) error {
	if err := ctx.Err(); err != nil {
		p.drop()
		return err
	}
	p.logf("send %s", msg.Command())
	p.writeMu.Lock()
	defer p.writeMu.Unlock()
	p.conn.SetWriteDeadline(deadline)
	_, err := wire.WriteMessageWithEncodingN(p.conn, msg, p.pver.Load(), p.cfg.Params.Net, wire.WitnessEncoding)
	if err == nil {
		return nil
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return p.fail(op, "%w: could not send %s within %v", ErrStalled, msg.Command(), p.cfg.Timeout)
	}
	p.closeConn()
	return p.disconnected(op)
}

// Addr returns the peer's address.
func (p *Peer) Addr() string { return p.cfg.Addr }

// Services returns the services the node advertised in its version message.
func (p *Peer) Services() wire.ServiceFlag { return p.remote.Services }

// LastBlock returns the height the node announced in its version message.
func (p *Peer) LastBlock() int32 { return p.remote.LastBlock }

// UserAgent returns the user agent the node announced.
func (p *Peer) UserAgent() string { return p.remote.UserAgent }

// ProtocolVersion returns the negotiated protocol version.
func (p *Peer) ProtocolVersion() uint32 { return p.pver.Load() }

// BytesReceived returns the bytes read from the node so far.
func (p *Peer) BytesReceived() uint64 { return p.received.Load() }

// Done is closed when the connection is gone.
func (p *Peer) Done() <-chan struct{} { return p.done }

// Close disconnects. It is safe to call more than once.
func (p *Peer) Close() error {
	p.closeConn()
	return nil
}

func (p *Peer) logf(format string, args ...any) {
	if p.cfg.Log != nil {
		fmt.Fprintf(p.cfg.Log, format+"\n", args...)
	}
}

// errorf builds a *PeerError for op.
func (p *Peer) errorf(op, format string, args ...any) *PeerError {
	return &PeerError{Peer: p.cfg.Addr, Op: op, Err: fmt.Errorf(format, args...)}
}

// drop ends the connection after a request was abandoned: a late answer
// would be taken for the next request's.
func (p *Peer) drop() {
	p.broken.Store(true)
	p.closeConn()
}

// fail records a protocol violation or a timeout and drops the connection.
func (p *Peer) fail(op, format string, args ...any) error {
	err := p.errorf(op, format, args...)
	p.logf("%v", err)
	p.drop()
	return err
}

// begin starts a request: it takes the request lock and refuses if the
// connection is gone. The caller must call the returned function.
func (p *Peer) begin(op string) (func(), error) {
	p.opMu.Lock()
	select {
	case <-p.done:
		p.opMu.Unlock()
		if p.broken.Load() {
			return nil, p.errorf(op, "%w: connection dropped after an earlier error", ErrDisconnected)
		}
		return nil, p.disconnected(op)
	default:
	}
	return p.opMu.Unlock, nil
}

// send writes a request message; the request's answer is due by deadline.
func (p *Peer) send(ctx context.Context, op string, msg wire.Message, deadline time.Time) error {
	return p.write(ctx, op, msg, deadline)
}

// deadline returns the time by which a request's whole answer is due.
func (p *Peer) deadline() time.Time { return time.Now().Add(p.cfg.Timeout) }

// recv returns the next forwarded message for which want (if not nil) is
// true, waiting until deadline. Other messages are dropped and do not move
// the deadline, so a node sending unrequested or trickling messages cannot
// hold a request open.
func (p *Peer) recv(ctx context.Context, op string, deadline time.Time, want func(wire.Message) bool) (wire.Message, error) {
	if err := ctx.Err(); err != nil {
		p.drop()
		return nil, err
	}
	timer := time.NewTimer(time.Until(deadline))
	defer timer.Stop()
	for {
		var m wire.Message
		select {
		case m = <-p.msgs:
		case <-p.done:
			select {
			case m = <-p.msgs:
			default:
				return nil, p.disconnected(op)
			}
		case <-ctx.Done():
			p.drop()
			return nil, ctx.Err()
		case <-timer.C:
			return nil, p.fail(op, "%w: no complete answer within %v", ErrStalled, p.cfg.Timeout)
		}
		if want == nil || want(m) {
			return m, nil
		}
	}
}

// is returns a recv filter accepting the messages of type T.
func is[T wire.Message](m wire.Message) bool {
	_, ok := m.(T)
	return ok
}

// disconnected names why the connection is gone: closed by the node, or a
// message that broke the protocol.
func (p *Peer) disconnected(op string) error {
	if p.broken.Load() {
		return p.errorf(op, "%w: connection dropped after an earlier error", ErrDisconnected)
	}
	if e := p.readErr.Load(); e != nil && !errors.Is(*e, io.EOF) && !errors.Is(*e, net.ErrClosed) && !errors.Is(*e, io.ErrUnexpectedEOF) {
		var me *wire.MessageError
		if errors.As(*e, &me) {
			return p.errorf(op, "%w: undecodable message: %v", ErrProtocol, *e)
		}
		return p.errorf(op, "%w: %v", ErrDisconnected, *e)
	}
	return p.errorf(op, "%w: connection closed by the node", ErrDisconnected)
}

// need refuses a request the node did not advertise a service for.
func (p *Peer) need(op string, flag wire.ServiceFlag, name string) error {
	if p.Services()&flag != flag {
		return p.errorf(op, "%w: %s not advertised (services %v)", ErrMissingService, name, p.Services())
	}
	return nil
}
