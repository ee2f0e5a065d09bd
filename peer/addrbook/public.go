package addrbook

import (
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/btcsuite/btcd/addrmgr"
	"github.com/btcsuite/btcd/wire"
)

// The files of the address book on public networks.
const (
	peersFile     = "peers.json" // btcd's address manager's, in its format
	prevSuffix    = ".prev"      // the previous peers.json during a save
	damagedSuffix = ".damaged"   // a book file that could not be read
)

// errDamaged: a book file that cannot be decoded.
var errDamaged = errors.New("damaged")

// Failed attempts kept by btcd's address manager.
const (
	// maxFailedAttempts caps the failed attempts of an address the manager
	// counts. It weighs an address by 1.5 to the minus its attempts,
	// which underflows to zero past about 1,830 attempts: GetAddress then
	// searches forever (holding the manager's lock) when every address
	// of the table it draws from is such an address. Thirty already
	// weighs an address at five in a million.
	maxFailedAttempts = 30
	// maxTracked caps the addresses whose attempts the store counts
	// beyond those of the file it loaded.
	maxTracked = 1 << 16
)

// publicStore is an address book kept by btcd's address manager.
type publicStore struct {
	am      *addrmgr.AddrManager
	path    string // peers.json; "" in memory
	started bool

	mu sync.Mutex
	// tries counts the failed attempts of the addresses with any, as
	// the manager does, so that none passes maxFailedAttempts: the manager
	// tells nobody.
	tries map[string]int
}

// openPublicStore starts btcd's address manager on dir's peers.json, or
// in memory without dir.
func openPublicStore(dir string) (*publicStore, []string, error) {
	s := &publicStore{am: addrmgr.New(dir, refuseLookup), tries: make(map[string]int)}
	if dir == "" {
		// Never started: it neither reads nor writes a file.
		return s, nil, nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, nil, fmt.Errorf("addrbook: %w", err)
	}
	s.path = filepath.Join(dir, peersFile)
	notes, saved, err := recoverPeersFile(s.path)
	if err != nil {
		return nil, nil, err
	}
	found := saved != nil
	if found {
		for _, a := range saved.Addresses {
			if a.Attempts > 0 {
				s.tries[a.Addr] = a.Attempts
			}
		}
	}
	s.am.Start()
	s.started = true
	if _, err := os.Stat(s.path); found && errors.Is(err, fs.ErrNotExist) {
		// The manager deletes a file it cannot read, without a word.
		notes = append(notes, fmt.Sprintf("address book %s: btcd's address manager could not read it and deleted it; the book starts empty", s.path))
	}
	return s, notes, nil
}

// refuseLookup is the address manager's resolver: a book file names no
// hosts, and nothing else makes it resolve one.
func refuseLookup(host string) ([]net.IP, error) {
	return nil, fmt.Errorf("address book: %q is not an address", host)
}

// recoverPeersFile finds the book to load at path: path itself, or the
// copy a save interrupted left at path.prev. A file that cannot be
// decoded is moved aside. It returns the book path now holds, if any.
func recoverPeersFile(path string) (notes []string, saved *savedPeers, err error) {
	prev := path + prevSuffix
	for _, name := range []string{path, prev} {
		sp, err := readPeersFile(name)
		switch {
		case err == nil:
			if name == prev {
				if err := os.Rename(prev, path); err != nil {
					return notes, nil, fmt.Errorf("addrbook: %w", err)
				}
				notes = append(notes, fmt.Sprintf("address book %s: restored from %s, kept by a save that did not finish", path, prev))
			} else if err := os.Remove(prev); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return notes, nil, fmt.Errorf("addrbook: %w", err)
			}
			return notes, sp, nil
		case errors.Is(err, fs.ErrNotExist):
		case errors.Is(err, errDamaged):
			if err := os.Rename(name, name+damagedSuffix); err != nil {
				return notes, nil, fmt.Errorf("addrbook: %w", err)
			}
			notes = append(notes, fmt.Sprintf("address book %s is damaged (%v): moved to %s", name, err, name+damagedSuffix))
		default:
			return notes, nil, fmt.Errorf("addrbook: %w", err)
		}
	}
	if len(notes) > 0 {
		notes = append(notes, fmt.Sprintf("address book %s: starts empty", path))
	}
	return notes, nil, nil
}

// savedPeers is peers.json as btcd's address manager writes it (version
// 2), read with the same types, so that what decodes here decodes there.
type savedPeers struct {
	Version   int
	Key       [32]byte
	Addresses []*struct {
		Addr        string
		Src         string
		Attempts    int
		TimeStamp   int64
		LastAttempt int64
		LastSuccess int64
		Services    wire.ServiceFlag
		SrcServices wire.ServiceFlag
	}
	NewBuckets   [1024][]string
	TriedBuckets [64][]string
}

// readPeersFile reads and checks a peers.json; what cannot be decoded or
// breaks the rules the address manager relies on is errDamaged.
func readPeersFile(name string) (*savedPeers, error) {
	var sp savedPeers
	if err := readBookFile(name, maxBookFile, &sp); err != nil {
		return nil, err
	}
	if err := sp.check(); err != nil {
		return nil, fmt.Errorf("%w: %w", errDamaged, err)
	}
	return &sp, nil
}

// checkPeersFile checks a peers.json without keeping it.
func checkPeersFile(name string) error {
	_, err := readPeersFile(name)
	return err
}

