package addrbook

import (
	"context"
	"errors"
	"fmt"
	"net"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/btcsuite/btcd/addrmgr"
	"github.com/btcsuite/btcd/chaincfg"
	"github.com/btcsuite/btcd/wire"
)

// fakeDNS answers names from a table, recording what it was asked.
type fakeDNS struct {
	answers map[string][]net.IP
	fail    map[string]error

	mu    sync.Mutex
	asked []string
}

func (d *fakeDNS) resolve(_ context.Context, host string) ([]net.IP, error) {
	d.mu.Lock()
	d.asked = append(d.asked, host)
	d.mu.Unlock()
	if err := d.fail[host]; err != nil {
		return nil, err
	}
	if ips, ok := d.answers[host]; ok {
		return ips, nil
	}
	return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
}

// withSeeds returns a copy of params with the given seeds and port.
func withSeeds(params *chaincfg.Params, port string, seeds ...chaincfg.DNSSeed) *chaincfg.Params {
	p := *params
	p.DNSSeeds, p.DefaultPort = seeds, port
	return &p
}

func ips(s ...string) []net.IP {
	out := make([]net.IP, len(s))
	for i, a := range s {
		out[i] = net.ParseIP(a)
	}
	return out
}

func TestSeedAddresses(t *testing.T) {
	const need = wire.SFNodeNetwork | wire.SFNodeWitness | wire.SFNodeCF
	many := make([]net.IP, 10_000)
	for i := range many {
		many[i] = net.IPv4(10, byte(i>>16), byte(i>>8), byte(i))
	}
	type want struct {
		addr     string
		services wire.ServiceFlag
	}
	tests := []struct {
		name     string
		seeds    []chaincfg.DNSSeed
		dns      *fakeDNS
		want     []want
		wantN    int      // when want is nil: how many
		asked    []string // in any order
		failures []string // the seeds named by the errors, in order
		errIs    error
	}{{
		name:  "a filtering seed is asked for the services, the others plainly",
		seeds: []chaincfg.DNSSeed{{Host: "a.example", HasFiltering: true}, {Host: "b.example"}},
		dns: &fakeDNS{answers: map[string][]net.IP{
			"x49.a.example": ips("127.0.0.1", "127.0.0.2"),
			"b.example":     ips("127.0.0.3", "::1"),
		}},
		want:  []want{{"127.0.0.1:18444", need}, {"127.0.0.2:18444", need}, {"127.0.0.3:18444", 0}, {"[::1]:18444", 0}},
		asked: []string{"x49.a.example", "b.example"},
	}, {
		name:  "a failing seed is named, the others answer",
		seeds: []chaincfg.DNSSeed{{Host: "bad.example", HasFiltering: true}, {Host: "good.example"}},
		dns: &fakeDNS{answers: map[string][]net.IP{"good.example": ips("127.0.0.1")},
			fail: map[string]error{"x49.bad.example": errors.New("server misbehaving")}},
		want:     []want{{"127.0.0.1:18444", 0}},
		asked:    []string{"x49.bad.example", "good.example"},
		failures: []string{"x49.bad.example"},
	}, {
		name:     "a seed that answers nothing",
		seeds:    []chaincfg.DNSSeed{{Host: "empty.example"}, {Host: "unspecified.example"}},
		dns:      &fakeDNS{answers: map[string][]net.IP{"empty.example": nil, "unspecified.example": ips("0.0.0.0", "::")}},
		asked:    []string{"empty.example", "unspecified.example"},
		failures: []string{"empty.example", "unspecified.example"},
		errIs:    ErrEmptySeed,
	}, {
		name:  "repeats across seeds are dropped",
		seeds: []chaincfg.DNSSeed{{Host: "a.example"}, {Host: "b.example"}},
		dns: &fakeDNS{answers: map[string][]net.IP{
			"a.example": ips("127.0.0.1", "127.0.0.2", "127.0.0.1"),
			"b.example": ips("127.0.0.2", "127.0.0.3"),
		}},
		want:  []want{{"127.0.0.1:18444", 0}, {"127.0.0.2:18444", 0}, {"127.0.0.3:18444", 0}},
		asked: []string{"a.example", "b.example"},
	}, {
		name:  "seeds given as nodes are not looked up",
		seeds: []chaincfg.DNSSeed{{Host: "127.0.0.5"}, {Host: "[::1]:9"}, {Host: onion(1) + ":38333"}, {Host: "2001:db8::1"}},
		want:  []want{{"127.0.0.5:18444", 0}, {"[::1]:9", 0}, {onion(1) + ":38333", 0}, {"[2001:db8::1]:18444", 0}},
	}, {
		name:  "a long answer is cut",
		seeds: []chaincfg.DNSSeed{{Host: "long.example"}},
		dns:   &fakeDNS{answers: map[string][]net.IP{"long.example": many}},
		wantN: maxSeedAddresses,
		asked: []string{"long.example"},
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			params := withSeeds(&chaincfg.RegressionNetParams, "18444", tc.seeds...)
			if tc.dns == nil {
				tc.dns = &fakeDNS{}
			}
			addrs, errs := Seed(context.Background(), params, need, tc.dns.resolve)
			if tc.want != nil || tc.wantN == 0 {
				var got []want
				for _, a := range addrs {
					got = append(got, want{addrmgr.NetAddressKey(a), a.Services})
				}
				if !slices.Equal(got, tc.want) {
					t.Errorf("addresses %v, want %v", got, tc.want)
				}
			} else if len(addrs) != tc.wantN {
				t.Errorf("%d addresses, want %d", len(addrs), tc.wantN)
			}
			for _, a := range addrs {
				if ago := time.Since(a.Timestamp); ago < 3*24*time.Hour || ago > 7*24*time.Hour+time.Minute {
					t.Errorf("%s dated %v ago, want three to seven days", addrmgr.NetAddressKey(a), ago)
				}
			}
			if !slices.Equal(sorted(tc.dns.asked), sorted(tc.asked)) {
				t.Errorf("asked %q, want %q", tc.dns.asked, tc.asked)
			}
			var failed []string
			for _, err := range errs {
				var se *SeedError
				if !errors.As(err, &se) {
					t.Fatalf("error %v is no *SeedError", err)
				}
				if tc.errIs != nil && !errors.Is(err, tc.errIs) {
					t.Errorf("error %v, want %v", err, tc.errIs)
				}
				failed = append(failed, se.Seed)
			}
			if !slices.Equal(failed, tc.failures) {
				t.Errorf("failed seeds %q (%v), want %q", failed, errs, tc.failures)
			}
		})
	}
}

