package main

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/btcsuite/btcd/chaincfg"
	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/btcsuite/btcd/wire"

	"github.com/spvfilter/spvfilter/peer"
	"github.com/spvfilter/spvfilter/peer/addrbook"
	"github.com/spvfilter/spvfilter/peer/client"
	"github.com/spvfilter/spvfilter/peer/peertest"
	"github.com/spvfilter/spvfilter/peer/pool"
)

// TestNodeFailureWords: the client's failures to reach a node, told
// from the peer package's typed errors, in the tool's words, naming the
// flag the node came from (--peer, --connect; "peer" for a node no flag
// gave) and the flag to check: a port nothing listens on, a service that is no node, a
// node of another network (named, with --network), a --proxy that cannot
// be reached (with its address), a --proxy that does not connect (with
// its reply). No Go or library words are left.
func TestNodeFailureWords(t *testing.T) {
	params := &chaincfg.RegressionNetParams
	var testnet [wire.MessageHeaderSize]byte
	binary.LittleEndian.PutUint32(testnet[:4], uint32(wire.TestNet3))
	copy(testnet[4:], "version")
	const refused, proxy = "127.0.0.1:1", "127.0.0.1:1" // nothing listens on port 1
	http, other := peertest.NewAnswering(t, []byte("HTTP/1.1 400 Bad Request\r\n\r\n")), peertest.NewAnswering(t, testnet[:])
	garbled := peertest.NewAnswering(t, undecodableVersion(params.Net))
	silent, closer := peertest.NewAnswering(t, nil), newCloser(t) // an RPC port, a node that drops another network's version
	refusing := peertest.NewSOCKSProxy(t, peertest.SOCKSConfig{Refuse: peertest.SOCKSConnectionRefused}).Addr
	tests := []struct {
		name, peer, proxy, flag string
		want                    string
	}{
		{"nothing listens", refused, "", "--connect", "--connect " + refused + ": connection refused: nothing listens there (is a regtest node listening on " + refused + "?)"},
		{"nothing listens on a --peer", refused, "", "--peer", "--peer " + refused + ": connection refused: nothing listens there (is a regtest node listening on " + refused + "?)"},
		{"a node no flag gave", refused, "", "", "peer " + refused + ": connection refused: nothing listens there (is a regtest node listening on " + refused + "?)"},
		{"a service that is no node", http, "", "--connect", "--connect " + http + ": it answers with what is no regtest message: no regtest node listens there (another service, or a node of another network?)"},
		{"a node of another network", other, "", "--peer", "--peer " + other + ": it answers with what is no regtest message: it is a testnet3 node, no regtest node listens there (is --network regtest right?)"},
		{"a service that does not answer", silent, "", "--connect", "--connect " + silent + ": no answer to the version message within 2s: no regtest node answers there (another service, such as a node's RPC port? regtest nodes listen on port 18444 by default)"},
		{"a version that does not decode", garbled, "", "--connect", "--connect " + garbled + `: it answers the version message with a "version" message that does not decode: no working regtest node listens there (another service, or a node of another network?)`},
		{"a node that hangs up", closer, "", "--peer", "--peer " + closer + ": it hung up on the version message: a node of another network does, as does one that bans this address (is --network regtest right?)"},
		{"a proxy that is no proxy", refused, "socks5://" + silent, "--connect", "--connect " + refused + ": the --proxy at " + silent + " did not connect to it: no answer in time (is " + silent + " a socks5:// proxy, such as Tor? can it reach " + refused + "?)"},
		{"a proxy that refuses", refused, "socks5://" + refusing, "--peer", "--peer " + refused + ": the --proxy at " + refusing + ` did not connect to it: it replied "connection refused" (is ` + refusing + " a socks5:// proxy, such as Tor? can it reach " + refused + "?)"},
		{"a proxy that is down", refused, "socks5://" + proxy, "--connect", "--connect " + refused + ": the --proxy is unreachable: connection refused: nothing listens there (is the proxy at " + proxy + ", such as Tor, running?)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			c, err := client.Connect(ctx, client.Config{Peers: []string{tt.peer}, ConnectOnly: true, Params: params, Timeout: 2 * time.Second, Proxy: tt.proxy})
			if err == nil {
				c.Close()
				t.Fatal("connected")
			}
			from := nodeFlags{}
			if tt.flag != "" {
				from[tt.peer] = tt.flag
			}
			got := nodeFailureFrom(err, params, "", from).Error()
			if !strings.Contains(got, tt.want) {
				t.Errorf("%v\nin the tool's words: %q\nwant it to hold %q", err, got, tt.want)
			}
			for _, w := range []string{"dial tcp", "peer disconnected", "peer stalled", "i/o timeout", "read tcp", "is the node on", "client:", "protocol violation", "version handshake", "message for network", "SOCKS5"} {
				if strings.Contains(got, w) {
					t.Errorf("%q in %q", w, got)
				}
			}
		})
	}
}

