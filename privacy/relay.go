package privacy

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/btcsuite/btcd/wire"

	"github.com/spvfilter/spvfilter/bip37"
)

// ErrBadFrame reports bytes on a connection that are not a message of the
// expected network.
var ErrBadFrame = errors.New("privacy: bad message frame")

const (
	frameHeaderSize = 24
	// DefaultMaxClients bounds the connections a relay serves at once.
	DefaultMaxClients = 64
)

// RelayConfig configures a capturing relay.
type RelayConfig struct {
	// Listen is the address clients connect to, e.g. 127.0.0.1:18444.
	Listen string
	// Upstream is the full node every client is relayed to.
	Upstream string
	// Net is the network magic both sides must use.
	Net wire.BitcoinNet
	// Out receives one JSON CaptureRecord per line.
	Out io.Writer
	// Log, if set, receives one line per connection event.
	Log io.Writer
	// DialTimeout bounds the connection to the upstream node (default 10s).
	DialTimeout time.Duration
	// MaxClients bounds the clients served at once (default 64).
	MaxClients int
}

// RelayStats counts what a relay did.
type RelayStats struct {
	Clients  int64 `json:"clients"`
	Records  int64 `json:"records"`
	Rejected int64 `json:"rejected"` // connections closed for bad frames
}

// Relay passes every message between light clients and a full node, makes
// the node appear to offer NODE_BLOOM, and records the filters the clients
// send. A misbehaving client only loses its own connection.
type Relay struct {
	cfg      RelayConfig
	ln       net.Listener
	mu       sync.Mutex // guards Out
	wg       sync.WaitGroup
	conns    sync.Map // net.Conn -> struct{}
	active   atomic.Int64
	clients  atomic.Int64
	records  atomic.Int64
	rejected atomic.Int64
	closed   atomic.Bool
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
	ln, err := net.Listen("tcp", cfg.Listen)
	if err != nil {
		return nil, fmt.Errorf("relay: %w", err)
	}
	return &Relay{cfg: cfg, ln: ln}, nil
}

// Addr is the address the relay listens on.
func (r *Relay) Addr() net.Addr { return r.ln.Addr() }

// Stats returns the relay's counters.
func (r *Relay) Stats() RelayStats {
	return RelayStats{Clients: r.clients.Load(), Records: r.records.Load(), Rejected: r.rejected.Load()}
}

// Serve accepts clients until ctx ends or Close is called, then closes every
// connection and waits for them.
func (r *Relay) Serve(ctx context.Context) error {
	stop := context.AfterFunc(ctx, func() { r.Close() })
	defer stop()
	for {
		c, err := r.ln.Accept()
		if err != nil {
			if r.closed.Load() {
				r.wg.Wait()
				return nil
			}
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				continue
			}
			r.Close()
			r.wg.Wait()
			return fmt.Errorf("relay: accept: %w", err)
		}
		if r.active.Load() >= int64(r.cfg.MaxClients) {
			r.logf("%s: refused, %d clients already", c.RemoteAddr(), r.cfg.MaxClients)
			c.Close()
			continue
		}
		r.active.Add(1)
		r.clients.Add(1)
		r.wg.Add(1)
		go func() {
			defer r.wg.Done()
			defer r.active.Add(-1)
			r.serveClient(c)
		}()
	}
}

// Close stops the listener and every connection.
func (r *Relay) Close() error {
	if r.closed.Swap(true) {
		return nil
	}
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

func (r *Relay) serveClient(client net.Conn) {
	r.track(client)
	defer r.conns.Delete(client)
	defer client.Close()
	who := client.RemoteAddr().String()
	d := net.Dialer{Timeout: r.cfg.DialTimeout}
	up, err := d.Dial("tcp", r.cfg.Upstream)
	if err != nil {
		r.logf("%s: upstream %s: %v", who, r.cfg.Upstream, err)
		return
	}
	r.track(up)
	defer r.conns.Delete(up)
	defer up.Close()
	r.logf("%s: connected, relaying to %s", who, r.cfg.Upstream)

	errc := make(chan error, 2)
	go func() { errc <- r.pump(client, up, who, true) }()
	go func() { errc <- r.pump(up, client, who, false) }()
	err = <-errc
	client.Close()
	up.Close()
	<-errc
	if errors.Is(err, ErrBadFrame) {
		r.rejected.Add(1)
	}
	r.logf("%s: closed: %v", who, err)
}

// pump copies frames from src to dst. Frames from the client are recorded;
// the upstream's version message is patched to offer NODE_BLOOM.
func (r *Relay) pump(src, dst net.Conn, who string, fromClient bool) error {
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
		body := payload.Bytes()
		if fromClient {
			if rec, ok, err := clientRecord(cmd, body, who, time.Now()); err != nil {
				r.logf("%s: %s not recorded: %v", who, cmd, err)
			} else if ok {
				if err := r.write(rec); err != nil {
					return err
				}
			}
		} else if cmd == wire.CmdVersion {
			patchVersionServices(&hdr, body)
		}
		if _, err := dst.Write(hdr[:]); err != nil {
			return err
		}
		if _, err := dst.Write(body); err != nil {
			return err
		}
	}
}

