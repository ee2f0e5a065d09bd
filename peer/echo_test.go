package peer

import (
	"context"
	"errors"
	"io"
	"net"
	"testing"
	"time"

	"github.com/btcsuite/btcd/chaincfg"
)

// TestConnectRefusesEcho: a TCP echo service on the port sends back the
// version message it is sent, then the verack. The handshake must end at
// the version, with ErrEcho, at once: not take the echo for a node that
// advertises this client's own services and user agent.
func TestConnectRefusesEcho(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				io.Copy(c, c)
			}()
		}
	}()
	start := time.Now()
	p, err := Dial(context.Background(), Config{Addr: ln.Addr().String(), Params: &chaincfg.RegressionNetParams, Timeout: 5 * time.Second})
	if err == nil {
		p.Close()
		t.Fatal("an echo service was taken for a node")
	}
	var pe *PeerError
	if !errors.Is(err, ErrEcho) || !errors.As(err, &pe) || pe.Op != OpHandshake {
		t.Fatalf("err = %v, want a handshake *PeerError holding ErrEcho", err)
	}
	if errors.Is(err, ErrProtocol) {
		t.Errorf("err = %v: an echo proves no lie, it must not read as a protocol violation", err)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("refused after %v, want at once", d)
	}
}
