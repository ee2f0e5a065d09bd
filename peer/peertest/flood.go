package peertest

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"math/rand/v2"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/btcsuite/btcd/wire"
)

// FloodKind is what a Flooder does to its clients besides forwarding.
type FloodKind int

// The kinds of flood.
const (
	// FloodPing sends pings and stops reading what the client sends.
	FloodPing FloodKind = iota + 1
	// FloodInv sends inv messages of transaction hashes.
	FloodInv
	// FloodNotFound sends notfound messages of transaction hashes.
	FloodNotFound
	// FloodAddr sends addr messages.
	FloodAddr
	// FloodUnknown sends messages of a command no node knows.
	FloodUnknown
	// SlowAnswers floods nothing: it holds every answer the client
	// consumes (the messages a Liar decodes, notfound and pong) for
	// Flood.Delay.
	SlowAnswers
	// HangUp floods nothing: it closes each connection Flood.Delay after
	// the client's verack, as a node that drops its peers at once.
	HangUp
)

// Flood says how a Flooder floods.
type Flood struct {
	Kind FloodKind
	// Entries per message: hashes of an inv or notfound (default
	// 50,000, the protocol's maximum), addresses of an addr (default
	// 1,000), payload bytes of an unknown command (default 100,000).
	Entries int
	// Interval between flood messages; zero floods as fast as the
	// client reads.
	Interval time.Duration
	// Delay is how long SlowAnswers holds each answer, and how long
	// HangUp keeps a connection.
	Delay time.Duration
}

// Flooder is a test peer: a loopback proxy in front of a real node that
// forwards every message and, once the client's handshake is done, floods
// the client (or holds the node's answers).
type Flooder struct {
	Addr  string
	srv   server
	node  string
	net   wire.BitcoinNet
	flood Flood
	frame []byte // the flood message, encoded once
	sent  atomic.Int64
	conns atomic.Int64
}

// NewFlooder starts a flooding proxy on 127.0.0.1 in front of the node at
// target, on the network btcnet; it stops when the test ends.
func NewFlooder(t testing.TB, target string, btcnet wire.BitcoinNet, f Flood) *Flooder {
	t.Helper()
	fl := &Flooder{node: target, net: btcnet, flood: f}
	if f.Kind != SlowAnswers && f.Kind != HangUp {
		fl.frame = floodFrame(btcnet, f)
	}
	fl.Addr = fl.srv.start(t, fl.serve)
	return fl
}

// Sent returns how many flood messages reached clients' connections.
func (f *Flooder) Sent() int64 { return f.sent.Load() }

// Connections returns how many connections clients made to the Flooder.
func (f *Flooder) Connections() int64 { return f.conns.Load() }

// floodFrame encodes the message the flood repeats.
func floodFrame(btcnet wire.BitcoinNet, f Flood) []byte {
	var m wire.Message
	switch f.Kind {
	case FloodPing:
		m = wire.NewMsgPing(rand.Uint64())
	case FloodInv:
		inv := wire.NewMsgInv()
		inv.InvList = randomInv(f.Entries)
		m = inv
	case FloodNotFound:
		nf := wire.NewMsgNotFound()
		nf.InvList = randomInv(f.Entries)
		m = nf
	case FloodAddr:
		n := f.Entries
		if n == 0 {
			n = wire.MaxAddrPerMsg
		}
		addr := wire.NewMsgAddr()
		for i := 0; i < n; i++ {
			ip := net.IPv4(byte(1+rand.IntN(200)), byte(rand.IntN(256)), byte(rand.IntN(256)), byte(1+rand.IntN(250)))
			addr.AddrList = append(addr.AddrList, wire.NewNetAddressIPPort(ip, 8333, wire.SFNodeNetwork))
		}
		m = addr
	case FloodUnknown:
		n := f.Entries
		if n == 0 {
			n = 100_000
		}
		return rawFrame(btcnet, "floodjunk", make([]byte, n))
	default:
		panic("peertest: unknown flood kind")
	}
	var b bytes.Buffer
	if _, err := wire.WriteMessageWithEncodingN(&b, m, wire.ProtocolVersion, btcnet, wire.WitnessEncoding); err != nil {
		panic(err)
	}
	return b.Bytes()
}

