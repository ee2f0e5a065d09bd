package capture

import (
	"context"
	"errors"
	"io"
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
	http := listenAndServe(t, func(c net.Conn) {
		c.Write([]byte("HTTP/1.0 400 Bad Request\r\n\r\n"))
		time.Sleep(time.Second) // an answer, not a hang-up
	})
	closer := listenAndServe(t, func(c net.Conn) {})
	echo := listenAndServe(t, func(c net.Conn) { io.Copy(c, c) })
	for _, tt := range []struct {
		name, addr string
		net        wire.BitcoinNet
		problem    UpstreamProblem
		got        wire.BitcoinNet
	}{
		{"refused", gone, wire.TestNet, UpstreamUnreachable, 0},
		{"other network", node.ln.Addr().String(), wire.MainNet, UpstreamOtherNetwork, wire.TestNet},
		{"silent", silent, wire.TestNet, UpstreamSilent, 0},
		{"not a node", http, wire.TestNet, UpstreamOtherNetwork, wire.BitcoinNet(0x50545448)},
		{"hangs up", closer, wire.TestNet, UpstreamHungUp, 0},
		{"echo service", echo, wire.TestNet, UpstreamEcho, 0},
	} {
		err := CheckUpstream(context.Background(), tt.addr, tt.net, 300*time.Millisecond)
		if !errors.Is(err, ErrUpstream) || !strings.Contains(err.Error(), tt.addr) {
			t.Errorf("%s: %v, want ErrUpstream naming %s", tt.name, err, tt.addr)
		}
		var ue *UpstreamError
		if !errors.As(err, &ue) || ue.Problem != tt.problem || ue.Got != tt.got || ue.Addr != tt.addr {
			t.Errorf("%s: %v, want an *UpstreamError of problem %d, magic %#x", tt.name, err, tt.problem, uint32(tt.got))
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
