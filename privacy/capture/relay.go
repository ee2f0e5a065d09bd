package capture

import (
	"bytes"
	"container/list"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/btcsuite/btcd/wire"

	"github.com/spvfilter/spvfilter/bip37"
)

// errBadFrame reports bytes on a connection that are not a message of the
// expected network.
var errBadFrame = errors.New("privacy: bad message frame")

const (
	frameHeaderSize = 24
	// DefaultMaxClients bounds the connections a relay serves at once.
	DefaultMaxClients = 64
	// DefaultHandshakeTimeout is how long a client has, from its
	// connection, to send a complete version message.
	DefaultHandshakeTimeout = 10 * time.Second
	// DefaultIdleTimeout is how long a connection may pass no message in
	// either direction. Nodes ping every two minutes, so a live
	// connection never stays idle that long.
	DefaultIdleTimeout = 10 * time.Minute
)

// RelayConfig configures a capturing relay.
type RelayConfig struct {
	// Listen is the address clients connect to, e.g. 127.0.0.1:18444.
	Listen string
	// Upstream is the full node every client is relayed to.
	Upstream string
	// Net is the network magic both sides must use.
	Net wire.BitcoinNet
	// Out receives one JSON Record per line. The first write to it that
	// fails ends Serve with an *OutError.
	Out io.Writer
	// Log, if set, receives one line per connection event.
	Log io.Writer
	// DialTimeout bounds the connection to the upstream node (default 10s).
	DialTimeout time.Duration
	// MaxClients bounds the clients served at once (default 64). When
	// every slot is taken, a new client takes the slot of the oldest
	// client that has not yet sent its version message, if any, so that
	// silent connections cannot keep real clients out.
	MaxClients int
	// HandshakeTimeout is how long a client has, from its connection, to
	// send its version message before it is dropped (0: the default of
	// 10s; negative: no limit).
	HandshakeTimeout time.Duration
	// IdleTimeout drops a connection that passes no message in either
	// direction for this long, and bounds the time one message may take
	// to be written (0: the default of 10m; negative: no limit).
	IdleTimeout time.Duration
}

// RelayStats counts what a relay did.
type RelayStats struct {
	Clients  int64 `json:"client_count"`
	Records  int64 `json:"records"`
	Rejected int64 `json:"rejected"` // connections closed for bad frames
	// HandshakeTimeouts counts clients dropped for not sending their
	// version message in time, IdleTimeouts connections dropped for
	// silence, and Evicted clients without a version message whose slot
	// a new client took.
	HandshakeTimeouts int64 `json:"handshake_timeouts"`
	IdleTimeouts      int64 `json:"idle_timeouts"`
	Evicted           int64 `json:"evicted"`
}

// OutError is the error Serve ends with when a record cannot be written
// to RelayConfig.Out (a full disk, a pipe whose reader has gone): relaying
// on would record nothing more, so the relay closes every connection and
// stops at the first failed write. Err is the writer's error, which
// errors.Is sees through (syscall.ENOSPC, syscall.EPIPE).
type OutError struct {
	// Written counts the records written to Out before the failure.
	Written int64
	// Err is the error Out's Write returned.
	Err error
}

func (e *OutError) Error() string {
	return fmt.Sprintf("relay: writing capture: %v", e.Err)
}

// Unwrap returns the writer's error.
func (e *OutError) Unwrap() error { return e.Err }

// Relay passes every message between light clients and a full node, makes
// the node appear to offer NODE_BLOOM, and records the filters the clients
// send, the blocks they ask for and their BIP 157 filter ranges. A
// misbehaving client only loses its own connection; a record Out does not
// take ends the relay (see OutError).
type Relay struct {
	cfg    RelayConfig
	ln     net.Listener
	mu     sync.Mutex // guards Out and outErr
	outErr *OutError  // the first failed write of Out
	// stopped ends when Close is called: it bounds the dials to the
	// upstream node of the clients being served.
	stopped  context.Context
	stop     context.CancelFunc
	wg       sync.WaitGroup
	conns    sync.Map // net.Conn -> struct{}
	clients  atomic.Int64
	records  atomic.Int64
	rejected atomic.Int64
	hsTO     atomic.Int64
	idleTO   atomic.Int64
	evicted  atomic.Int64
	closed   atomic.Bool
	// runID and sessions make each connection's session identifier:
	// the relay's start time in base 36 and a counter.
	runID    string
	sessions atomic.Int64

	slotMu  sync.Mutex
	active  int        // slots taken
	pending *list.List // of *slot, clients without a version yet, oldest first
}

