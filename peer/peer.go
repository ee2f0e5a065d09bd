package peer

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode"
	"unicode/utf8"

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
	// Addr is the node's host:port. The host may be a name (or, through
	// a SOCKS5 proxy, an onion address): Dial resolves it.
	Addr string
	// Params are the network's parameters; the network magic of every
	// message is checked against them.
	Params *chaincfg.Params
	// Timeout bounds the handshake and the whole answer to each request
	// (all 1,000 filters of a getcfilters, say), however the node paces
	// it; zero means DefaultTimeout. Nothing else cuts a request short.
	// It also bounds how long a message may take to come whole once its
	// header came, with or without a request (ErrStalled ends the
	// connection), so that a node cannot hold our buffer for a payload
	// it holds back.
	Timeout time.Duration
	// Log, if set, receives one line per request and notable event.
	Log io.Writer
	// OnHeaders, if set, is called during SyncHeaders after each batch of
	// headers, with the chain's height and the height the node announced.
	OnHeaders func(height, announced int32)

	// Dial, if set, opens the connection instead of a plain TCP dial:
	// see SOCKS5. Nothing else is tried when it fails.
	Dial DialFunc
	// Services are the services advertised in our version message; zero
	// means wire.SFNodeWitness. A node sends witness data (and asks for
	// the witness of the transactions we offer) only to peers that
	// advertise NODE_WITNESS.
	Services wire.ServiceFlag
	// RelayTx asks the node to announce the transactions that enter its
	// mempool (the version message's relay flag). A light client that
	// only asks for what it wants leaves it false.
	RelayTx bool
	// OnAnnounce, if set, receives the blocks and transactions the node
	// announces (inv, unsolicited headers). It is called from one
	// goroutine of the connection, never beside itself or OnAddresses,
	// and once more after the connection ends if announcements were
	// left; what arrives while it runs is merged, the newest 1,000 block
	// and 1,000 transaction hashes kept.
	OnAnnounce func(Announcement)
	// OnAddresses, if set, receives the addresses the node gossips (addr,
	// addrv2; not GetAddr's answer), as OnAnnounce its announcements:
	// the newest 1,000 are kept while it runs.
	OnAddresses func([]*wire.NetAddressV2)
}

// Peer is a connection to one node after a completed handshake. Its
// request methods may be called from several goroutines; they run one at
// a time.
type Peer struct {
	cfg    Config
	conn   net.Conn
	frames frameReader // the read loop's
	held   heldWant    // the read loop's
	// barriers are the pings sent after requests whose pongs may still
	// come (see the package documentation).
	barriers barriers
	remote   *wire.MsgVersion
	nonce    uint64        // our version message's, set once before it is sent
	pver     atomic.Uint32 // negotiated protocol version
	addrV2   atomic.Bool   // the node sent sendaddrv2

	done     chan struct{} // closed when the connection is gone
	doneOnce sync.Once
	cause    atomic.Pointer[error] // why we ended the connection (flooding, a failed write)
	readErr  atomic.Pointer[error] // why the read loop ended
	received atomic.Uint64
	sent     atomic.Uint64

	req     atomic.Pointer[request] // the request in flight
	op      chan struct{}           // one request at a time: held while full
	dropped atomic.Int32            // why a request dropped the connection (dropBroken, dropAbandoned), the first
	budget  budget                  // the read loop's
	latency atomic.Int64            // moving average of answer times, nanoseconds

	w     writer
	notes *notifier // nil without callbacks

	offerMu sync.Mutex
	offers  map[chainhash.Hash]*offer // transactions announced, by txid

	rejectMu    sync.Mutex
	rejectWaits map[chainhash.Hash]chan *RejectError // Broadcasts waiting, by txid

	logMu sync.Mutex
}

// readBufferSize is the read loop's buffer: room for what a node sends
// in the wait before a read of a getcfilters answer (gatherFor) and
// while the read's filters are handed on, so that one read takes it all
// and the reader never falls behind. A btcd node on the same machine
// writes filters at about 47 MB/s: 256 KiB, less than it writes in 5 ms
// and a read's hand-off, left the reader a buffer behind, and one node's
// 20,000 filters took 0.96 s to read where the node served them in 0.58
// s; with 1 MiB, 0.56 s (peer/README.md, "One request at a time").
const readBufferSize = 1 << 20

