package addrbook

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"github.com/btcsuite/btcd/addrmgr"
	"github.com/btcsuite/btcd/chaincfg"
	"github.com/btcsuite/btcd/wire"

	"github.com/spvfilter/spvfilter/peer/internal/diskfile"
)

// The file of the address book on regtest and simnet.
const (
	LocalPeersFile   = "peers-local.json"
	localFileVersion = 1
	maxLocalFile     = 1 << 20 // a full book takes about 200 kB
)

// maxLocalAddresses caps the book on regtest and simnet, and
// maxLocalPerSource the addresses never used one source gave it.
const (
	maxLocalAddresses = 1000
	maxLocalPerSource = maxLocalAddresses / 4
)

// localStore is the address book of regtest and simnet: at most
// maxLocalAddresses addresses in memory, saved whole. It remembers, in
// memory, which source gave each address (none for those read from the
// file or connected to), so that a source's flood replaces its own
// addresses first (see makeRoom).
type localStore struct {
	path    string // "" in memory
	network string

	mu    sync.Mutex
	addrs map[string]*Known // by host:port
	// from is the source of each address a source gave, and untried
	// how many of its addresses never used each source holds ("" for
	// those without one).
	from    map[string]string
	untried map[string]int
	closed  bool
}

// localFile is peers-local.json.
type localFile struct {
	Version   int     `json:"version"`
	Network   string  `json:"network"`
	Addresses []Known `json:"addresses"`
}

// openLocalStore loads dir's peers-local.json, or starts in memory
// without dir.
func openLocalStore(params *chaincfg.Params, dir string, now time.Time) (*localStore, []string, error) {
	s := &localStore{network: params.Name, addrs: make(map[string]*Known), from: make(map[string]string), untried: make(map[string]int)}
	if dir == "" {
		return s, nil, nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, nil, fmt.Errorf("addrbook: %w", err)
	}
	s.path = filepath.Join(dir, LocalPeersFile)
	notes, err := s.load(now)
	if err != nil {
		return nil, nil, err
	}
	return s, notes, nil
}

// load reads the book's file; one that cannot be decoded is moved aside,
// and entries that are not host:port, repeated or beyond the limit are
// dropped, with a note.
func (s *localStore) load(now time.Time) ([]string, error) {
	lf, err := readLocalFile(s.path, s.network)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, nil
	case errors.Is(err, errDamaged):
		note, err := setAside(s.path, err, now)
		if err != nil {
			return nil, err
		}
		return []string{note + "; the book starts empty"}, nil
	case err != nil:
		return nil, fmt.Errorf("addrbook: %w", err)
	}
	dropped := 0
	for _, k := range lf.Addresses {
		if len(s.addrs) == maxLocalAddresses || !validHostPort(k.Addr) || s.addrs[k.Addr] != nil {
			dropped++
			continue
		}
		s.addrs[k.Addr] = &k
		if !k.Tried {
			s.untried[""]++
		}
	}
	if dropped > 0 {
		return []string{fmt.Sprintf("address book %s: %d of its %d addresses dropped (not host:port, repeated, or beyond the limit of %d)",
			s.path, dropped, len(lf.Addresses), maxLocalAddresses)}, nil
	}
	return nil, nil
}

// readLocalFile reads a peers-local.json of network; what cannot be
// decoded, or is of another version or network, is errDamaged.
func readLocalFile(name, network string) (*localFile, error) {
	var lf localFile
	if err := readBookFile(name, maxLocalFile, &lf); err != nil {
		return nil, err
	}
	if lf.Version != localFileVersion {
		return nil, fmt.Errorf("%w: unknown version %d", errDamaged, lf.Version)
	}
	if lf.Network != network {
		return nil, fmt.Errorf("%w: a book of %q, not %q", errDamaged, lf.Network, network)
	}
	return &lf, nil
}

func (s *localStore) add(addrs []*wire.NetAddressV2, src *wire.NetAddressV2) {
	s.mu.Lock()
	defer s.mu.Unlock()
	source := ""
	if src != nil {
		source = addrmgr.NetAddressKey(src)
	}
	for _, na := range addrs {
		key := addrmgr.NetAddressKey(na)
		if k := s.addrs[key]; k != nil {
			if na.Timestamp.After(k.LastSeen) {
				k.LastSeen = na.Timestamp
			}
			k.Services |= na.Services
			continue
		}
		if s.makeRoom(source) {
			s.addrs[key] = &Known{Addr: key, Services: na.Services, LastSeen: na.Timestamp}
			if source != "" {
				s.from[key] = source
			}
			s.untried[source]++
		}
	}
}