// randomInv returns n (default the protocol's maximum) random
// transaction hashes.
func randomInv(n int) []*wire.InvVect {
	if n == 0 {
		n = wire.MaxInvPerMsg
	}
	list := make([]*wire.InvVect, n)
	for i := range list {
		var h chainhash.Hash
		binary.LittleEndian.PutUint64(h[:], rand.Uint64())
		binary.LittleEndian.PutUint64(h[8:], rand.Uint64())
		list[i] = wire.NewInvVect(wire.InvTypeTx, &h)
	}
	return list
}

// rawFrame encodes a message of any command.
func rawFrame(btcnet wire.BitcoinNet, cmd string, payload []byte) []byte {
	frame := make([]byte, wire.MessageHeaderSize, wire.MessageHeaderSize+len(payload))
	binary.LittleEndian.PutUint32(frame[0:4], uint32(btcnet))
	copy(frame[4:16], cmd)
	binary.LittleEndian.PutUint32(frame[16:20], uint32(len(payload)))
	first := sha256.Sum256(payload)
	sum := sha256.Sum256(first[:])
	copy(frame[20:24], sum[:4])
	return append(frame, payload...)
}

// serve connects a client to the node and floods it.
func (f *Flooder) serve(client net.Conn) {
	f.conns.Add(1)
	node, err := net.Dial("tcp", f.node)
	if err != nil || !f.srv.track(node) {
		client.Close()
		return
	}
	c := &floodConn{f: f, client: client, node: node, ready: make(chan struct{})}
	f.srv.run(c.fromClient)
	f.srv.run(c.fromNode)
	c.flood()
}

// floodConn is one client's connection through the Flooder.
type floodConn struct {
	f            *Flooder
	client, node net.Conn
	writeMu      sync.Mutex    // the node's messages and the flood share the client
	ready        chan struct{} // closed once the client sent its verack
	once         sync.Once
}

func (c *floodConn) close() {
	c.client.Close()
	c.node.Close()
}

// fromClient forwards the client's messages to the node; for FloodPing
// it stops reading after the client's verack.
func (c *floodConn) fromClient() {
	defer c.once.Do(func() { close(c.ready) })
	for {
		cmd, frame, err := readFrame(c.client)
		if err != nil {
			c.close()
			return
		}
		if _, err := c.node.Write(frame); err != nil {
			c.close()
			return
		}
		if cmd == wire.CmdVerAck {
			c.once.Do(func() { close(c.ready) })
			if c.f.flood.Kind == FloodPing {
				<-c.f.srv.stop
				return
			}
		}
	}
}

// fromNode forwards the node's messages to the client, holding answers
// for SlowAnswers.
func (c *floodConn) fromNode() {
	defer c.close()
	for {
		cmd, frame, err := readFrame(c.node)
		if err != nil {
			return
		}
		if c.f.flood.Kind == SlowAnswers && (liarDecodes[cmd] || cmd == wire.CmdNotFound || cmd == wire.CmdPong) {
			select {
			case <-time.After(c.f.flood.Delay):
			case <-c.f.srv.stop:
				return
			}
		}
		if !c.write(frame) {
			return
		}
	}
}

func (c *floodConn) write(frame []byte) bool {
	c.writeMu.Lock()
	defer c.writeMu.Unlock()
	_, err := c.client.Write(frame)
	return err == nil
}

// flood sends the flood message once the handshake is done, until the
// client is gone or the test ends.
func (c *floodConn) flood() {
	if c.f.frame == nil && c.f.flood.Kind != HangUp {
		return
	}
	select {
	case <-c.ready:
	case <-c.f.srv.stop:
		return
	}
	if c.f.flood.Kind == HangUp {
		select {
		case <-time.After(c.f.flood.Delay):
			c.close()
		case <-c.f.srv.stop:
		}
		return
	}
	for {
		if !c.write(c.f.frame) {
			return
		}
		c.f.sent.Add(1)
		if c.f.flood.Interval > 0 {
			select {
			case <-time.After(c.f.flood.Interval):
			case <-c.f.srv.stop:
				return
			}
		}
	}
}