// newPeer starts the loops of a connection.
func newPeer(cfg Config, conn net.Conn) *Peer {
	p := &Peer{
		cfg:  cfg,
		conn: conn,
		done: make(chan struct{}),
		op:   make(chan struct{}, 1),
	}
	p.frames = frameReader{br: bufio.NewReaderSize(conn, readBufferSize), net: cfg.Params.Net, conn: conn, timeout: cfg.Timeout}
	p.w.init()
	p.pver.Store(wire.ProtocolVersion)
	if cfg.OnAnnounce != nil || cfg.OnAddresses != nil {
		p.notes = newNotifier()
		go p.notifyLoop()
	}
	go p.readLoop()
	go p.writeLoop()
	return p
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
	if cfg.Services == 0 {
		cfg.Services = wire.SFNodeWitness
	}
	dial := cfg.Dial
	if dial == nil {
		dial = (&net.Dialer{}).DialContext
	}
	deadline := time.Now().Add(cfg.Timeout)
	dctx, cancel := context.WithDeadline(ctx, deadline)
	defer cancel()
	conn, err := dial(dctx, "tcp", cfg.Addr)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, &PeerError{Peer: cfg.Addr, Op: OpConnect, Err: fmt.Errorf("%w: %w", ErrDisconnected, err)}
	}
	p := newPeer(cfg, conn)
	if err := p.handshake(ctx, deadline); err != nil {
		p.Close()
		return nil, err
	}
	p.logf("connected to %s (%s, protocol %d, services %v, height %d)",
		cfg.Addr, p.remote.UserAgent, p.remote.ProtocolVersion, p.Services(), p.LastBlock())
	return p, nil
}

// handshake sends our version, waits for the node's version, announces
// addrv2 support (BIP 155) to a node that speaks it, acknowledges its
// version and waits for its verack.
func (p *Peer) handshake(ctx context.Context, deadline time.Time) error {
	const op = OpHandshake
	end, err := p.beginRequest(context.Background(), op, false)
	if err != nil {
		return err
	}
	defer end()
	if err := p.send(ctx, op, p.version(), deadline); err != nil {
		return err
	}
	gotVerAck := false
	for p.remote == nil || !gotVerAck {
		m, err := p.recv(ctx, op, deadline, func(m wire.Message) bool {
			return is[*wire.MsgVersion](m) || is[*wire.MsgVerAck](m) || is[*wire.MsgSendAddrV2](m)
		})
		if err != nil {
			if errors.Is(err, ErrDisconnected) && p.remote == nil && p.cause.Load() == nil {
				return p.errorf(op, "%w: connection closed during the handshake (is the node on %s?)", ErrDisconnected, p.cfg.Params.Name)
			}
			return err
		}
		switch m := m.(type) {
		case *wire.MsgVersion:
			if p.remote != nil {
				return p.fail(op, "%w: second version message", ErrProtocol)
			}
			if m.Nonce == p.nonce {
				return p.fail(op, "%w (nonce %016x): an echo service or this client itself, no node", ErrEcho, m.Nonce)
			}
			if uint32(m.ProtocolVersion) < minProtocolVersion {
				return p.fail(op, "%w: protocol version %d, at least %d needed", ErrProtocol, m.ProtocolVersion, minProtocolVersion)
			}
			p.remote = m
			p.pver.Store(min(wire.ProtocolVersion, uint32(m.ProtocolVersion)))
			// sendaddrv2 goes between version and verack, or not
			// at all.
			if p.pver.Load() >= wire.AddrV2Version {
				if err := p.send(ctx, op, wire.NewMsgSendAddrV2(), deadline); err != nil {
					return err
				}
			}
			if err := p.send(ctx, op, wire.NewMsgVerAck(), deadline); err != nil {
				return err
			}
		case *wire.MsgSendAddrV2:
			if gotVerAck {
				return p.fail(op, "%w: sendaddrv2 after verack", ErrProtocol)
			}
			p.addrV2.Store(true)
		case *wire.MsgVerAck:
			if p.remote == nil {
				return p.fail(op, "%w: verack before version", ErrProtocol)
			}
			gotVerAck = true
		}
	}
	return nil
}