// check applies the rules btcd's address manager checks when it loads a
// book, and those it assumes: a known version; addresses and sources
// that are IP or onion addresses with a port, addresses written as the
// manager writes them; at most maxFailedAttempts failed attempts; every address of a bucket
// listed, at most once in a bucket and once among the tried; every
// address in a new bucket or among the tried, never both. (An address
// twice in a bucket would be counted twice and leave the manager
// searching forever for an address it counts but does not hold.)
func (sp *savedPeers) check() error {
	if sp.Version < 1 || sp.Version > 2 {
		return fmt.Errorf("unknown version %d", sp.Version)
	}
	refs := make(map[string]int, len(sp.Addresses))
	for _, a := range sp.Addresses {
		if a == nil {
			return errors.New("a null address")
		}
		if a.Attempts < 0 || a.Attempts > maxFailedAttempts {
			return fmt.Errorf("address %q: %d failed attempts, not 0 to %d (btcd's address manager could search forever for an address to pick)",
				a.Addr, a.Attempts, maxFailedAttempts)
		}
		for _, hp := range []string{a.Src, a.Addr} {
			na, err := ParseAddr(hp, 0, time.Time{})
			if err != nil {
				return fmt.Errorf("address %q: %w", hp, err)
			}
			// The manager files an address under this form.
			if hp == a.Addr && addrmgr.NetAddressKey(na) != hp {
				return fmt.Errorf("address %q not written as %q", hp, addrmgr.NetAddressKey(na))
			}
		}
		refs[a.Addr] = 0
	}
	tried := make(map[string]bool)
	for _, b := range sp.NewBuckets {
		inBucket := make(map[string]bool, len(b))
		for _, k := range b {
			if _, ok := refs[k]; !ok || inBucket[k] {
				return fmt.Errorf("new bucket entry %q: unlisted or repeated", k)
			}
			inBucket[k] = true
			refs[k]++
		}
	}
	for _, b := range sp.TriedBuckets {
		for _, k := range b {
			if _, ok := refs[k]; !ok || tried[k] {
				return fmt.Errorf("tried bucket entry %q: unlisted or repeated", k)
			}
			tried[k] = true
		}
	}
	for k, n := range refs {
		if (n == 0) == !tried[k] {
			return fmt.Errorf("address %q: in %d new buckets, tried %v", k, n, tried[k])
		}
	}
	return nil
}

// known lists a saved book.
func (sp *savedPeers) known() []Known {
	tried := make(map[string]bool)
	for _, b := range sp.TriedBuckets {
		for _, k := range b {
			tried[k] = true
		}
	}
	out := make([]Known, 0, len(sp.Addresses))
	for _, a := range sp.Addresses {
		out = append(out, Known{
			Addr: a.Addr, Services: a.Services, Attempts: a.Attempts, Tried: tried[a.Addr],
			LastSeen: unixTime(a.TimeStamp), LastAttempt: unixTime(a.LastAttempt), LastSuccess: unixTime(a.LastSuccess),
		})
	}
	return out
}

// unixTime is the time of a saved Unix time; the manager saves a time
// never set as the zero time's.
func unixTime(sec int64) time.Time {
	if t := time.Unix(sec, 0); !t.IsZero() {
		return t
	}
	return time.Time{}
}

func (s *publicStore) add(addrs []*wire.NetAddressV2, src *wire.NetAddressV2) {
	s.am.AddAddresses(addrs, src)
}

func (s *publicStore) candidates() []candidate {
	out := make([]candidate, 0, pickDraws)
	for range pickDraws {
		ka := s.am.GetAddress()
		if ka == nil {
			break
		}
		na := ka.NetAddress()
		out = append(out, candidate{addr: addrmgr.NetAddressKey(na), services: na.Services, lastAttempt: ka.LastAttempt()})
	}
	return out
}

// attempt counts an attempt unless the address has maxFailedAttempts already,
// or the store counts maxTracked addresses and not this one.
func (s *publicStore) attempt(hostport string, _ time.Time) {
	na, err := ParseAddr(hostport, 0, time.Time{})
	if err != nil {
		return
	}
	key := addrmgr.NetAddressKey(na)
	s.mu.Lock()
	defer s.mu.Unlock()
	n, ok := s.tries[key]
	if n >= maxFailedAttempts || (!ok && len(s.tries) >= maxTracked) {
		return
	}
	s.tries[key] = n + 1
	s.am.Attempt(na)
}

func (s *publicStore) connected(hostport string, services wire.ServiceFlag, now time.Time) {
	na, err := ParseAddr(hostport, services, now)
	if err != nil || !addrmgr.IsRoutable(na) {
		return
	}
	s.am.AddAddress(na, na)
	s.am.SetServices(na, services)
	s.am.Connected(na)
}

func (s *publicStore) good(hostport string, _ time.Time) {
	na, err := ParseAddr(hostport, 0, time.Time{})
	if err != nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.tries, addrmgr.NetAddressKey(na))
	s.am.Good(na)
}

func (s *publicStore) known() ([]Known, error) {
	if s.path == "" {
		return nil, nil
	}
	sp, err := readPeersFile(s.path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("addrbook: address book %s: %w", s.path, err)
	}
	return sp.known(), nil
}

// close stops the manager, which saves the book, keeping the previous
// file until the new one is read back: the manager writes in place and
// reports no error.
func (s *publicStore) close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.started {
		return nil
	}
	s.started = false
	prev := s.path + prevSuffix
	kept := os.Rename(s.path, prev) == nil
	s.am.Stop()
	if err := checkPeersFile(s.path); err != nil {
		if kept {
			os.Rename(prev, s.path)
		}
		return fmt.Errorf("addrbook: saving the address book %s (btcd's address manager writes it and reports nothing): %w", s.path, err)
	}
	if kept {
		if err := os.Remove(prev); err != nil {
			return fmt.Errorf("addrbook: %w", err)
		}
	}
	return nil
}
