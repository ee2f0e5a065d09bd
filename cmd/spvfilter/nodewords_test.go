package main

import (
	"context"
	"encoding/binary"
	"strings"
	"testing"
	"time"

	"github.com/btcsuite/btcd/chaincfg"
	"github.com/btcsuite/btcd/wire"

	"github.com/spvfilter/spvfilter/peer/client"
	"github.com/spvfilter/spvfilter/peer/peertest"
)

// TestNodeFailureWords: the client's failures to reach a node, told
// from the peer package's typed errors, in the tool's words, naming the
// flag to check: a port nothing listens on, a service that is no node, a
// node of another network (named, with --network), a --proxy that cannot
// be reached (with its address). No Go or library words are left.
func TestNodeFailureWords(t *testing.T) {
	params := &chaincfg.RegressionNetParams
	var testnet [wire.MessageHeaderSize]byte
	binary.LittleEndian.PutUint32(testnet[:4], uint32(wire.TestNet3))
	copy(testnet[4:], "version")
	const refused, proxy = "127.0.0.1:1", "127.0.0.1:1" // nothing listens on port 1
	http, other := peertest.NewAnswering(t, []byte("HTTP/1.1 400 Bad Request\r\n\r\n")), peertest.NewAnswering(t, testnet[:])
	tests := []struct {
		name, peer, proxy string
		want              string
	}{
		{"nothing listens", refused, "", "peer " + refused + ": connection refused: nothing listens there (is a regtest node listening on " + refused + "?)"},
		{"a service that is no node", http, "", "peer " + http + ": it answers with what is no regtest message: no regtest node listens there (another service, or a node of another network?)"},
		{"a node of another network", other, "", "peer " + other + ": it answers with what is no regtest message: it is a testnet3 node, no regtest node listens there (is --network regtest right?)"},
		{"a proxy that is down", refused, "socks5://" + proxy, "peer " + refused + ": the --proxy is unreachable: connection refused: nothing listens there (is the proxy at " + proxy + ", such as Tor, running?)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			c, err := client.Connect(ctx, client.Config{Peers: []string{tt.peer}, ConnectOnly: true, Params: params, Timeout: 5 * time.Second, Proxy: tt.proxy})
			if err == nil {
				c.Close()
				t.Fatal("connected")
			}
			got := nodeFailure(err, params, "").Error()
			if !strings.Contains(got, tt.want) {
				t.Errorf("%v\nin the tool's words: %q\nwant it to hold %q", err, got, tt.want)
			}
			for _, w := range []string{"dial tcp", "peer disconnected", "client:", "protocol violation", "version handshake", "message for network", "SOCKS5"} {
				if strings.Contains(got, w) {
					t.Errorf("%q in %q", w, got)
				}
			}
		})
	}
}
