package peer

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/btcsuite/btcd/chaincfg"
	btcpeer "github.com/btcsuite/btcd/peer"
	"github.com/btcsuite/btcd/wire"
)

// DefaultTimeout is the longest wait for one answer when Config.Timeout is
// zero.
const DefaultTimeout = 30 * time.Second

// Config says which node to talk to and how patiently.
type Config struct {
	// Addr is the node's host:port.
	Addr string
	// Params are the network's parameters (regtest, simnet, signet,
	// testnet3 or mainnet); headers are checked against them.
	Params *chaincfg.Params
	// Timeout bounds every single wait for the node (handshake, each
	// answer); zero means DefaultTimeout.
	Timeout time.Duration
	// Log, if set, receives one line per request and notable event.
	Log io.Writer
}

// Peer is a connection to one node after a completed handshake.
type Peer struct {
	cfg  Config
	bp   *btcpeer.Peer
	msgs chan wire.Message
	done chan struct{} // closed when the connection is gone

	readErr   atomic.Pointer[error] // last read error, for the disconnect message
	pingNonce atomic.Uint64         // nonce of the ping a session waits for
	opMu      sync.Mutex            // one operation at a time
	broken    atomic.Bool           // set after a protocol violation or timeout
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
	verack := make(chan struct{}, 1)
	pcfg := &btcpeer.Config{
		UserAgentName:    "spvfilter",
		UserAgentVersion: "0.1.0",
		ChainParams:      cfg.Params,
		// A light client asks for what it wants; it does not want the
		// node's transaction announcements.
		DisableRelayTx: true,
		Listeners: btcpeer.MessageListeners{
			OnVerAck: func(*btcpeer.Peer, *wire.MsgVerAck) {
				select {
				case verack <- struct{}{}:
				default:
				}
			},
			// Every message goes through OnRead: btcd's OnCFCheckpt
			// listener is never called (v0.24.2), and one reader keeps
			// the order in which messages arrived.
			OnRead: p.onRead,
		},
	}
	bp, err := btcpeer.NewOutboundPeer(pcfg, cfg.Addr)
	if err != nil {
		return nil, fmt.Errorf("peer: %w", err)
	}
	p.bp = bp
	dctx, cancel := context.WithTimeout(ctx, cfg.Timeout)
	defer cancel()
	conn, err := (&net.Dialer{}).DialContext(dctx, "tcp", cfg.Addr)
	if err != nil {
		return nil, &PeerError{Peer: cfg.Addr, Op: "connect", Err: err}
	}
	bp.AssociateConnection(conn)
	go func() {
		bp.WaitForDisconnect()
		close(p.done)
	}()
	select {
	case <-verack:
	case <-p.done:
		if e := p.readErr.Load(); e != nil && !errors.Is(*e, io.EOF) {
			return nil, p.disconnected("version handshake")
		}
		return nil, p.errorf("version handshake", "%w: connection closed during the handshake (is the node on %s?)",
			ErrDisconnected, cfg.Params.Name)
	case <-dctx.Done():
		p.Close()
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, p.errorf("version handshake", "%w: no verack within %v", ErrStalled, cfg.Timeout)
	}
	p.logf("connected to %s (%s, services %v, height %d)", cfg.Addr, bp.UserAgent(), bp.Services(), bp.LastBlock())
	return p, nil
}

// onRead forwards the messages the sessions consume; everything else
// (pings, invs, addr) btcd's peer handles or the client ignores.
func (p *Peer) onRead(_ *btcpeer.Peer, _ int, msg wire.Message, err error) {
	if err != nil {
		p.readErr.Store(&err)
		return
	}
	switch m := msg.(type) {
	case *wire.MsgHeaders, *wire.MsgCFCheckpt, *wire.MsgCFHeaders, *wire.MsgCFilter,
		*wire.MsgMerkleBlock, *wire.MsgTx, *wire.MsgBlock, *wire.MsgNotFound:
	case *wire.MsgPong:
		// Only the pong a session waits for: btcd's own keep-alive
		// pings are answered too, and nobody reads those.
		if m.Nonce != p.pingNonce.Load() {
			return
		}
	default:
		return
	}
	select {
	case p.msgs <- msg:
	case <-p.done:
	}
}