// makeRoom reports whether the book has room for one more address from
// source ("" for none), if need be by dropping one never used: of
// source's own when it holds maxLocalPerSource of them, else, when the
// book is full, of the source holding the most of them (those without a
// source count as one); of them, the one seen longest ago. One source's
// flood thus pushes out its own addresses first, and at most a quarter
// of the book. Called with mu held.
func (s *localStore) makeRoom(source string) bool {
	victim := source
	switch {
	case source != "" && s.untried[source] >= maxLocalPerSource:
	case len(s.addrs) < maxLocalAddresses:
		return true
	default:
		victim = s.largestSource()
	}
	var oldest *Known
	for _, k := range s.addrs {
		if !k.Tried && s.from[k.Addr] == victim && (oldest == nil || k.LastSeen.Before(oldest.LastSeen)) {
			oldest = k
		}
	}
	if oldest == nil {
		return false
	}
	s.forget(oldest.Addr)
	return true
}

// largestSource returns the source holding the most addresses never
// used ("" for those without one; of equals, the first by name). Called
// with mu held.
func (s *localStore) largestSource() string {
	largest, most := "", -1
	for src, n := range s.untried {
		if n > most || n == most && src < largest {
			largest, most = src, n
		}
	}
	return largest
}

// forget drops an address. Called with mu held.
func (s *localStore) forget(hostport string) {
	if k := s.addrs[hostport]; k != nil && !k.Tried {
		s.untriedGone(hostport)
	}
	delete(s.addrs, hostport)
	delete(s.from, hostport)
}

// untriedGone counts an address as no longer never used by its source
// (dropped, or used). Called with mu held.
func (s *localStore) untriedGone(hostport string) {
	src := s.from[hostport]
	if s.untried[src]--; s.untried[src] <= 0 {
		delete(s.untried, src)
	}
}

func (s *localStore) candidates() []candidate {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]candidate, 0, len(s.addrs))
	for _, k := range s.addrs {
		out = append(out, candidate{addr: k.Addr, services: k.Services, lastAttempt: k.LastAttempt, attempts: k.Attempts})
	}
	return shuffled(out)
}

func (s *localStore) attempt(hostport string, now time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if k := s.addrs[hostport]; k != nil {
		k.Attempts++
		k.LastAttempt = now
	}
}

func (s *localStore) connected(hostport string, services wire.ServiceFlag, now time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	k := s.addrs[hostport]
	if k == nil {
		if !validHostPort(hostport) || !s.makeRoom("") {
			return
		}
		k = &Known{Addr: hostport}
		s.addrs[hostport] = k
		s.untried[""]++
	}
	k.Services, k.LastSeen = services, now
}

func (s *localStore) good(hostport string, now time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if k := s.addrs[hostport]; k != nil {
		if !k.Tried {
			s.untriedGone(hostport)
		}
		k.Tried, k.LastSuccess, k.LastAttempt, k.Attempts = true, now, now, 0
	}
}

func (s *localStore) known() ([]Known, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]Known, 0, len(s.addrs))
	for _, k := range s.addrs {
		out = append(out, *k)
	}
	return out, nil
}

// close saves the book: to a temporary file, synced, renamed into place.
func (s *localStore) close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed || s.path == "" {
		return nil
	}
	s.closed = true
	lf := localFile{Version: localFileVersion, Network: s.network, Addresses: make([]Known, 0, len(s.addrs))}
	for _, key := range slices.Sorted(maps.Keys(s.addrs)) {
		lf.Addresses = append(lf.Addresses, *s.addrs[key])
	}
	data, err := json.MarshalIndent(&lf, "", "\t")
	if err != nil {
		return fmt.Errorf("addrbook: saving the address book: %w", err)
	}
	if err := diskfile.WriteAtomic(s.path, data, true); err != nil {
		return fmt.Errorf("addrbook: saving the address book: %w", err)
	}
	return nil
}
