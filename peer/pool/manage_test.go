package pool

import (
	"context"
	"errors"
	"net"
	"testing"

	"github.com/btcsuite/btcd/chaincfg"
)

// TestAddSecondSpelling: adding a member's node under another spelling
// (an IPv4-mapped IPv6 address, a name the resolver maps to it, another
// writing of its port) keeps one member; another port is another node.
func TestAddSecondSpelling(t *testing.T) {
	var asked []string
	p, _, err := New(Config{
		Params:      &chaincfg.RegressionNetParams,
		Peers:       []string{"127.0.0.1:18444"},
		ConnectOnly: true,
		Dial: func(context.Context, string, string) (net.Conn, error) {
			return nil, errors.New("no network in this test")
		},
		Resolver: func(_ context.Context, host string) ([]net.IP, error) {
			asked = append(asked, host)
			if host == "localhost" {
				return []net.IP{net.IPv4(127, 0, 0, 1)}, nil
			}
			return nil, errors.New("unknown host")
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	ctx := context.Background()
	for _, addr := range []string{"[::ffff:127.0.0.1]:18444", "localhost:18444", "127.0.0.1:018444"} {
		p.Add(ctx, addr, false)
		if ms := p.Members(); len(ms) != 1 || ms[0].Addr() != "127.0.0.1:18444" {
			t.Fatalf("after adding %s: members %v", addr, addrs(ms))
		}
	}
	if len(asked) == 0 {
		t.Fatal("the name was not looked up through the resolver given")
	}
	p.Add(ctx, "127.0.0.1:18445", false)
	p.Add(ctx, "nowhere:18444", false)
	if ms := p.Members(); len(ms) != 3 {
		t.Fatalf("another port and an unknown name: members %v", addrs(ms))
	}
}

// addrs returns the members' addresses.
func addrs(ms []*Member) []string {
	var out []string
	for _, m := range ms {
		out = append(out, m.Addr())
	}
	return out
}
