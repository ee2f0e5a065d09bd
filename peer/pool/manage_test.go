package pool

import (
	"context"
	"errors"
	"net"
	"slices"
	"strings"
	"testing"

	"github.com/btcsuite/btcd/chaincfg"
)

// TestAddSecondSpelling: adding a member's node written another way (an
// IPv4-mapped IPv6 address, another writing of its port) keeps one
// member; another port is another node, and so is a name, even one the
// resolver maps to the member's address: a name is never looked up to
// compare it (TestNameCannotSwallowOtherNodes).
func TestAddSecondSpelling(t *testing.T) {
	var asked []string
	p := offlinePool(t, []string{"127.0.0.1:18444"}, func(_ context.Context, host string) ([]net.IP, error) {
		asked = append(asked, host)
		if host == "localhost" {
			return []net.IP{net.IPv4(127, 0, 0, 1)}, nil
		}
		return nil, errors.New("unknown host")
	})
	ctx := context.Background()
	for _, addr := range []string{"[::ffff:127.0.0.1]:18444", "127.0.0.1:018444"} {
		p.Add(ctx, addr, false)
		if ms := p.Members(); len(ms) != 1 || ms[0].Addr() != "127.0.0.1:18444" {
			t.Fatalf("after adding %s: members %v", addr, addrs(ms))
		}
	}
	p.Add(ctx, "127.0.0.1:18445", false)
	p.Add(ctx, "localhost:18444", false)
	p.Add(ctx, "LocalHost:18444", false)
	if ms := p.Members(); len(ms) != 3 {
		t.Fatalf("another port and a name (twice): members %v", addrs(ms))
	}
	if len(asked) > 0 {
		t.Errorf("names looked up to compare them: %v", asked)
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

// TestNameCannotSwallowOtherNodes: a host name whose resolver answers
// with several addresses (round-robin DNS, or a resolver the attacker
// answers) is one node at most; the addresses of other nodes it lists
// must not become aliases of it and go undialled, or one DNS answer
// removes every other peer the user gave (an eclipse).
func TestNameCannotSwallowOtherNodes(t *testing.T) {
	p := offlinePool(t, []string{"evil.test:18444"}, func(_ context.Context, host string) ([]net.IP, error) {
		if host == "evil.test" {
			return []net.IP{net.IPv4(127, 0, 0, 1), net.IPv4(127, 0, 0, 2), net.IPv4(127, 0, 0, 3)}, nil
		}
		return nil, errors.New("unknown host")
	})
	ctx := context.Background()
	honest := []string{"127.0.0.1:18444", "127.0.0.2:18444", "127.0.0.3:18444"}
	for _, a := range honest {
		p.Add(ctx, a, false)
	}
	got := addrs(p.Members())
	kept := 0
	for _, a := range honest {
		if slices.Contains(got, a) {
			kept++
		}
	}
	if kept < len(honest)-1 {
		t.Fatalf("members %v: %d of 3 distinct nodes kept, a name listing their addresses took the others", got, kept)
	}
}

// TestNamesBehindDialNotLookedUp: with Config.Dial (a SOCKS5 proxy, Tor)
// Resolver is the DNS seeds' only; the names of the nodes the user gives
// (a .onion above all) are resolved by the proxy and are not sent to
// Resolver to compare them with other members.
func TestNamesBehindDialNotLookedUp(t *testing.T) {
	var asked []string
	p := offlinePool(t, []string{"127.0.0.1:18444"}, func(_ context.Context, host string) ([]net.IP, error) {
		asked = append(asked, host)
		return nil, errors.New("unknown host")
	})
	p.Add(context.Background(), "expyuzz4wqqyqhjn.onion:18444", false)
	p.Add(context.Background(), "mynode.example:18444", false)
	if len(asked) > 0 {
		t.Fatalf("names of given nodes sent to the seeds' resolver behind a proxy: %v", asked)
	}
}

// TestBanOfNameDoesNotSpreadToOtherNodes: a banned member given by name
// whose resolver lists the addresses of honest nodes must not make
// those nodes banned when they are added.
func TestBanOfNameDoesNotSpreadToOtherNodes(t *testing.T) {
	p := offlinePool(t, []string{"evil.test:18444"}, func(_ context.Context, host string) ([]net.IP, error) {
		if host == "evil.test" {
			return []net.IP{net.IPv4(127, 0, 0, 1), net.IPv4(127, 0, 0, 2)}, nil
		}
		return nil, errors.New("unknown host")
	})
	p.Ban(p.Members()[0], errors.New("caught lying"))
	err := p.Add(context.Background(), "127.0.0.2:18444", false)
	if err != nil && strings.Contains(err.Error(), "banned") {
		t.Fatalf("an honest node refused for the ban of a name that listed it: %v", err)
	}
}

// TestGivenNameNotAnAlias: of the peers given, a name the resolver maps to
// another given peer's address is dialled as a node of its own, and the
// address is not taken for a second spelling of the name (an answer
// listing the user's other peers would leave only the name dialled).
func TestGivenNameNotAnAlias(t *testing.T) {
	p := offlinePool(t, []string{"evil.test:18444", "127.0.0.1:18444", "[::ffff:127.0.0.1]:18444"}, func(_ context.Context, host string) ([]net.IP, error) {
		return []net.IP{net.IPv4(127, 0, 0, 1)}, nil
	})
	got := addrs(p.admit())
	if want := []string{"evil.test:18444", "127.0.0.1:18444"}; !slices.Equal(got, want) {
		t.Errorf("dialled %v, want %v (the mapped spelling of 127.0.0.1 once)", got, want)
	}
}

// offlinePool returns a pool of the peers given, ConnectOnly, whose
// dials all fail (no network) and whose names resolve by resolve; it is
// closed when the test ends.
func offlinePool(t *testing.T, peers []string, resolve func(context.Context, string) ([]net.IP, error)) *Pool {
	t.Helper()
	p, _, err := New(Config{
		Params:      &chaincfg.RegressionNetParams,
		Peers:       peers,
		ConnectOnly: true,
		Dial: func(context.Context, string, string) (net.Conn, error) {
			return nil, errors.New("no network in this test")
		},
		Resolver: resolve,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	return p
}
