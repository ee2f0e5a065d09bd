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

// The bounds of btcd's address manager as the book uses it.
const (
	// maxTracked caps the addresses whose attempts the store counts
	// beyond those of the file it loaded.
	maxTracked = 1 << 16
	// pickDraws is how many addresses Pick draws from btcd's address
	// manager, as btcd's own connection manager does.
	pickDraws = 100
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
func openPublicStore(dir string, now time.Time) (*publicStore, []string, error) {
	s := &publicStore{am: addrmgr.New(dir, refuseLookup), tries: make(map[string]int)}
	if dir == "" {
		// Never started: it neither reads nor writes a file.
		return s, nil, nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, nil, fmt.Errorf("addrbook: %w", err)
	}
	s.path = filepath.Join(dir, PeersFile)
	notes, saved, err := recoverPeersFile(s.path, now)
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
	if err := checkPeersPath(s.path); err != nil {
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