// slot is one client's place among the MaxClients.
type slot struct {
	conn     net.Conn
	pending  *list.Element // in Relay.pending until the version arrives
	released bool          // the slot was given back (or handed on)
	evicted  bool
}

// NewRelay starts listening; call Serve to accept clients.
func NewRelay(cfg RelayConfig) (*Relay, error) {
	if cfg.Out == nil {
		return nil, errors.New("privacy: relay needs an output")
	}
	if cfg.DialTimeout == 0 {
		cfg.DialTimeout = 10 * time.Second
	}
	if cfg.MaxClients <= 0 {
		cfg.MaxClients = DefaultMaxClients
	}
	if cfg.HandshakeTimeout == 0 {
		cfg.HandshakeTimeout = DefaultHandshakeTimeout
	}
	if cfg.IdleTimeout == 0 {
		cfg.IdleTimeout = DefaultIdleTimeout
	}
	ln, err := net.Listen("tcp", cfg.Listen)
	if err != nil {
		return nil, fmt.Errorf("relay: %w", err)
	}
	stopped, stop := context.WithCancel(context.Background())
	return &Relay{cfg: cfg, ln: ln, pending: list.New(), runID: strconv.FormatInt(time.Now().UnixNano(), 36),
		stopped: stopped, stop: stop}, nil
}

// Addr is the address the relay listens on.
func (r *Relay) Addr() net.Addr { return r.ln.Addr() }

// Stats returns the relay's counters.
func (r *Relay) Stats() RelayStats {
	return RelayStats{Clients: r.clients.Load(), Records: r.records.Load(), Rejected: r.rejected.Load(),
		HandshakeTimeouts: r.hsTO.Load(), IdleTimeouts: r.idleTO.Load(), Evicted: r.evicted.Load()}
}

// Serve accepts clients until ctx ends, Close is called or a record cannot
// be written to Out, then closes every connection and waits for them. It
// returns nil when ctx ended or Close was called, and an *OutError when a
// write to Out failed, even if ctx ended meanwhile.
func (r *Relay) Serve(ctx context.Context) error {
	stop := context.AfterFunc(ctx, func() { r.Close() })
	defer stop()
	for {
		c, err := r.ln.Accept()
		if err != nil {
			if r.closed.Load() {
				r.wg.Wait()
				return r.outFailure()
			}
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				continue
			}
			r.Close()
			r.wg.Wait()
			return fmt.Errorf("relay: accept: %w", err)
		}
		s := r.acquire(c)
		if s == nil {
			r.logf("%s: refused, %d clients already", c.RemoteAddr(), r.cfg.MaxClients)
			c.Close()
			continue
		}
		r.clients.Add(1)
		r.wg.Add(1)
		go func() {
			defer r.wg.Done()
			defer r.release(s)
			r.serveClient(s)
		}()
	}
}

// acquire gives c a slot: a free one, or else the slot of the oldest client
// still without a version message, which is disconnected. It returns nil if
// every slot is held by a client past its version message.
func (r *Relay) acquire(c net.Conn) *slot {
	r.slotMu.Lock()
	defer r.slotMu.Unlock()
	s := &slot{conn: c}
	if r.active < r.cfg.MaxClients {
		r.active++
		s.pending = r.pending.PushBack(s)
		return s
	}
	front := r.pending.Front()
	if front == nil {
		return nil
	}
	old := r.pending.Remove(front).(*slot)
	old.pending = nil
	old.released = true // its slot passes to s: active is unchanged
	old.evicted = true
	old.conn.Close()
	r.evicted.Add(1)
	s.pending = r.pending.PushBack(s)
	return s
}

