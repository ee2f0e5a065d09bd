package addrbook

import (
	"encoding/base32"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"net"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/btcsuite/btcd/addrmgr"
	"github.com/btcsuite/btcd/wire"
	"github.com/spvfilter/spvfilter/peer/internal/diskfile"
)

// candidate is an address pick may return.
type candidate struct {
	addr        string
	services    wire.ServiceFlag
	lastAttempt time.Time
	// attempts counts the failed attempts since the last success, where
	// the store tells them (btcd's address manager weighs them itself).
	attempts int
}

// Known is what the book knows of an address, for listings.
type Known struct {
	Addr        string           `json:"addr"` // host:port
	Services    wire.ServiceFlag `json:"services"`
	LastSeen    time.Time        `json:"last_seen,omitzero"` // as gossiped, or when connected
	LastAttempt time.Time        `json:"last_attempt,omitzero"`
	LastSuccess time.Time        `json:"last_success,omitzero"`
	Attempts    int              `json:"attempts,omitempty"` // since the last success
	Tried       bool             `json:"tried,omitempty"`    // served the client well once
}

// groupKey returns the network group of hostport: for a publicly routable
// address btcd's addrmgr.GroupKey (the /16 of IPv4, the /32 of IPv6, /36
// in Hurricane Electric's range, "tor:" and four bits of the key for Tor);
// for other IP addresses the /16 or /32 alone ("127.0.0.0" for every
// IPv4 loopback address, "10.1.0.0"), where btcd puts all in one
// "unroutable" or "local" group; for a host name "host:" and the name.
func groupKey(hostport string) string {
	na, err := ParseAddr(hostport, 0, time.Time{})
	if err != nil {
		host, _, err := net.SplitHostPort(hostport)
		if err != nil {
			host = hostport
		}
		return "host:" + strings.ToLower(host)
	}
	if addrmgr.IsRoutable(na) {
		return addrmgr.GroupKey(na)
	}
	ip := na.ToLegacy().IP
	if ip4 := ip.To4(); ip4 != nil {
		return ip4.Mask(net.CIDRMask(16, 32)).String()
	}
	return ip.Mask(net.CIDRMask(32, 128)).String()
}

// IsOnion reports whether hostport is a .onion host:port.
func IsOnion(hostport string) bool {
	host, _, err := net.SplitHostPort(hostport)
	return err == nil && len(host) > 6 && host[len(host)-6:] == ".onion"
}

// ParseAddr parses a host:port whose host is an IP address or a Tor
// onion address into a network address with services and timestamp ts.
func ParseAddr(hostport string, services wire.ServiceFlag, ts time.Time) (*wire.NetAddressV2, error) {
	host, portStr, err := net.SplitHostPort(hostport)
	if err != nil {
		return nil, err
	}
	port, err := strconv.ParseUint(portStr, 10, 16)
	if err != nil {
		return nil, fmt.Errorf("port of %q: %w", hostport, err)
	}
	if ip := net.ParseIP(host); ip != nil {
		if ip4 := ip.To4(); ip4 != nil {
			ip = ip4
		}
		return wire.NetAddressV2FromBytes(ts, services, ip, uint16(port)), nil
	}
	key, err := onionKey(host)
	if err != nil {
		return nil, err
	}
	return wire.NetAddressV2FromBytes(ts, services, key, uint16(port)), nil
}

// errNotAddress: a host that is neither an IP address nor an onion
// address.
var errNotAddress = errors.New("not an IP or onion address")

// onionKey decodes a Tor onion address: the ten bytes of a v2 address,
// the 32 bytes of the key of a v3 one (BIP 155).
func onionKey(host string) ([]byte, error) {
	name, ok := strings.CutSuffix(strings.ToLower(host), ".onion")
	if !ok || (len(host) != wire.TorV2EncodedSize && len(host) != wire.TorV3EncodedSize) {
		return nil, fmt.Errorf("%q: %w", host, errNotAddress)
	}
	data, err := base32.StdEncoding.DecodeString(strings.ToUpper(name))
	if err != nil {
		return nil, fmt.Errorf("%q: %w", host, err)
	}
	if len(host) == wire.TorV3EncodedSize {
		data = data[:wire.TorV3Size]
	}
	return data, nil
}

// readBookFile decodes the JSON file name, of at most limit bytes, into
// v; a file that is larger, not a regular file, or cannot be decoded is
// errDamaged.
func readBookFile(name string, limit int64, v any) error {
	data, err := readLimited(name, limit)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(data, v); err != nil {
		return fmt.Errorf("%w: %w", errDamaged, err)
	}
	return nil
}

// shuffled returns the candidates in a random order.
func shuffled(cs []candidate) []candidate {
	rand.Shuffle(len(cs), func(i, j int) { cs[i], cs[j] = cs[j], cs[i] })
	return cs
}

// validHostPort reports whether s is a host and a port other than 0.
func validHostPort(s string) bool {
	host, port, err := net.SplitHostPort(s)
	if err != nil || host == "" {
		return false
	}
	n, err := strconv.ParseUint(port, 10, 16)
	return err == nil && n != 0
}

// readLimited reads the book file name, of at most limit bytes; one
// that is larger, not a regular file, or a symbolic link to nothing is
// errDamaged.
func readLimited(name string, limit int64) ([]byte, error) {
	data, err := diskfile.ReadLimited(name, limit)
	switch {
	case errors.Is(err, diskfile.ErrTooLarge), errors.Is(err, diskfile.ErrNotRegular):
		return nil, fmt.Errorf("%w: %w", errDamaged, err)
	case errors.Is(err, fs.ErrNotExist):
		if fi, lerr := os.Lstat(name); lerr == nil && fi.Mode()&fs.ModeSymlink != 0 {
			return nil, fmt.Errorf("%w: a symbolic link to nothing", errDamaged)
		}
	}
	return data, err
}

// damage says why a book file is errDamaged, without the word.
func damage(err error) string {
	return strings.TrimPrefix(err.Error(), errDamaged.Error()+": ")
}

// errDamaged: a book file that cannot be decoded, or breaks the rules
// the book relies on.
var errDamaged = errors.New("damaged")