func (r *Relay) write(rec CaptureRecord) error {
	b, err := json.Marshal(rec)
	if err != nil {
		return err
	}
	b = append(b, '\n')
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, err := r.cfg.Out.Write(b); err != nil {
		return fmt.Errorf("relay: writing capture: %w", err)
	}
	r.records.Add(1)
	return nil
}

// readFrame reads one message: its 24-byte header into hdr and its payload
// into payload, checking the magic, the command's form, the length limit
// and the checksum. The payload buffer grows with the bytes that arrive,
// never to a size announced by the peer before they are there.
func readFrame(rd io.Reader, netMagic wire.BitcoinNet, hdr *[frameHeaderSize]byte, payload *bytes.Buffer) (string, error) {
	if _, err := io.ReadFull(rd, hdr[:]); err != nil {
		if err == io.ErrUnexpectedEOF {
			return "", fmt.Errorf("%w: truncated header", ErrBadFrame)
		}
		return "", err
	}
	if m := wire.BitcoinNet(binary.LittleEndian.Uint32(hdr[0:4])); m != netMagic {
		return "", fmt.Errorf("%w: network magic %#08x, want %#08x", ErrBadFrame, uint32(m), uint32(netMagic))
	}
	cmd, err := frameCommand(hdr[4:16])
	if err != nil {
		return "", err
	}
	n := binary.LittleEndian.Uint32(hdr[16:20])
	if n > wire.MaxMessagePayload {
		return "", fmt.Errorf("%w: %s payload of %d bytes exceeds %d", ErrBadFrame, cmd, n, wire.MaxMessagePayload)
	}
	payload.Reset()
	if m, err := io.CopyN(payload, rd, int64(n)); err != nil {
		return "", fmt.Errorf("%w: %s payload truncated at %d of %d bytes", ErrBadFrame, cmd, m, n)
	}
	sum := sha256.Sum256(payload.Bytes())
	sum = sha256.Sum256(sum[:])
	if !bytes.Equal(sum[:4], hdr[20:24]) {
		return "", fmt.Errorf("%w: %s checksum mismatch", ErrBadFrame, cmd)
	}
	return cmd, nil
}

// frameCommand checks the 12-byte command field: printable ASCII padded
// with NUL bytes only.
func frameCommand(b []byte) (string, error) {
	end := bytes.IndexByte(b, 0)
	if end < 0 {
		end = len(b)
	}
	for i, c := range b {
		if i < end && (c < 0x20 || c > 0x7e) || i >= end && c != 0 {
			return "", fmt.Errorf("%w: malformed command %q", ErrBadFrame, b)
		}
	}
	if end == 0 {
		return "", fmt.Errorf("%w: empty command", ErrBadFrame)
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
func clientRecord(cmd string, payload []byte, who string, now time.Time) (CaptureRecord, bool, error) {
	now = now.UTC()
	switch cmd {
	case wire.CmdFilterLoad:
		f, err := bip37.DecodeFilterLoad(payload)
		if err != nil {
			return CaptureRecord{}, false, err
		}
		return NewFilterLoadRecord(now, who, f.MsgFilterLoad()), true, nil
	case wire.CmdFilterAdd:
		var m wire.MsgFilterAdd
		if err := m.BtcDecode(bytes.NewReader(payload), wire.ProtocolVersion, wire.BaseEncoding); err != nil {
			return CaptureRecord{}, false, err
		}
		if err := bip37.ValidateFilterAdd(m.Data); err != nil {
			return CaptureRecord{}, false, err
		}
		return CaptureRecord{Time: now, Client: who, Command: CmdFilterAdd, Data: fmt.Sprintf("%x", m.Data)}, true, nil
	case wire.CmdFilterClear:
		return CaptureRecord{Time: now, Client: who, Command: CmdFilterClear}, true, nil
	case wire.CmdVersion:
		var m wire.MsgVersion // its decoder insists on a *bytes.Buffer
		if err := m.BtcDecode(bytes.NewBuffer(payload), wire.ProtocolVersion, wire.BaseEncoding); err != nil {
			return CaptureRecord{}, false, err
		}
		relay := !m.DisableRelayTx
		return CaptureRecord{Time: now, Client: who, Command: CmdVersion, UserAgent: m.UserAgent,
			ProtocolVersion: m.ProtocolVersion, Relay: &relay}, true, nil
	}
	return CaptureRecord{}, false, nil
}
