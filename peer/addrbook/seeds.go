package addrbook

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"slices"
	"strconv"
	"time"

	"github.com/btcsuite/btcd/addrmgr"
	"github.com/btcsuite/btcd/chaincfg"
	"github.com/btcsuite/btcd/wire"
)

// Resolver looks up the IP addresses of a host name. The system's
// resolver fits as
//
//	func(ctx context.Context, host string) ([]net.IP, error) {
//		return net.DefaultResolver.LookupIP(ctx, "ip", host)
//	}
//
// It asks the local network's DNS servers in the clear: a client that
// must reach the network only through a proxy gives a resolver that asks
// through it, or none.
type Resolver func(ctx context.Context, host string) ([]net.IP, error)

// SystemResolver looks host up with the system's resolver.
func SystemResolver(ctx context.Context, host string) ([]net.IP, error) {
	return net.DefaultResolver.LookupIP(ctx, "ip", host)
}

// ErrNoDNSSeeds: the network has no DNS seeds (regtest, simnet); its
// peers must be given.
var ErrNoDNSSeeds = errors.New("the network has no DNS seeds")

// ErrEmptySeed: a DNS seed answered without an address that can be dialled.
var ErrEmptySeed = errors.New("no usable address in the answer")

// SeedError is the failure of one DNS seed.
type SeedError struct {
	// Seed is the name looked up, with its service-bit prefix.
	Seed string
	Err  error
}

// Error names the seed and what failed.
func (e *SeedError) Error() string { return "DNS seed " + e.Seed + ": " + e.Err.Error() }

// Unwrap returns what failed.
func (e *SeedError) Unwrap() error { return e.Err }

const (
	// seedTimeout bounds the lookups of the DNS seeds together.
	seedTimeout = 15 * time.Second
	// maxSeedAddresses caps the addresses taken from one seed's
	// answer, as Bitcoin Core caps them; a seed answers a few dozen.
	maxSeedAddresses = 256
)

// Seed asks the DNS seeds of params (chaincfg's DNSSeeds) for
// nodes on the network's default port, all at once, within seedTimeout
// or ctx's deadline, whichever is sooner. A seed that filters by service
// bits is asked for nodes offering need through the name
// x<need in hex>.<seed> (as Bitcoin Core asks; btcd's connmgr.SeedFromDNS
// does too, except for NODE_NETWORK alone), and its nodes are taken to
// offer need; those of other seeds have services unknown (zero). A seed
// given as an IP or onion address (signet lists some) is a node, taken
// as it is. The addresses are dated three to seven days ago, as Bitcoin
// Core dates them, so that gossip seen since ranks above them.
//
// It returns the addresses of every seed that answered, without repeats,
// and one *SeedError for each seed that failed or answered nothing
// usable (ErrEmptySeed). On a network without DNS seeds it returns one
// error wrapping ErrNoDNSSeeds.
func Seed(ctx context.Context, params *chaincfg.Params, need wire.ServiceFlag, resolve Resolver) ([]*wire.NetAddressV2, []error) {
	if len(params.DNSSeeds) == 0 {
		return nil, []error{fmt.Errorf("addrbook: %s: %w", params.Name, ErrNoDNSSeeds)}
	}
	port, err := strconv.ParseUint(params.DefaultPort, 10, 16)
	if err != nil {
		return nil, []error{fmt.Errorf("addrbook: %s: default port %q: %w", params.Name, params.DefaultPort, err)}
	}
	ctx, cancel := context.WithTimeout(ctx, seedTimeout)
	defer cancel()
	type answer struct {
		i     int
		addrs []*wire.NetAddressV2
		err   error
	}
	// Buffered for every seed: a lookup that outlives ctx (a resolver
	// that ignores it) ends without waiting for a reader.
	answers := make(chan answer, len(params.DNSSeeds))
	for i, seed := range params.DNSSeeds {
		go func() {
			addrs, err := askSeed(ctx, seed, need, uint16(port), resolve)
			answers <- answer{i, addrs, err}
		}()
	}
	perSeed := make([][]*wire.NetAddressV2, len(params.DNSSeeds))
	errs := make([]error, len(params.DNSSeeds))
	answered := make([]bool, len(params.DNSSeeds))
wait:
	for range params.DNSSeeds {
		select {
		case a := <-answers:
			perSeed[a.i], errs[a.i], answered[a.i] = a.addrs, a.err, true
		case <-ctx.Done():
			for i, seed := range params.DNSSeeds {
				if !answered[i] {
					errs[i] = &SeedError{Seed: seedName(seed, need), Err: ctx.Err()}
				}
			}
			break wait
		}
	}
	var out []*wire.NetAddressV2
	seen := make(map[string]bool)
	for _, addrs := range perSeed {
		for _, na := range addrs {
			if k := addrmgr.NetAddressKey(na); !seen[k] {
				seen[k] = true
				out = append(out, na)
			}
		}
	}
	if errs = slices.DeleteFunc(errs, func(err error) bool { return err == nil }); len(errs) == 0 {
		errs = nil
	}
	return out, errs
}

// seedName is the name a seed is asked under for nodes offering need.
func seedName(seed chaincfg.DNSSeed, need wire.ServiceFlag) string {
	if seed.HasFiltering && need != 0 {
		return fmt.Sprintf("x%x.%s", uint64(need), seed.Host)
	}
	return seed.Host
}

// askSeed returns a seed's nodes.
func askSeed(ctx context.Context, seed chaincfg.DNSSeed, need wire.ServiceFlag, port uint16, resolve Resolver) ([]*wire.NetAddressV2, error) {
	if na, ok := seedNode(seed.Host, port); ok {
		na.Timestamp = seedTime()
		return []*wire.NetAddressV2{na}, nil
	}
	name := seedName(seed, need)
	var services wire.ServiceFlag
	if name != seed.Host {
		services = need
	}
	ips, err := resolve(ctx, name)
	if err != nil {
		return nil, &SeedError{Seed: name, Err: err}
	}
	var out []*wire.NetAddressV2
	for _, ip := range ips {
		if len(out) == maxSeedAddresses {
			break
		}
		if ip4 := ip.To4(); ip4 != nil {
			ip = ip4
		}
		if len(ip) != net.IPv4len && len(ip) != net.IPv6len || ip.IsUnspecified() {
			continue
		}
		out = append(out, wire.NetAddressV2FromBytes(seedTime(), services, ip, port))
	}
	if len(out) == 0 {
		return nil, &SeedError{Seed: name, Err: ErrEmptySeed}
	}
	return out, nil
}

// seedTime is when a seed's node was seen: three to seven days ago.
func seedTime() time.Time {
	return time.Now().Add(-3*24*time.Hour - rand.N(4*24*time.Hour))
}

// seedNode parses a seed given as a node's address, an IP or onion
// address with or without a port.
func seedNode(host string, port uint16) (*wire.NetAddressV2, bool) {
	hostport := host
	if _, _, err := net.SplitHostPort(host); err != nil {
		hostport = net.JoinHostPort(host, strconv.Itoa(int(port)))
	}
	na, err := ParseAddr(hostport, 0, time.Time{})
	return na, err == nil
}