// handshaken marks s past its version message, so that it keeps its slot;
// it reports false if s was evicted meanwhile.
func (r *Relay) handshaken(s *slot) bool {
	r.slotMu.Lock()
	defer r.slotMu.Unlock()
	if s.pending != nil {
		r.pending.Remove(s.pending)
		s.pending = nil
	}
	return !s.released
}

// release gives s's slot back, unless it was handed on already.
func (r *Relay) release(s *slot) {
	r.slotMu.Lock()
	defer r.slotMu.Unlock()
	if s.pending != nil {
		r.pending.Remove(s.pending)
		s.pending = nil
	}
	if !s.released {
		s.released = true
		r.active--
	}
}

func (r *Relay) isEvicted(s *slot) bool {
	r.slotMu.Lock()
	defer r.slotMu.Unlock()
	return s.evicted
}

// Close stops the listener and every connection.
func (r *Relay) Close() error {
	if r.closed.Swap(true) {
		return nil
	}
	r.stop()
	err := r.ln.Close()
	r.conns.Range(func(k, _ any) bool {
		k.(net.Conn).Close()
		return true
	})
	return err
}

func (r *Relay) logf(format string, args ...any) {
	if r.cfg.Log == nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	fmt.Fprintf(r.cfg.Log, "%s %s\n", time.Now().UTC().Format(time.RFC3339), fmt.Sprintf(format, args...))
}

func (r *Relay) track(c net.Conn) {
	r.conns.Store(c, struct{}{})
	if r.closed.Load() {
		c.Close()
	}
}

// conn is the state one client's two pumps share.
type conn struct {
	slot    *slot
	who     string
	session string
	last    atomic.Int64 // time of the last message either way, Unix ns
	version atomic.Bool  // the client's version message arrived
}

func (c *conn) touch() { c.last.Store(time.Now().UnixNano()) }

// errEvicted ends a client whose slot a newer client took.
var errEvicted = errors.New("slot taken by a new client before the version message")

func (r *Relay) serveClient(s *slot) {
	client := s.conn
	r.track(client)
	defer r.conns.Delete(client)
	defer client.Close()
	cs := &conn{slot: s, who: client.RemoteAddr().String(),
		session: fmt.Sprintf("%s-%d", r.runID, r.sessions.Add(1))}
	cs.touch()
	who := cs.who
	if r.cfg.HandshakeTimeout > 0 {
		// Cleared when the version message is complete.
		client.SetReadDeadline(time.Now().Add(r.cfg.HandshakeTimeout))
	}
	d := net.Dialer{Timeout: r.cfg.DialTimeout}
	up, err := d.DialContext(r.stopped, "tcp", r.cfg.Upstream)
	if err != nil {
		r.logf("%s: upstream %s: %v", who, r.cfg.Upstream, err)
		return
	}
	r.track(up)
	defer r.conns.Delete(up)
	defer up.Close()
	r.logf("%s: connected (session %s), relaying to %s", who, cs.session, r.cfg.Upstream)

	done := make(chan struct{})
	defer close(done)
	var idle atomic.Bool
	if r.cfg.IdleTimeout > 0 {
		go func() {
			t := time.NewTimer(r.cfg.IdleTimeout)
			defer t.Stop()
			for {
				select {
				case <-done:
					return
				case <-t.C:
					since := time.Since(time.Unix(0, cs.last.Load()))
					if since >= r.cfg.IdleTimeout {
						idle.Store(true)
						client.Close()
						up.Close()
						return
					}
					t.Reset(r.cfg.IdleTimeout - since)
				}
			}
		}()
	}

	errc := make(chan error, 2)
	go func() { errc <- r.pump(client, up, cs, true) }()
	go func() { errc <- r.pump(up, client, cs, false) }()
	err = <-errc
	client.Close()
	up.Close()
	var oe *OutError
	if other := <-errc; errors.As(other, &oe) {
		// The failed write closed every connection: the other pump
		// may have seen its own connection closed first.
		err = other
	}
	var ne net.Error
	timeout := errors.As(err, &ne) && ne.Timeout()
	switch {
	case errors.Is(err, errBadFrame):
		r.rejected.Add(1)
	case idle.Load() || timeout && cs.version.Load():
		r.idleTO.Add(1)
		err = fmt.Errorf("no message either way for %v, dropped", r.cfg.IdleTimeout)
	case timeout:
		r.hsTO.Add(1)
		err = fmt.Errorf("no version message within %v, dropped", r.cfg.HandshakeTimeout)
	case r.isEvicted(s):
		err = errEvicted
	}
	r.logf("%s: closed: %v", who, err)
}