// undecodableVersion is a version message of network net whose payload,
// one byte, is whole and matches its checksum but does not decode.
func undecodableVersion(net wire.BitcoinNet) []byte {
	payload := []byte{0}
	msg := make([]byte, wire.MessageHeaderSize, wire.MessageHeaderSize+len(payload))
	binary.LittleEndian.PutUint32(msg[:4], uint32(net))
	copy(msg[4:16], "version")
	binary.LittleEndian.PutUint32(msg[16:20], uint32(len(payload)))
	copy(msg[20:24], chainhash.DoubleHashB(payload)[:4])
	return append(msg, payload...)
}

// newCloser starts a listener on 127.0.0.1 that closes every connection
// at once, as btcd does to a version message of another network; it
// stops when the test ends and returns its address.
func newCloser(t *testing.T) string {
	t.Helper()
	return listenLoopback(t, func(c net.Conn) { c.Close() })
}

// TestSeedFailureWords: a DNS seed that cannot be looked up is named
// without the resolver's address, after the failure of the --peer given.
func TestSeedFailureWords(t *testing.T) {
	params := &chaincfg.TestNet3Params
	const node = "127.0.0.1:1"
	given := &peer.PeerError{Peer: node, Op: peer.OpConnect, Err: fmt.Errorf("%w: %w", peer.ErrDisconnected,
		&net.OpError{Op: "dial", Net: "tcp", Err: &os.SyscallError{Syscall: "connect", Err: syscall.ECONNREFUSED}})}
	seed := func(name string, dns *net.DNSError) error {
		return &addrbook.SeedError{Seed: name, Err: dns}
	}
	tests := []struct {
		name string
		err  error
		want string
	}{
		{"not found", seed("x49.seed.example", &net.DNSError{Err: "no such host", Name: "x49.seed.example", Server: "10.0.0.53:53", IsNotFound: true}),
			"DNS seed x49.seed.example not found"},
		{"no answer", seed("x49.seed.example", &net.DNSError{Err: "i/o timeout", Name: "x49.seed.example", Server: "10.0.0.53:53", IsTimeout: true}),
			"DNS seed x49.seed.example: no answer in time"},
		{"refused", seed("x49.seed.example", &net.DNSError{Err: "server misbehaving", Name: "x49.seed.example", Server: "10.0.0.53:53"}),
			"DNS seed x49.seed.example: cannot be looked up: server misbehaving"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := fmt.Errorf("client: connect: %w; finding peers: %w", given, errors.Join(tt.err))
			got := nodeFailureFrom(err, params, "", nodeFlags{node: "--peer"}).Error()
			want := "--peer " + node + ": connection refused: nothing listens there (is a testnet3 node listening on " + node + "?); finding peers: " + tt.want
			if !strings.HasSuffix(got, want) {
				t.Errorf("%v\nin the tool's words: %q\nwant it to hold %q", err, got, want)
			}
			for _, w := range []string{"lookup", "10.0.0.53", "dial tcp"} {
				if strings.Contains(got, w) {
					t.Errorf("%q in %q", w, got)
				}
			}
		})
	}
}