// version is our version message: no address of ours, the node's as we
// know it, our services and whether we want its transactions.
func (p *Peer) version() *wire.MsgVersion {
	me := wire.NewNetAddressIPPort(net.IPv4zero, 0, 0)
	you := wire.NewNetAddressIPPort(net.IPv4zero, 0, 0)
	host, port, _ := net.SplitHostPort(p.cfg.Addr)
	portNum, _ := strconv.ParseUint(port, 10, 16)
	if ip := net.ParseIP(host); ip != nil {
		you = wire.NewNetAddressIPPort(ip, uint16(portNum), 0)
	} else if tcp, ok := p.conn.RemoteAddr().(*net.TCPAddr); ok && p.cfg.Dial == nil {
		// A name we resolved ourselves; through a proxy the remote
		// address is the proxy's, and not for the node to know.
		you = wire.NewNetAddressIPPort(tcp.IP, uint16(tcp.Port), 0)
	}
	p.nonce = rand.Uint64()
	v := wire.NewMsgVersion(me, you, p.nonce, 0)
	v.UserAgent = UserAgent
	v.ProtocolVersion = int32(wire.ProtocolVersion)
	v.Services = p.cfg.Services
	v.DisableRelayTx = !p.cfg.RelayTx
	return v
}

// Addr returns the peer's address.
func (p *Peer) Addr() string { return p.cfg.Addr }

// Services returns the services the node advertised in its version message.
func (p *Peer) Services() wire.ServiceFlag { return p.remote.Services }

// LastBlock returns the height the node announced in its version message.
func (p *Peer) LastBlock() int32 { return p.remote.LastBlock }

// UserAgent returns the user agent the node announced.
// It is the node's own text: control characters are replaced (see
// Printable), so that it cannot forge lines where it is printed.
func (p *Peer) UserAgent() string { return Printable(p.remote.UserAgent) }

// Printable returns s, which a node sent, with every character that is not
// printable (newlines, escape sequences, invalid UTF-8) replaced by '?',
// so that printing it cannot forge lines of output.
func Printable(s string) string {
	return strings.Map(func(r rune) rune {
		if r == utf8.RuneError || !unicode.IsPrint(r) {
			return '?'
		}
		return r
	}, s)
}

// ProtocolVersion returns the negotiated protocol version.
func (p *Peer) ProtocolVersion() uint32 { return p.pver.Load() }

// BytesReceived returns the bytes read from the node so far.
func (p *Peer) BytesReceived() uint64 { return p.received.Load() }

// BytesSent returns the bytes written to the node so far.
func (p *Peer) BytesSent() uint64 { return p.sent.Load() }

// Done is closed when the connection is gone.
func (p *Peer) Done() <-chan struct{} { return p.done }

// Latency returns a moving average of how long the node took to complete
// its answers to requests (from the request to the last message of the
// answer, over all rounds of a request), or zero before the first. A node
// that delays its answers shows here long before it exceeds the timeout.
func (p *Peer) Latency() time.Duration { return time.Duration(p.latency.Load()) }

// observe adds one request's answer time to the moving average, which
// gives each new answer a quarter of the weight.
func (p *Peer) observe(d time.Duration) {
	old := p.latency.Load()
	if old == 0 {
		p.latency.Store(int64(max(d, 1)))
		return
	}
	p.latency.Store(old + (int64(d)-old)/4)
}

// Err returns why the connection ended, as a *PeerError, or nil while it
// is open.
func (p *Peer) Err() error {
	select {
	case <-p.done:
		return p.disconnected("connection")
	default:
		return nil
	}
}

// Close disconnects. It is safe to call more than once.
func (p *Peer) Close() error {
	p.closeConn()
	return nil
}

// closeConn ends the connection and its loops.
func (p *Peer) closeConn() {
	p.doneOnce.Do(func() {
		p.conn.Close()
		close(p.done)
	})
}

// closeWith ends the connection for cause, an error wrapping one of the
// sentinel errors, unless it had ended already.
func (p *Peer) closeWith(cause error) {
	select {
	case <-p.done:
		return
	default:
	}
	if p.cause.CompareAndSwap(nil, &cause) {
		p.logf("peer %s: %v", p.cfg.Addr, cause)
	}
	p.closeConn()
}