// pump copies frames from src to dst. Frames from the client are recorded;
// the upstream's version message is patched to offer NODE_BLOOM.
func (r *Relay) pump(src, dst net.Conn, cs *conn, fromClient bool) error {
	var hdr [frameHeaderSize]byte
	var payload bytes.Buffer
	for {
		cmd, err := readFrame(src, r.cfg.Net, &hdr, &payload)
		if err != nil {
			if errors.Is(err, io.EOF) {
				return io.EOF
			}
			return err
		}
		cs.touch()
		body := payload.Bytes()
		if fromClient {
			if cmd == wire.CmdVersion && !cs.version.Load() {
				cs.version.Store(true)
				src.SetReadDeadline(time.Time{})
				if !r.handshaken(cs.slot) {
					return errEvicted
				}
			}
			if rec, ok, err := clientRecord(cmd, body, cs.who, cs.session, time.Now()); err != nil {
				r.logf("%s: %s not recorded: %v", cs.who, cmd, err)
			} else if ok {
				if err := r.write(rec); err != nil {
					return err
				}
			}
			fetches, err := fetchRecords(cmd, body, cs.who, cs.session, time.Now())
			if err != nil {
				r.logf("%s: %s not recorded: %v", cs.who, cmd, err)
			}
			for _, rec := range fetches {
				if err := r.write(rec); err != nil {
					return err
				}
			}
		} else if cmd == wire.CmdVersion {
			patchVersionServices(&hdr, body)
		}
		if r.cfg.IdleTimeout > 0 {
			// A peer that stops reading must not hold the slot.
			dst.SetWriteDeadline(time.Now().Add(r.cfg.IdleTimeout))
		}
		if _, err := dst.Write(hdr[:]); err != nil {
			return err
		}
		if _, err := dst.Write(body); err != nil {
			return err
		}
	}
}

// write appends rec to Out. The first write that fails is kept and closes
// the relay; after it, nothing more is written and every write returns it.
func (r *Relay) write(rec Record) error {
	b, err := json.Marshal(rec)
	if err != nil {
		return err
	}
	b = append(b, '\n')
	r.mu.Lock()
	if r.outErr != nil {
		r.mu.Unlock()
		return r.outErr
	}
	if _, err := r.cfg.Out.Write(b); err != nil {
		r.outErr = &OutError{Written: r.records.Load(), Err: err}
		r.mu.Unlock()
		r.Close()
		return r.outErr
	}
	r.records.Add(1)
	r.mu.Unlock()
	return nil
}

// outFailure is the first failed write of Out, or nil.
func (r *Relay) outFailure() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.outErr == nil {
		return nil
	}
	return r.outErr
}

// readFrame reads one message: its 24-byte header into hdr and its payload
// into payload, checking the magic, the command's form, the length limit
// and the checksum. The payload buffer grows with the bytes that arrive,
// never to a size announced by the peer before they are there.
func readFrame(rd io.Reader, netMagic wire.BitcoinNet, hdr *[frameHeaderSize]byte, payload *bytes.Buffer) (string, error) {
	if _, err := io.ReadFull(rd, hdr[:]); err != nil {
		if err == io.ErrUnexpectedEOF {
			return "", fmt.Errorf("%w: truncated header", errBadFrame)
		}
		return "", err
	}
	if m := wire.BitcoinNet(binary.LittleEndian.Uint32(hdr[0:4])); m != netMagic {
		return "", &magicError{got: m, want: netMagic}
	}
	cmd, err := frameCommand(hdr[4:16])
	if err != nil {
		return "", err
	}
	n := binary.LittleEndian.Uint32(hdr[16:20])
	if n > wire.MaxMessagePayload {
		return "", fmt.Errorf("%w: %s payload of %d bytes exceeds %d", errBadFrame, cmd, n, wire.MaxMessagePayload)
	}
	payload.Reset()
	if m, err := io.CopyN(payload, rd, int64(n)); err != nil {
		return "", fmt.Errorf("%w: %s payload truncated at %d of %d bytes", errBadFrame, cmd, m, n)
	}
	sum := sha256.Sum256(payload.Bytes())
	sum = sha256.Sum256(sum[:])
	if !bytes.Equal(sum[:4], hdr[20:24]) {
		return "", fmt.Errorf("%w: %s checksum mismatch", errBadFrame, cmd)
	}
	return cmd, nil
}