func TestSeedAddressesNoSeeds(t *testing.T) {
	for _, params := range []*chaincfg.Params{&chaincfg.RegressionNetParams, &chaincfg.SimNetParams} {
		called := false
		addrs, errs := Seed(context.Background(), params, 0, func(context.Context, string) ([]net.IP, error) {
			called = true
			return nil, nil
		})
		if addrs != nil || len(errs) != 1 || !errors.Is(errs[0], ErrNoDNSSeeds) || called {
			t.Errorf("%s: %v, %v (resolver called: %v); want one ErrNoDNSSeeds", params.Name, addrs, errs, called)
		}
	}
}

func TestSeedAddressesMainnetNames(t *testing.T) {
	// chaincfg's mainnet seeds, asked for compact filters and witness.
	var dns fakeDNS
	Seed(context.Background(), &chaincfg.MainNetParams, wire.SFNodeCF|wire.SFNodeWitness, dns.resolve)
	var want []string
	for _, s := range chaincfg.MainNetParams.DNSSeeds {
		if s.HasFiltering {
			want = append(want, "x48."+s.Host)
		} else {
			want = append(want, s.Host)
		}
	}
	if len(want) == 0 || !slices.Equal(sorted(dns.asked), sorted(want)) {
		t.Errorf("asked %q, want %q", dns.asked, want)
	}
}

func TestSeedAddressesConcurrentAndTimely(t *testing.T) {
	const n = 5
	var seeds []chaincfg.DNSSeed
	for i := range n {
		seeds = append(seeds, chaincfg.DNSSeed{Host: fmt.Sprintf("s%d.example", i)})
	}
	seeds = append(seeds, chaincfg.DNSSeed{Host: "stuck.example"})
	params := withSeeds(&chaincfg.RegressionNetParams, "18444", seeds...)
	// Each lookup answers only when all have started, so the answers
	// come only if they run at once; stuck.example never answers, even
	// when the context ends.
	var started sync.WaitGroup
	started.Add(n + 1)
	release := make(chan struct{})
	t.Cleanup(func() { close(release) })
	resolve := func(ctx context.Context, host string) ([]net.IP, error) {
		started.Done()
		if host == "stuck.example" {
			<-release
			return nil, errors.New("released")
		}
		started.Wait()
		return ips("127.0.0.1"), nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	done := make(chan struct{})
	var addrs []*wire.NetAddressV2
	var errs []error
	go func() {
		addrs, errs = Seed(ctx, params, 0, resolve)
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("Seed did not return after its context ended")
	}
	var se *SeedError
	if len(addrs) != 1 || len(errs) != 1 || !errors.As(errs[0], &se) || se.Seed != "stuck.example" || !errors.Is(errs[0], context.DeadlineExceeded) {
		t.Errorf("addresses %v, errors %v; want 127.0.0.1 and stuck.example's deadline", addrs, errs)
	}
}
