package peertest

import (
	"io"
	"net"
	"sync"
	"testing"
)

// server is what the test proxies share: a listener on 127.0.0.1 that
// hands each connection to a function of its own goroutine, and, when
// the test ends, closes the listener and every connection and waits for
// the goroutines.
type server struct {
	ln   net.Listener
	stop chan struct{} // closed when the test ends

	mu     sync.Mutex
	closed bool
	conns  []net.Conn
	wg     sync.WaitGroup
}

// start listens and serves each connection with serve; it returns the
// address.
func (s *server) start(t testing.TB, serve func(net.Conn)) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s.ln, s.stop = ln, make(chan struct{})
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			if s.track(c) {
				s.run(func() { serve(c) })
			}
		}
	}()
	t.Cleanup(s.close)
	return ln.Addr().String()
}

// track has c closed when the test ends; after the end it closes c at
// once and reports false.
func (s *server) track(c net.Conn) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		c.Close()
		return false
	}
	s.conns = append(s.conns, c)
	return true
}

// run runs f in a goroutine the end of the test waits for.
func (s *server) run(f func()) {
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		f()
	}()
}

func (s *server) close() {
	close(s.stop)
	s.ln.Close()
	s.mu.Lock()
	s.closed = true
	for _, c := range s.conns {
		c.Close()
	}
	s.mu.Unlock()
	s.wg.Wait()
}

// ClosedAddr returns a loopback address nothing listens on: a port the
// system handed out and that was closed at once, so that a dial of it is
// refused.
func ClosedAddr(t testing.TB) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return addr
}

// pipe dials target for client and relays between them until either side
// closes: client's bytes to the node unchanged, the node's back through
// back. A failed dial closes client.
func (s *server) pipe(client net.Conn, target string, back func(client, node net.Conn)) {
	node, err := net.Dial("tcp", target)
	if err != nil {
		client.Close()
		return
	}
	if !s.track(node) {
		return
	}
	s.run(func() {
		io.Copy(node, client)
		node.Close()
	})
	back(client, node)
	client.Close()
}
