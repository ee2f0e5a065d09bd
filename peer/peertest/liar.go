package peertest

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/btcsuite/btcd/wire"
)

// Liar is a test peer: a loopback proxy in front of a real node that
// forwards every message and lets a test rewrite, drop or cut off what the
// node sends back, turning an honest node into a lying one. With a nil lie
// it is an honest second address for the same node.
type Liar struct {
	Addr   string
	ln     net.Listener
	target string
	net    wire.BitcoinNet
	// lie sees each decoded message from the node (of the commands in
	// liarDecodes and sees) and returns what the client gets instead;
	// hangup closes the connection instead.
	lie  LieFunc
	sees map[string]bool // commands decoded besides liarDecodes
	drip *dripSpec       // how the node's bytes are written (Drips), if set

	mu      sync.Mutex
	sent    []string       // commands the client sent, in order
	asked   []wire.Message // its requests of askedDecodes, in order
	conns   []net.Conn
	stopped bool // the test ended
	wg      sync.WaitGroup
}

// liarDecodes are the commands the proxy decodes for lie; everything else
// is forwarded byte for byte.
var liarDecodes = map[string]bool{
	wire.CmdHeaders: true, wire.CmdCFCheckpt: true, wire.CmdCFHeaders: true, wire.CmdCFilter: true,
	wire.CmdMerkleBlock: true, wire.CmdTx: true, wire.CmdBlock: true, wire.CmdVersion: true,
}

// askedDecodes are the client's commands the proxy decodes for Requests:
// those that tell a node what the client looks at.
var askedDecodes = map[string]bool{
	wire.CmdGetData: true, wire.CmdGetCFilters: true, wire.CmdGetCFHeaders: true, wire.CmdFilterLoad: true, wire.CmdFilterAdd: true,
}

// LieFunc sees each message of the node that a client consumes (version,
// headers, cfcheckpt, cfheaders, cfilter, merkleblock, tx, block, and
// those of AlsoSees) and returns what the client gets instead; hangup
// closes the connection instead.
type LieFunc func(m wire.Message) (out []wire.Message, hangup bool)

// Honest forwards every message unchanged.
func Honest(m wire.Message) ([]wire.Message, bool) { return []wire.Message{m}, false }

// LiarOption changes what a Liar shows its LieFunc.
type LiarOption func(*Liar)

// AlsoSees has the Liar decode the node's messages of the commands cmds
// too (wire.CmdInv, say) and pass them to its LieFunc.
func AlsoSees(cmds ...string) LiarOption {
	return func(l *Liar) {
		for _, c := range cmds {
			l.sees[c] = true
		}
	}
}

// NewLiar starts a proxy on 127.0.0.1 in front of the node at target, on
// the network btcnet; it stops when the test ends.
func NewLiar(t testing.TB, target string, btcnet wire.BitcoinNet, lie LieFunc, opts ...LiarOption) *Liar {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	l := &Liar{Addr: ln.Addr().String(), ln: ln, target: target, net: btcnet, lie: lie, sees: map[string]bool{}}
	for _, opt := range opts {
		opt(l)
	}
	l.wg.Add(1)
	go l.serve()
	t.Cleanup(func() {
		l.mu.Lock()
		l.stopped = true
		ln := l.ln
		for _, c := range l.conns {
			c.Close()
		}
		l.mu.Unlock()
		ln.Close()
		l.wg.Wait()
	})
	return l
}