// magicError is a frame of another network's magic than the one wanted.
type magicError struct{ got, want wire.BitcoinNet }

func (e *magicError) Error() string {
	return fmt.Sprintf("%v: network magic %#08x, want %#08x", errBadFrame, uint32(e.got), uint32(e.want))
}

func (e *magicError) Unwrap() error { return errBadFrame }

// frameCommand checks the 12-byte command field: printable ASCII padded
// with NUL bytes only.
func frameCommand(b []byte) (string, error) {
	end := bytes.IndexByte(b, 0)
	if end < 0 {
		end = len(b)
	}
	for i, c := range b {
		if i < end && (c < 0x20 || c > 0x7e) || i >= end && c != 0 {
			return "", fmt.Errorf("%w: malformed command %q", errBadFrame, b)
		}
	}
	if end == 0 {
		return "", fmt.Errorf("%w: empty command", errBadFrame)
	}
	return string(b[:end]), nil
}

// patchVersionServices sets NODE_BLOOM in a version payload's services
// field (bytes 4 to 12) and fixes the header's checksum.
func patchVersionServices(hdr *[frameHeaderSize]byte, payload []byte) {
	if len(payload) < 12 {
		return
	}
	s := binary.LittleEndian.Uint64(payload[4:12])
	if s&uint64(wire.SFNodeBloom) != 0 {
		return
	}
	binary.LittleEndian.PutUint64(payload[4:12], s|uint64(wire.SFNodeBloom))
	sum := sha256.Sum256(payload)
	sum = sha256.Sum256(sum[:])
	copy(hdr[20:24], sum[:4])
}

// clientRecord turns a client message into a capture record: filterload,
// filteradd and filterclear, and version for the user agent. Other commands
// give ok == false.
func clientRecord(cmd string, payload []byte, who, session string, now time.Time) (Record, bool, error) {
	now = now.UTC()
	switch cmd {
	case wire.CmdFilterLoad:
		f, err := bip37.DecodeFilterLoad(payload)
		if err != nil {
			return Record{}, false, err
		}
		rec, err := NewFilterLoadRecord(now, who, session, f.MsgFilterLoad())
		return rec, err == nil, err
	case wire.CmdFilterAdd:
		var m wire.MsgFilterAdd
		if err := m.BtcDecode(bytes.NewReader(payload), wire.ProtocolVersion, wire.BaseEncoding); err != nil {
			return Record{}, false, err
		}
		if err := bip37.ValidateFilterAdd(m.Data); err != nil {
			return Record{}, false, err
		}
		return Record{Time: now, Client: who, Session: session, Command: CmdFilterAdd, Data: fmt.Sprintf("%x", m.Data)}, true, nil
	case wire.CmdFilterClear:
		return Record{Time: now, Client: who, Session: session, Command: CmdFilterClear}, true, nil
	case wire.CmdVersion:
		var m wire.MsgVersion // its decoder insists on a *bytes.Buffer
		if err := m.BtcDecode(bytes.NewBuffer(payload), wire.ProtocolVersion, wire.BaseEncoding); err != nil {
			return Record{}, false, err
		}
		relay := !m.DisableRelayTx
		return Record{Time: now, Client: who, Session: session, Command: CmdVersion, UserAgent: m.UserAgent,
			ProtocolVersion: m.ProtocolVersion, Relay: &relay}, true, nil
	}
	return Record{}, false, nil
}