func (p *Peer) logf(format string, args ...any) {
	if p.cfg.Log != nil {
		p.logMu.Lock()
		defer p.logMu.Unlock()
		fmt.Fprintf(p.cfg.Log, format+"\n", args...)
	}
}

// errorf builds a *PeerError for op.
func (p *Peer) errorf(op, format string, args ...any) *PeerError {
	return &PeerError{Peer: p.cfg.Addr, Op: op, Err: fmt.Errorf(format, args...)}
}

// Why a request dropped the connection (Peer.dropped): the node broke
// the protocol or did not answer in time, or this side abandoned the
// request (its context ended, or its caller stopped taking the answer).
const (
	dropBroken int32 = iota + 1
	dropAbandoned
)

// drop ends the connection after a request was abandoned: a late answer
// would be taken for the next request's. The node did nothing wrong: a
// request over the dropped connection fails with ErrAbandoned.
func (p *Peer) drop() {
	p.dropped.CompareAndSwap(0, dropAbandoned)
	p.closeConn()
}

// fail records a protocol violation or a timeout and drops the connection.
func (p *Peer) fail(op, format string, args ...any) error {
	err := p.errorf(op, format, args...)
	p.logf("%v", err)
	p.dropped.CompareAndSwap(0, dropBroken)
	p.closeConn()
	return err
}

// damaged fails op with ErrDamaged: what the format and args name does
// not match its payload checksum.
func (p *Peer) damaged(op, format string, args ...any) error {
	return p.fail(op, "%w: %s does not match its payload checksum", ErrDamaged, fmt.Sprintf(format, args...))
}

// request is the request in flight. The read loop offers it every message
// that is not always handled (pings, getdata): once the request told it
// what it wants (await), the read loop runs want on each message itself
// and passes on the one taken, so that an answer costs one hand-off at
// most; what is not taken is unsolicited.
type request struct {
	wants chan wanted   // what the request waits for, one at a time
	offer chan delivery // the message taken, to the request
	ended chan struct{}
	took  delivery // the last message taken, for intact

	// timer fires at timerAt, the deadline of the request's recv calls
	// (one for all its messages, as a rule).
	timer   *time.Timer
	timerAt time.Time
	// within is the time the request's answer is given, when not the
	// timeout (an answer to several messages, see GetCFilters).
	within time.Duration

	// The request's own goroutine keeps its answer time: a round runs
	// from its first send to the last message taken before the next.
	start, last time.Time
	busy        time.Duration // the completed rounds
}

// sent notes a message sent at now.
func (r *request) sent(now time.Time) {
	if !r.start.IsZero() && r.last.IsZero() {
		return // a round still waiting for its answer
	}
	if !r.last.IsZero() {
		r.busy += r.last.Sub(r.start)
	}
	r.start, r.last = now, time.Time{}
}

// abandoned notes that the caller gave up on the round in flight at now:
// the node had not answered by then, which is its answer time so far, so
// that a node whose answers trickle in shows in Latency even when none of
// an answer reached the request (a getcfilters' filters are taken on the
// read loop) before it was given up.
func (r *request) abandoned(now time.Time) {
	if !r.start.IsZero() && r.last.IsZero() {
		r.last = now
	}
}

// answerTime is how long the node took over all rounds; false when it
// answered nothing.
func (r *request) answerTime() (time.Duration, bool) {
	d := r.busy
	if !r.last.IsZero() {
		d += r.last.Sub(r.start)
	}
	return d, d > 0
}

// begin starts a request: it takes the request lock, refuses if the
// connection is gone, and registers the request with the read loop. It
// waits for the lock (another request holding the connection) only
// while ctx is not done, and returns ctx's error then: nothing was sent,
// so the connection stays. The caller must call the returned function,
// which adds the node's answer time to Latency.
func (p *Peer) begin(ctx context.Context, op string) (func(), error) {
	return p.beginRequest(ctx, op, true)
}