// Pause takes the proxy down for d, as a node restarted by its operator:
// its connections close and new ones are refused until it listens again
// on the same address. It returns once it does.
func (l *Liar) Pause(t testing.TB, d time.Duration) {
	t.Helper()
	l.mu.Lock()
	ln := l.ln
	for _, c := range l.conns {
		c.Close()
	}
	l.conns = nil
	l.mu.Unlock()
	ln.Close()
	time.Sleep(d)
	again, err := net.Listen("tcp", l.Addr)
	if err != nil {
		t.Fatalf("listening again on %s: %v", l.Addr, err)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.stopped {
		again.Close()
		return
	}
	l.ln = again
	l.wg.Add(1)
	go l.serve()
}

func (l *Liar) serve() {
	defer l.wg.Done()
	l.mu.Lock()
	ln := l.ln
	l.mu.Unlock()
	for {
		client, err := ln.Accept()
		if err != nil {
			return
		}
		node, err := net.Dial("tcp", l.target)
		if err != nil {
			client.Close()
			continue
		}
		l.mu.Lock()
		l.conns = append(l.conns, client, node)
		l.mu.Unlock()
		var once sync.Once
		closeBoth := func() { once.Do(func() { client.Close(); node.Close() }) }
		l.wg.Add(2)
		go func() {
			defer l.wg.Done()
			if !l.pipe(client, node, false) {
				closeBoth()
			}
		}()
		go func() {
			defer l.wg.Done()
			defer closeBoth()
			l.pipe(node, client, true)
		}()
	}
}

// readFrame reads one raw message: 24-byte header and payload.
func readFrame(r io.Reader) (cmd string, frame []byte, err error) {
	hdr := make([]byte, wire.MessageHeaderSize)
	if _, err := io.ReadFull(r, hdr); err != nil {
		return "", nil, err
	}
	n := binary.LittleEndian.Uint32(hdr[16:20])
	if n > wire.MaxMessagePayload {
		return "", nil, errors.New("payload too large")
	}
	frame = make([]byte, wire.MessageHeaderSize+int(n))
	copy(frame, hdr)
	if _, err := io.ReadFull(r, frame[wire.MessageHeaderSize:]); err != nil {
		return "", nil, err
	}
	return string(bytes.TrimRight(hdr[4:16], "\x00")), frame, nil
}

// pipe forwards src's messages to to until either fails or a lie hangs
// up. It reports a hang-up: the connection to the client is then closed
// for writing alone (a FIN after what was forwarded), left to close when
// the client closes its side, so that the messages forwarded before it
// reach the client whole; closing at once, with the client's messages
// unread, would reset the connection and could drop them.
func (l *Liar) pipe(to, src net.Conn, fromClient bool) (hungUp bool) {
	var dst net.Conn = to
	dw := &dripWriter{Conn: to}
	if !fromClient && l.drip != nil {
		dw.spec, dst = l.drip, dw
	}
	for {
		cmd, frame, err := readFrame(src)
		if err != nil {
			return
		}
		dw.start(cmd)
		if fromClient {
			var asked wire.Message
			if askedDecodes[cmd] {
				asked, _ = decodeFrame(frame, l.net)
			}
			l.mu.Lock()
			l.sent = append(l.sent, cmd)
			if asked != nil {
				l.asked = append(l.asked, asked)
			}
			l.mu.Unlock()
		}
		if fromClient || l.lie == nil || !liarDecodes[cmd] && !l.sees[cmd] {
			if _, err := dst.Write(frame); err != nil {
				return
			}
			continue
		}
		msg, err := decodeFrame(frame, l.net)
		if err != nil {
			return
		}
		out, hangup := l.lie(msg)
		if hangup {
			if tc, ok := to.(*net.TCPConn); ok && tc.CloseWrite() == nil {
				return true
			}
			return false
		}
		for _, m := range out {
			if _, err := wire.WriteMessageWithEncodingN(dst, m, wire.ProtocolVersion, l.net, wire.WitnessEncoding); err != nil {
				return
			}
		}
	}
}

// Inject sends m to the most recent client, as if the node had sent it.
func (l *Liar) Inject(m wire.Message) error {
	l.mu.Lock()
	var client net.Conn
	if len(l.conns) >= 2 {
		client = l.conns[len(l.conns)-2]
	}
	l.mu.Unlock()
	if client == nil {
		return errors.New("no client connected")
	}
	_, err := wire.WriteMessageWithEncodingN(client, m, wire.ProtocolVersion, l.net, wire.WitnessEncoding)
	return err
}

// Commands returns the commands the client has sent so far.
func (l *Liar) Commands() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.sent...)
}

// Requests returns the client's requests so far that tell a node what it
// looks at (getdata, getcfilters, getcfheaders, filterload, filteradd),
// decoded, in the order sent: what a relay capturing the client records.
func (l *Liar) Requests() []wire.Message {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]wire.Message(nil), l.asked...)
}

// Announce returns a Liar behaviour that rewrites the height the node
// announces in its version message to height, and passes everything else
// to lie (Honest if nil).
func Announce(height int32, lie LieFunc) LieFunc {
	if lie == nil {
		lie = Honest
	}
	return func(m wire.Message) ([]wire.Message, bool) {
		if v, ok := m.(*wire.MsgVersion); ok {
			v.LastBlock = height
			return []wire.Message{v}, false
		}
		return lie(m)
	}
}
