package capture

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"io"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/btcsuite/btcd/wire"

	"github.com/spvfilter/spvfilter/privacy/model"
)

// frame builds a message of network magic net.
func frame(netMagic wire.BitcoinNet, cmd string, payload []byte) []byte {
	var hdr [frameHeaderSize]byte
	binary.LittleEndian.PutUint32(hdr[0:4], uint32(netMagic))
	copy(hdr[4:16], cmd)
	binary.LittleEndian.PutUint32(hdr[16:20], uint32(len(payload)))
	sum := sha256.Sum256(payload)
	sum = sha256.Sum256(sum[:])
	copy(hdr[20:24], sum[:4])
	return append(hdr[:], payload...)
}

func encodeMsg(t testing.TB, m wire.Message) []byte {
	var b bytes.Buffer
	if err := m.BtcEncode(&b, wire.ProtocolVersion, wire.BaseEncoding); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// syncBuffer is a concurrency-safe capture sink.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// fakeNode is an upstream that greets every connection with a version
// message without NODE_BLOOM and records everything it receives.
type fakeNode struct {
	ln       net.Listener
	mu       sync.Mutex
	received map[int][]byte // by connection, in accept order (a port may be reused)
	version  []byte
}

func startFakeNode(t *testing.T) *fakeNode {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	v := wire.NewMsgVersion(wire.NewNetAddressIPPort(net.IPv4(127, 0, 0, 1), 1, 0), wire.NewNetAddressIPPort(net.IPv4(127, 0, 0, 1), 2, 0), 7, 100)
	v.Services = wire.SFNodeNetwork | wire.SFNodeWitness
	n := &fakeNode{ln: ln, received: map[int][]byte{}, version: frame(wire.TestNet, "version", encodeMsg(t, v))}
	go func() {
		for id := 0; ; id++ {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				c.Write(n.version)
				buf := make([]byte, 4096)
				for {
					k, err := c.Read(buf)
					n.mu.Lock()
					n.received[id] = append(n.received[id], buf[:k]...)
					n.mu.Unlock()
					if err != nil {
						return
					}
				}
			}()
		}
	}()
	t.Cleanup(func() { ln.Close() })
	return n
}

// exchangesWith counts the connections that delivered exactly want.
func (n *fakeNode) exchangesWith(want []byte) int {
	n.mu.Lock()
	defer n.mu.Unlock()
	k := 0
	for _, b := range n.received {
		if bytes.Equal(b, want) {
			k++
		}
	}
	return k
}

// receivedContains reports whether any connection delivered b.
func (n *fakeNode) receivedContains(b []byte) bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	for _, got := range n.received {
		if bytes.Contains(got, b) {
			return true
		}
	}
	return false
}

func startRelay(t *testing.T, upstream string, out io.Writer) *Relay {
	t.Helper()
	return startRelayConfig(t, RelayConfig{Upstream: upstream, Out: out})
}

// goodExchange connects, checks the patched version and sends the filter
// messages; it returns the bytes sent.
func goodExchange(t *testing.T, relay string, node *fakeNode) []byte {
	t.Helper()
	w := model.NewWallet(3, 2)
	f := w.Filter(0.001, 0, 99)
	myVersion := wire.NewMsgVersion(wire.NewNetAddressIPPort(net.IPv4(127, 0, 0, 1), 2, 0), wire.NewNetAddressIPPort(net.IPv4(127, 0, 0, 1), 1, 0), 8, 0)
	myVersion.UserAgent = "/test-client:1.0/"
	var sent []byte
	var frames [][]byte
	for _, m := range []wire.Message{myVersion, f.MsgFilterLoad(), wire.NewMsgFilterAdd([]byte{1, 2, 3}), wire.NewMsgPing(5), wire.NewMsgFilterClear()} {
		fr := frame(wire.TestNet, m.Command(), encodeMsg(t, m))
		frames = append(frames, fr)
		sent = append(sent, fr...)
	}
	// The version carries a timestamp in seconds: an earlier exchange may
	// or may not have sent the same bytes, so count them before.
	before := node.exchangesWith(sent)
	c, err := net.Dial("tcp", relay)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(10 * time.Second))
	var hdr [frameHeaderSize]byte
	var payload bytes.Buffer
	cmd, err := readFrame(c, wire.TestNet, &hdr, &payload)
	if err != nil || cmd != "version" {
		t.Fatalf("first message %q: %v", cmd, err)
	}
	var v wire.MsgVersion
	if err := v.BtcDecode(bytes.NewBuffer(payload.Bytes()), wire.ProtocolVersion, wire.BaseEncoding); err != nil {
		t.Fatal(err)
	}
	if v.Services&wire.SFNodeBloom == 0 || v.Services&wire.SFNodeWitness == 0 {
		t.Fatalf("services %v: NODE_BLOOM not added or others lost", v.Services)
	}
	for _, fr := range frames {
		if _, err := c.Write(fr); err != nil {
			t.Fatal(err)
		}
	}
	// Wait until the node has everything, unchanged.
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		if node.exchangesWith(sent) > before {
			return sent
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatal("upstream did not receive the client's bytes unchanged")
	return nil
}