// beginRequest is begin, leaving Latency alone unless timed.
func (p *Peer) beginRequest(ctx context.Context, op string, timed bool) (func(), error) {
	if err := ctx.Err(); err != nil {
		return nil, err // not left to the select's chance when the lock is free
	}
	select {
	case p.op <- struct{}{}:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	select {
	case <-p.done:
		<-p.op
		return nil, p.disconnected(op)
	default:
	}
	r := &request{wants: make(chan wanted, 1), offer: make(chan delivery, 1), ended: make(chan struct{})}
	p.req.Store(r)
	return func() {
		p.req.Store(nil)
		close(r.ended)
		if r.timer != nil {
			r.timer.Stop()
		}
		if d, ok := r.answerTime(); ok && timed {
			p.observe(d)
		}
		<-p.op
	}, nil
}

// send writes a request message; the request's answer is due by deadline.
// Ended by ctx before the writer took its first message (waiting for the
// queue or in it), a request keeps the connection: nothing of it was sent.
func (p *Peer) send(ctx context.Context, op string, msg wire.Message, deadline time.Time) error {
	return p.sendAs(ctx, op, msg, deadline, abandonFirst)
}

// sendAs is send; a request's first message, ended by ctx, does what
// first says (abandonFirst or abandonHeld, see abandon); a later one
// drops the connection.
func (p *Peer) sendAs(ctx context.Context, op string, msg wire.Message, deadline time.Time, first abandon) error {
	r := p.req.Load()
	how := abandonDrops
	switch {
	case r != nil && r.start.IsZero():
		how = first
		if how == abandonFirst && finishesBegun(ctx) {
			how = abandonHeld // taken by the writer, the request goes on
		}
	case r != nil:
		var stop func()
		ctx, stop = goesOn(ctx) // a request under way goes on
		defer stop()
	}
	if err := p.writeFirst(ctx, op, msg, deadline, how); err != nil {
		return err
	}
	if r != nil {
		r.sent(time.Now())
	}
	return nil
}

// FinishBegun returns a context, derived from ctx, under which a
// request that has sent anything is not ended by ctx's end (nor by that
// of a context derived from it when ctx ended it): it runs to its
// answer or to its deadline (the timeout, or its own bound, after it was
// sent; a node that does not answer by then is dropped, as ever), so that
// a caller that gives up mid-request leaves an honest node's connection
// open rather than abandoning the answer under way. What has sent nothing
// still ends with ctx and keeps the connection: a request waiting for
// another to give up the connection, or whose first message the writer
// has not taken, returns ctx's error at once, and no request begins once
// ctx has ended; a header sync (SyncHeaders), whose rounds each have a
// deadline of their own, ends after the round under way, nothing of it
// outstanding. A caller running several requests under it thus waits,
// after ctx ends, for the exchange under way on each connection at most.
// A context derived from the one returned and cancelled on its own (a
// request given up for a reason of the caller's while ctx goes on) ends
// its request as a plain context does.
func FinishBegun(ctx context.Context) context.Context {
	return context.WithValue(ctx, finishBegunKey{}, ctx)
}

// finishBegunKey is the key of the context FinishBegun marked, held by
// the contexts derived from its result.
type finishBegunKey struct{}

// finishesBegun reports whether ctx is, or derives from, one of
// FinishBegun's.
func finishesBegun(ctx context.Context) bool {
	_, ok := ctx.Value(finishBegunKey{}).(context.Context)
	return ok
}

// goesOn returns the context a request under way goes on with: ctx
// itself, unless it derives from one of FinishBegun's, when it is one
// that ends with ctx only if ctx ended while the context FinishBegun
// marked had not (see FinishBegun). The caller calls stop once done with
// it.
func goesOn(ctx context.Context) (_ context.Context, stop func()) {
	marked, ok := ctx.Value(finishBegunKey{}).(context.Context)
	if !ok || ctx.Err() != nil && marked.Err() == nil {
		return ctx, func() {}
	}
	own, cancel := context.WithCancelCause(context.WithoutCancel(ctx))
	// A context is cancelled after its parent: when marked's end ends
	// ctx, marked.Err is set by the time this runs.
	after := context.AfterFunc(ctx, func() {
		if marked.Err() == nil {
			cancel(context.Cause(ctx))
		}
	})
	return own, func() {
		after()
		cancel(nil)
	}
}

// deadline returns the time by which a request's whole answer is due.
func (p *Peer) deadline() time.Time { return time.Now().Add(p.cfg.Timeout) }

// wanted is what a request waits for: the next n messages for which want
// is true. Without take, n is 1 and that message is passed on. With
// take, the read loop runs take on each of them instead, on its own
// goroutine, until take reports that the request is done with them (or
// n were taken): only the message that ended it is passed on, so that an
// answer of many messages costs one hand-off and nothing is read ahead of
// the request.
type wanted struct {
	want func(wire.Message) bool
	n    int
	take func(delivery) (done bool)
}

// recv returns the next message for which want (if not nil) is true,
// waiting until deadline. The read loop runs want on each message while
// recv waits (so want may read what the request's goroutine writes
// between calls); the messages it refuses are unsolicited, charged to the
// node's budgets, and do not move the deadline, so a node sending
// unrequested or trickling messages cannot hold a request open.
func (p *Peer) recv(ctx context.Context, op string, deadline time.Time, want func(wire.Message) bool) (wire.Message, error) {
	if want == nil {
		want = anyMessage
	}
	return p.await(ctx, op, deadline, wanted{want: want, n: 1})
}

// await tells the read loop what the request wants and returns the
// message passed on (see wanted), waiting until deadline as recv does.
// When it fails, a take may still be running: its caller must make sure
// that take does nothing more before it returns.
func (p *Peer) await(ctx context.Context, op string, deadline time.Time, w wanted) (wire.Message, error) {
	r := p.req.Load()
	if r == nil {
		return nil, p.errorf(op, "peer: no request in flight")
	}
	if !r.start.IsZero() {
		var stop func()
		ctx, stop = goesOn(ctx) // something was sent: see FinishBegun
		defer stop()
	}
	if err := ctx.Err(); err != nil {
		p.drop()
		return nil, err
	}
	r.wants <- w // empty: the last was taken, or withdrawn
	timer := r.until(deadline)
	select {
	case d := <-r.offer:
		r.last, r.took = time.Now(), d
		return d.msg, nil
	case <-p.done:
		select {
		case d := <-r.offer: // taken before the read loop ended
			r.last, r.took = time.Now(), d
			return d.msg, nil
		default:
		}
		r.withdraw()
		return nil, p.disconnected(op)
	case <-ctx.Done():
		p.drop()
		r.withdraw()
		r.abandoned(time.Now())
		return nil, ctx.Err()
	case <-timer:
		within := p.cfg.Timeout
		if r.within > 0 {
			within = r.within
		}
		err := p.fail(op, "%w", &TimeoutError{What: "no complete answer", Within: within})
		r.withdraw()
		return nil, err
	}
}

// until returns a timer firing at deadline: the request's, reset only
// when the deadline differs from the last recv's.
func (r *request) until(deadline time.Time) <-chan time.Time {
	switch {
	case r.timer == nil:
		r.timer = time.NewTimer(time.Until(deadline))
	case !deadline.Equal(r.timerAt):
		r.timer.Reset(time.Until(deadline))
	}
	r.timerAt = deadline
	return r.timer.C
}

// withdraw takes back what a recv that gave up wanted, unless the read
// loop holds it already; the connection is gone by then, so the read
// loop offers nothing more.
func (r *request) withdraw() {
	select {
	case <-r.wants:
	default:
	}
}

// anyMessage is the filter of a recv taking any message.
func anyMessage(wire.Message) bool { return true }

// is returns a recv filter accepting the messages of type T.
func is[T wire.Message](m wire.Message) bool {
	_, ok := m.(T)
	return ok
}

// disconnected names why the connection is gone: flooding, a message
// that broke the protocol or a failed write, an earlier error, or closed
// by the node.
func (p *Peer) disconnected(op string) error {
	if c := p.cause.Load(); c != nil {
		return p.errorf(op, "%w", *c)
	}
	switch p.dropped.Load() {
	case dropBroken:
		return p.errorf(op, "%w: connection dropped after an earlier error", ErrDisconnected)
	case dropAbandoned:
		return p.errorf(op, "%w: %w", ErrDisconnected, ErrAbandoned)
	}
	if e := p.readErr.Load(); e != nil && !errors.Is(*e, io.EOF) && !errors.Is(*e, net.ErrClosed) && !errors.Is(*e, io.ErrUnexpectedEOF) {
		return p.errorf(op, "%w: %w", ErrDisconnected, *e)
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
