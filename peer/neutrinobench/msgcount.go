package neutrinobench

import (
	"bytes"
	"context"
	"encoding/binary"
	"maps"
	"net"
	"sync"
	"sync/atomic"
)

// msgCounter counts the bytes a client reads from its connections, in
// all and by the command of the message each byte belongs to (its
// 24-byte frame header included), so that two clients' traffic can be
// compared message type by message type.
type msgCounter struct {
	total atomic.Uint64

	mu sync.Mutex
	by map[string]uint64
}

func newMsgCounter() *msgCounter { return &msgCounter{by: make(map[string]uint64)} }

// maxCommands bounds the commands counted apart; the bytes of any other
// are counted as "other".
const maxCommands = 64

// Total returns the bytes read so far.
func (m *msgCounter) Total() uint64 { return m.total.Load() }

// ByCommand returns a copy of the bytes read so far by command.
func (m *msgCounter) ByCommand() map[string]uint64 {
	m.mu.Lock()
	defer m.mu.Unlock()
	return maps.Clone(m.by)
}

func (m *msgCounter) add(cmd string, n int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := m.by[cmd]; !ok && len(m.by) >= maxCommands {
		cmd = "other"
	}
	m.by[cmd] += uint64(n)
}

// conn returns c with its reads counted by m.
func (m *msgCounter) conn(c net.Conn) net.Conn { return &msgConn{Conn: c, m: m} }

// dial dials addr, for a client's Dialer, with the connection's reads
// counted by m.
func (m *msgCounter) dial(ctx context.Context, network, addr string) (net.Conn, error) {
	c, err := (&net.Dialer{}).DialContext(ctx, network, addr)
	if err != nil {
		return nil, err
	}
	return m.conn(c), nil
}

// frameHeader is the size of a message's header: magic, command, length,
// checksum.
const frameHeader = 24

// msgConn is a connection whose reads its counter counts; it follows the
// frames of the stream to tell which message each byte read belongs to.
type msgConn struct {
	net.Conn
	m   *msgCounter
	cur frameCursor
}

func (c *msgConn) Read(b []byte) (int, error) {
	n, err := c.Conn.Read(b)
	c.m.total.Add(uint64(n))
	c.cur.walk(b[:n], func(cmd string, n int, _ bool) { c.m.add(cmd, n) })
	return n, err
}

// frameCursor follows the frames of one direction of a stream.
type frameCursor struct {
	hdr  [frameHeader]byte
	got  int    // bytes of the current frame's header read
	left uint32 // bytes of the current frame's payload still to read
	cmd  string // the current frame's command
}

// walk advances c over b, the stream's next bytes, and calls each for
// every run of them that belongs to one frame: the frame's command, the
// run's length (a header is counted whole, once it is), and whether the
// frame ended with the run.
func (c *frameCursor) walk(b []byte, each func(cmd string, n int, ended bool)) {
	for len(b) > 0 {
		var n int
		if c.got < frameHeader {
			k := copy(c.hdr[c.got:], b)
			c.got += k
			b = b[k:]
			if c.got < frameHeader {
				return
			}
			c.cmd = string(bytes.TrimRight(c.hdr[4:16], "\x00"))
			c.left = binary.LittleEndian.Uint32(c.hdr[16:20])
			n = frameHeader
		} else {
			k := min(uint32(len(b)), c.left)
			c.left -= k
			b = b[k:]
			n = int(k)
		}
		if c.left == 0 {
			c.got = 0
		}
		each(c.cmd, n, c.left == 0)
	}
}