// TestNoNodeReachedWords: when no node was given and the DNS seeds gave
// none, the failure asks whether the machine is online and names the flag
// that gives a node, once, after the seeds' failures; when a node was
// given, it is named by its flag and no other flag is.
func TestNoNodeReachedWords(t *testing.T) {
	params := &chaincfg.TestNet3Params
	seeds := errors.Join(&addrbook.SeedError{Seed: "a.seed.example", Err: &net.DNSError{Err: "no such host", Name: "a.seed.example", IsNotFound: true}})
	given := &peer.PeerError{Peer: "127.0.0.1:1", Op: peer.OpConnect, Err: fmt.Errorf("%w: %w", peer.ErrDisconnected,
		&net.OpError{Op: "dial", Net: "tcp", Err: &os.SyscallError{Syscall: "connect", Err: syscall.ECONNREFUSED}})}
	tests := []struct {
		name  string
		err   error
		from  nodeFlags
		want  string
		never []string
	}{
		{"offline, no node given", fmt.Errorf("client: connect: %w; finding peers: %w", client.ErrNoPeers, seeds), nodeFlags{},
			"no node could be reached; finding peers: DNS seed a.seed.example not found (is this machine online? a node of your own can be given with --peer HOST:PORT)",
			[]string{"--connect", "client:"}},
		{"offline, several seeds", fmt.Errorf("client: connect: %w; finding peers: %w", client.ErrNoPeers, pool.Errors{seeds,
			&addrbook.SeedError{Seed: "b.seed.example", Err: &net.DNSError{Err: "no such host", Name: "b.seed.example", IsNotFound: true}},
			&addrbook.SeedError{Seed: "c.seed.example", Err: &net.DNSError{Err: "i/o timeout", Name: "c.seed.example", IsTimeout: true}},
			&addrbook.SeedError{Seed: "d.seed.example", Err: &net.DNSError{Err: "no such host", Name: "d.seed.example", IsNotFound: true}}}), nodeFlags{},
			"no node could be reached; finding peers: DNS seeds a.seed.example, b.seed.example and d.seed.example not found; DNS seed c.seed.example: no answer in time (is this machine online? a node of your own can be given with --peer HOST:PORT)",
			[]string{"--connect", "client:"}},
		{"a node given", fmt.Errorf("client: connect: %w; finding peers: %w", given, seeds), nodeFlags{"127.0.0.1:1": "--connect"},
			"--connect 127.0.0.1:1: connection refused: nothing listens there (is a testnet3 node listening on 127.0.0.1:1?); finding peers: DNS seed a.seed.example not found",
			[]string{"--peer", "online"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := nodeFailureFrom(tt.err, params, "", tt.from).Error()
			if !strings.HasSuffix(got, tt.want) {
				t.Errorf("in the tool's words: %q\nwant it to end in %q", got, tt.want)
			}
			for _, w := range tt.never {
				if strings.Contains(got, w) {
					t.Errorf("%q in %q", w, got)
				}
			}
		})
	}
}

// TestNodesNamedByFlag: a warning that names a node the user gave, in any
// of the words the client uses (peer X, node X, the address alone), names
// it by its flag at its first mention, once; an address named by its flag
// already, one of a node no flag gave, or one a longer address holds is
// left as it is.
func TestNodesNamedByFlag(t *testing.T) {
	nf := nodeFlags{"127.0.0.1:1": "--peer", "127.0.0.1:2": "--connect", "[::1]:3": "--peer"}
	for _, tt := range []struct{ in, want string }{
		{"peer 127.0.0.1:1: connection refused", "--peer 127.0.0.1:1: connection refused"},
		{"peer 127.0.0.1:2 was not used: unreachable", "--connect 127.0.0.1:2 was not used: unreachable"},
		{"node 127.0.0.1:1 matched 9 of 200 transactions after 2 fresh filters",
			"--peer 127.0.0.1:1 matched 9 of 200 transactions after 2 fresh filters"},
		{"heights 5..9 rest on one peer, 127.0.0.1:2: no other peer's chain reached them",
			"heights 5..9 rest on one peer, --connect 127.0.0.1:2: no other peer's chain reached them"},
		{"leak: 127.0.0.1:1 holds 1 filter", "leak: --peer 127.0.0.1:1 holds 1 filter"},
		{"peer 127.0.0.1:1: nothing listens (is a regtest node listening on 127.0.0.1:1?)",
			"--peer 127.0.0.1:1: nothing listens (is a regtest node listening on 127.0.0.1:1?)"},
		{"the 2 peers together hold 2 filters\n  127.0.0.1:1, abandoned: 1 filter\n  127.0.0.1:2: 1 filter",
			"the 2 peers together hold 2 filters\n  --peer 127.0.0.1:1, abandoned: 1 filter\n  --connect 127.0.0.1:2: 1 filter"},
		{"peer [::1]:3 is banned: forged headers", "--peer [::1]:3 is banned: forged headers"},
		{"--peer 127.0.0.1:1: connection refused", "--peer 127.0.0.1:1: connection refused"},
		{"peer 127.0.0.1:10: connection refused", "peer 127.0.0.1:10: connection refused"},
		{"peer 127.0.0.1:9: connection refused", "peer 127.0.0.1:9: connection refused"},
		{"rests on one peer, 127.0.0.1:1.", "rests on one peer, --peer 127.0.0.1:1."},
		{"peer 2127.0.0.1:1: x", "peer 2127.0.0.1:1: x"},
	} {
		if got := nf.named(tt.in); got != tt.want {
			t.Errorf("named(%q)\n got %q\nwant %q", tt.in, got, tt.want)
		}
	}
}

