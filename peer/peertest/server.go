package peertest

import (
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
