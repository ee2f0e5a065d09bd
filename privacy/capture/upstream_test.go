package capture

import (
	"context"
	"errors"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/btcsuite/btcd/wire"
)

func TestCheckUpstream(t *testing.T) {
	node := startFakeNode(t)
	if err := CheckUpstream(context.Background(), node.ln.Addr().String(), wire.TestNet, time.Second); err != nil {
		t.Fatalf("a node that answers: %v", err)
	}
	// Not there, of another network, silent, not a node at all.
	refused, _ := net.Listen("tcp", "127.0.0.1:0")
	gone := refused.Addr().String()
	refused.Close()
	silent := listenAndServe(t, func(c net.Conn) { time.Sleep(2 * time.Second) })
	http := listenAndServe(t, func(c net.Conn) { c.Write([]byte("HTTP/1.0 400 Bad Request\r\n\r\n")) })
	for _, tt := range []struct {
		name, addr string
		net        wire.BitcoinNet
	}{
		{"refused", gone, wire.TestNet},
		{"other network", node.ln.Addr().String(), wire.MainNet},
		{"silent", silent, wire.TestNet},
		{"not a node", http, wire.TestNet},
	} {
		err := CheckUpstream(context.Background(), tt.addr, tt.net, 300*time.Millisecond)
		if !errors.Is(err, ErrUpstream) || !strings.Contains(err.Error(), tt.addr) {
			t.Errorf("%s: %v, want ErrUpstream naming %s", tt.name, err, tt.addr)
		}
	}
}

// listenAndServe runs serve on every connection to a loopback listener.
func listenAndServe(t *testing.T, serve func(net.Conn)) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				serve(c)
			}()
		}
	}()
	return ln.Addr().String()
}