// TestStatusWords: a peer's reason is said in the tool's words from its
// error (a refused dial, a node of another network, no answer to the
// version message), not its text, without naming the peer again; a
// reason whose error is no failure to connect, or that has none, is the
// client's.
func TestStatusWords(t *testing.T) {
	const addr = "127.0.0.1:1"
	params := &chaincfg.RegressionNetParams
	refused := &peer.PeerError{Peer: addr, Op: peer.OpConnect,
		Err: fmt.Errorf("%w: %w", peer.ErrDisconnected, &net.OpError{Op: "dial", Net: "tcp", Err: os.NewSyscallError("connect", syscall.ECONNREFUSED)})}
	mainnet := &peer.PeerError{Peer: addr, Op: peer.OpHandshake, Err: &peer.NetworkError{Got: wire.MainNet, Want: params.Net}}
	silent := &peer.PeerError{Peer: addr, Op: peer.OpHandshake, Err: &peer.TimeoutError{What: "no complete answer", Within: 30 * time.Second}}
	forged := &peer.PeerError{Peer: addr, Op: "getcfheaders", Err: fmt.Errorf("%w: forged header", peer.ErrProtocol)}
	hungUp := &peer.PeerError{Peer: addr, Op: "getcfilters", Err: fmt.Errorf("%w: connection closed", peer.ErrDisconnected)}
	for _, tt := range []struct {
		name string
		st   client.PeerStatus
		want string
	}{
		{"refused", client.PeerStatus{Address: addr, Reason: "unreachable: " + refused.Error(), Err: refused},
			"unreachable: connection refused: nothing listens there (is a regtest node listening on 127.0.0.1:1?)"},
		{"another network", client.PeerStatus{Address: addr, Reason: "unreachable: " + mainnet.Error(), Err: mainnet},
			"unreachable: it answers with what is no regtest message: it is a mainnet node, no regtest node listens there (is --network regtest right?)"},
		{"silent", client.PeerStatus{Address: addr, Reason: "unreachable: " + silent.Error(), Err: silent},
			"unreachable: no answer to the version message within 30s: no regtest node answers there (another service, such as a node's RPC port? regtest nodes listen on port 18444 by default)"},
		// A redial refused, the error kept the first failure's (the
		// node hung up): the reason is said all the same.
		{"refused on a redial", client.PeerStatus{Address: addr, Reason: "unreachable: " + refused.Error(), Err: hungUp},
			"unreachable: connection refused: nothing listens there (is a regtest node listening on 127.0.0.1:1?)"},
		{"banned", client.PeerStatus{Address: addr, Banned: true, Reason: forged.Error(), Err: forged}, forged.Error()},
		{"no error", client.PeerStatus{Address: addr, Reason: "connecting"}, "connecting"},
		{"in use", client.PeerStatus{Address: addr}, ""},
	} {
		if got := statusWords(tt.st, params); got != tt.want {
			t.Errorf("%s:\n got %q\nwant %q", tt.name, got, tt.want)
		}
	}
}