func TestRelayRecordsAndSurvivesBadClients(t *testing.T) {
	node := startFakeNode(t)
	var out syncBuffer
	r := startRelay(t, node.ln.Addr().String(), &out)
	addr := r.Addr().String()

	goodExchange(t, addr, node)

	// A client that stays connected while the bad ones come and go.
	steady, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer steady.Close()
	steady.SetDeadline(time.Now().Add(20 * time.Second))
	var hdr [frameHeaderSize]byte
	var payload bytes.Buffer
	if cmd, err := readFrame(steady, wire.TestNet, &hdr, &payload); err != nil || cmd != "version" {
		t.Fatalf("steady client: %q %v", cmd, err)
	}

	bad := [][]byte{
		[]byte("GET / HTTP/1.1\r\nHost: x\r\n\r\n"),                                       // garbage
		frame(wire.MainNet, "ping", make([]byte, 8)),                                      // wrong network
		append(frame(wire.TestNet, "ping", nil)[:16], 0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0), // 4 GB payload announced
		frame(wire.TestNet, "filterload", []byte{0xfd}),                                   // undecodable filterload: relayed, not recorded
		frame(wire.TestNet, "pi\x01ng", nil),                                              // control byte in command
		frame(wire.TestNet, "filterload", make([]byte, 10))[:30],                          // truncated, then closed
	}
	// One with a bad checksum.
	cs := frame(wire.TestNet, "ping", make([]byte, 8))
	cs[20] ^= 0xff
	bad = append(bad, cs)
	for i, b := range bad {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatalf("bad client %d: relay gone: %v", i, err)
		}
		c.Write(b)
		c.(*net.TCPConn).CloseWrite() // an abrupt end after the bytes
		// The relay closes the connection; wait for that.
		c.SetReadDeadline(time.Now().Add(5 * time.Second))
		var ne net.Error
		if _, err := io.Copy(io.Discard, c); errors.As(err, &ne) && ne.Timeout() {
			t.Errorf("bad client %d: relay did not close the connection: %v", i, err)
		}
		c.Close()
	}
	// Still serving: the steady client's ping gets through, and a new
	// client works.
	ping := frame(wire.TestNet, "ping", encodeMsg(t, wire.NewMsgPing(0x5eed)))
	if _, err := steady.Write(ping); err != nil {
		t.Fatalf("steady client cut off: %v", err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for node.exchangesWith(ping) == 0 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if node.exchangesWith(ping) != 1 {
		t.Fatal("the steady client's ping did not reach the node")
	}
	goodExchange(t, addr, node)

	recs, err := Read(strings.NewReader(out.String()))
	if err != nil {
		t.Fatal(err)
	}
	var cmds []string
	sessions := map[string]string{} // session -> client
	for _, rec := range recs {
		cmds = append(cmds, rec.Command)
		if rec.Client == "" || rec.Time.IsZero() || rec.Session == "" {
			t.Errorf("record without client, session or time: %+v", rec)
		}
		if c, ok := sessions[rec.Session]; ok && c != rec.Client {
			t.Errorf("session %s names clients %s and %s", rec.Session, c, rec.Client)
		}
		sessions[rec.Session] = rec.Client
		if rec.Command == CmdFilterLoad && (rec.FilterLoad == "" || rec.Filter != "") {
			t.Errorf("filterload record not in the payload form: %+v", rec)
		}
	}
	if len(sessions) != 2 {
		t.Errorf("%d sessions recorded, want the 2 good clients'", len(sessions))
	}
	ss, err := Sessions(recs)
	if err != nil || len(ss) != 2 || len(ss[0].Filters) != 1 || ss[0].UserAgent != "/test-client:1.0/" || ss[0].ID == ss[1].ID {
		t.Fatalf("sessions %+v, %v", ss, err)
	}
	want := "version filterload filteradd filterclear version filterload filteradd filterclear"
	if got := strings.Join(cmds, " "); got != want {
		t.Fatalf("records %q, want %q", got, want)
	}
	if recs[0].UserAgent != "/test-client:1.0/" {
		t.Errorf("user agent %q", recs[0].UserAgent)
	}
	cf, err := replay(recs)
	if err != nil || len(cf) != 2 {
		t.Fatalf("%d filters, %v", len(cf), err)
	}
	w := model.NewWallet(3, 2)
	for _, c := range cf {
		if !c.Cleared || len(c.Added) != 1 || c.Added[0] != "010203" {
			t.Errorf("captured %+v", c)
		}
		for _, h := range w.Hashes {
			if !c.Filter.Contains(h) {
				t.Errorf("captured filter lost a wallet element")
			}
		}
		if !c.Filter.Contains([]byte{1, 2, 3}) {
			t.Errorf("filteradd not applied")
		}
	}
	st := r.Stats()
	if st.Rejected < 5 || st.Records != 8 {
		t.Errorf("stats %+v", st)
	}
}

func TestRelayUpstreamDown(t *testing.T) {
	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	dead := ln.Addr().String()
	ln.Close()
	r := startRelay(t, dead, io.Discard)
	c, err := net.Dial("tcp", r.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	c.SetReadDeadline(time.Now().Add(5 * time.Second))
	if _, err := c.Read(make([]byte, 1)); err == nil {
		t.Fatal("relay kept a client it cannot serve")
	}
	c.Close()
}

func TestReadFrameErrors(t *testing.T) {
	good := frame(wire.TestNet, "verack", nil)
	var hdr [frameHeaderSize]byte
	var p bytes.Buffer
	if cmd, err := readFrame(bytes.NewReader(good), wire.TestNet, &hdr, &p); err != nil || cmd != "verack" {
		t.Fatalf("%q %v", cmd, err)
	}
	for i, b := range [][]byte{good[:10], frame(wire.MainNet, "verack", nil), frame(wire.TestNet, "", nil),
		frame(wire.TestNet, "a\x00b", nil), frame(wire.TestNet, "ping", []byte{1})[:24]} {
		if _, err := readFrame(bytes.NewReader(b), wire.TestNet, &hdr, &p); !errors.Is(err, errBadFrame) {
			t.Errorf("case %d: %v", i, err)
		}
	}
	if _, err := readFrame(bytes.NewReader(nil), wire.TestNet, &hdr, &p); err != io.EOF {
		t.Errorf("empty: %v", err)
	}
}