// Addr returns the peer's address.
func (p *Peer) Addr() string { return p.cfg.Addr }

// Services returns the services the node advertised in its version message.
func (p *Peer) Services() wire.ServiceFlag { return p.bp.Services() }

// LastBlock returns the height the node announced in its version message.
func (p *Peer) LastBlock() int32 { return p.bp.LastBlock() }

// BytesReceived returns the bytes read from the node so far.
func (p *Peer) BytesReceived() uint64 { return p.bp.BytesReceived() }

// Close disconnects and waits until the connection is torn down.
func (p *Peer) Close() error {
	p.bp.Disconnect()
	p.bp.WaitForDisconnect()
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

// fail records a protocol violation: the connection is dropped, since
// later answers on it could belong to the failed request.
func (p *Peer) fail(op, format string, args ...any) error {
	err := p.errorf(op, format, args...)
	p.logf("%v", err)
	p.broken.Store(true)
	p.bp.Disconnect()
	return err
}

// begin starts an operation: it takes the operation lock and refuses if the
// connection is gone. The caller must call the returned function.
func (p *Peer) begin(op string) (func(), error) {
	p.opMu.Lock()
	select {
	case <-p.done:
		p.opMu.Unlock()
		return nil, p.errorf(op, "%w: connection already closed", ErrDisconnected)
	default:
	}
	if p.broken.Load() {
		p.opMu.Unlock()
		return nil, p.errorf(op, "%w: connection dropped after an earlier error", ErrDisconnected)
	}
	return p.opMu.Unlock, nil
}

// send queues msg and waits until it is written.
func (p *Peer) send(ctx context.Context, op string, msg wire.Message) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	p.logf("send %s", msg.Command())
	written := make(chan struct{}, 1)
	p.bp.QueueMessage(msg, written)
	select {
	case <-written:
		return nil
	case <-p.done:
		return p.disconnected(op)
	case <-ctx.Done():
		// The message may still go out and its answer would be read by
		// the next operation: drop the connection.
		p.broken.Store(true)
		p.bp.Disconnect()
		return ctx.Err()
	case <-time.After(p.cfg.Timeout):
		return p.fail(op, "%w: could not send %s within %v", ErrStalled, msg.Command(), p.cfg.Timeout)
	}
}

// recv returns the next forwarded message for which want (if not nil)
// is true, waiting at most the timeout. Other messages are dropped and do
// not restart the timeout, so a node sending unrequested messages cannot
// hold a wait open.
func (p *Peer) recv(ctx context.Context, op string, want func(wire.Message) bool) (wire.Message, error) {
	if err := ctx.Err(); err != nil {
		p.broken.Store(true)
		p.bp.Disconnect()
		return nil, err
	}
	timer := time.NewTimer(p.cfg.Timeout)
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
			// The answer may still come and would be read by the
			// next operation: drop the connection.
			p.broken.Store(true)
			p.bp.Disconnect()
			return nil, ctx.Err()
		case <-timer.C:
			return nil, p.fail(op, "%w: no answer within %v", ErrStalled, p.cfg.Timeout)
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

func (p *Peer) disconnected(op string) error {
	if e := p.readErr.Load(); e != nil && !errors.Is(*e, io.EOF) && !errors.Is(*e, net.ErrClosed) {
		return p.errorf(op, "%w: %v", ErrDisconnected, *e)
	}
	return p.errorf(op, "%w: connection closed by the node", ErrDisconnected)
}

// need refuses an operation the node did not advertise a service for.
func (p *Peer) need(op string, flag wire.ServiceFlag, name string) error {
	if p.Services()&flag != flag {
		return p.errorf(op, "%w: %s not advertised (services %v)", ErrMissingService, name, p.Services())
	}
	return nil
}
