package addrbook

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"time"

	"github.com/btcsuite/btcd/addrmgr"
	"github.com/btcsuite/btcd/wire"
	"github.com/spvfilter/spvfilter/peer/internal/diskfile"
)

// The files of the address book on public networks.
const (
	// PeersFile is btcd's address manager's book, in its format, in the
	// network's directory of a data directory.
	PeersFile  = "peers.json"
	prevSuffix = ".prev" // the previous peers.json during a save
)

// maxFailedAttempts caps the failed attempts of an address btcd's address
// manager counts. It weighs an address by 1.5 to the minus its attempts,
// which underflows to zero past about 1,830 attempts: GetAddress then
// searches forever (holding the manager's lock) when every address of
// the table it draws from is such an address. Thirty already weighs an
// address at five in a million.
const maxFailedAttempts = 30

// The shape of btcd's address book, as btcd v0.24.2 writes it: its
// newest format version, the number and size of its buckets of new and
// tried addresses, and in how many new buckets one address may be.
const (
	peersVersion         = 2
	newBucketCount       = 1024
	newBucketSize        = 64
	triedBucketCount     = 64
	triedBucketSize      = 256
	newPerAddress        = 8
	maxPeersFileAddrs    = newBucketCount*newBucketSize + triedBucketCount*triedBucketSize
	maxPeersFile         = 64 << 20 // a full book takes about 25 MB
	maxFailedAttemptsMsg = "btcd's address manager could search forever for an address to pick"
)

// savedPeers is peers.json as btcd's address manager writes it, read
// with its field names, so that what decodes here decodes there; buckets
// as slices, so that their number is checked.
type savedPeers struct {
	Version      int
	Key          [32]byte
	Addresses    []*savedAddress
	NewBuckets   [][]string
	TriedBuckets [][]string
}

// savedAddress is one address of peers.json.
type savedAddress struct {
	Addr        string
	Src         string
	Attempts    int
	TimeStamp   int64
	LastAttempt int64
	LastSuccess int64
	Services    wire.ServiceFlag
	SrcServices wire.ServiceFlag
}

// CheckPeersFile checks a peers.json by the rules btcd v0.24.2's address
// manager applies when it loads one, and those it takes for granted, so
// that a book that passes loads whole (the manager deletes, without a
// word, a file it cannot read, and may search forever for an address to
// pick in one that breaks what it assumes): one JSON value; version 1 or
// 2; exactly 1,024 new buckets of at most 64 addresses and 64 tried
// buckets of at most 256; every address and source an IP or onion
// address with a port (a host name would be looked up), every address
// written as the manager keys it, listed once, with 0 to 30 failed
// attempts (past about 1,830 the manager's weighting underflows); every
// bucket entry listed, at most once in a bucket; every address in 1 to 8
// new buckets or in one tried bucket, never both.
func CheckPeersFile(data []byte) error {
	_, err := decodePeersFile(data)
	return err
}

// decodePeersFile decodes and checks a peers.json (see CheckPeersFile).
func decodePeersFile(data []byte) (*savedPeers, error) {
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, errors.New("empty")
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	var sp savedPeers
	if err := dec.Decode(&sp); err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("data after the address book")
	}
	switch {
	case sp.Version < 1 || sp.Version > peersVersion:
		return nil, fmt.Errorf("unknown version %d, want 1 to %d", sp.Version, peersVersion)
	case len(sp.Addresses) > maxPeersFileAddrs:
		return nil, fmt.Errorf("%d addresses, more than %d", len(sp.Addresses), maxPeersFileAddrs)
	case len(sp.NewBuckets) != newBucketCount || len(sp.TriedBuckets) != triedBucketCount:
		return nil, fmt.Errorf("%d new and %d tried buckets, want %d and %d", len(sp.NewBuckets), len(sp.TriedBuckets), newBucketCount, triedBucketCount)
	}
	if err := sp.checkAddresses(); err != nil {
		return nil, err
	}
	return &sp, sp.checkBuckets()
}

// checkAddresses checks the addresses of a peers.json (CheckPeersFile).
func (sp *savedPeers) checkAddresses() error {
	listed := make(map[string]bool, len(sp.Addresses))
	for i, a := range sp.Addresses {
		if a == nil {
			return fmt.Errorf("address %d: a null address", i)
		}
		na, err := ParseAddr(a.Addr, 0, time.Time{})
		if err != nil {
			return fmt.Errorf("address %d %q: %w", i, a.Addr, err)
		}
		if key := addrmgr.NetAddressKey(na); key != a.Addr {
			return fmt.Errorf("address %d %q: not written as btcd writes it, %q", i, a.Addr, key)
		}
		if _, err := ParseAddr(a.Src, 0, time.Time{}); err != nil {
			return fmt.Errorf("address %d: source %q: %w", i, a.Src, err)
		}
		if listed[a.Addr] {
			return fmt.Errorf("address %d %q: listed twice", i, a.Addr)
		}
		if a.Attempts < 0 || a.Attempts > maxFailedAttempts {
			return fmt.Errorf("address %d %q: %d failed attempts, not 0 to %d (%s)", i, a.Addr, a.Attempts, maxFailedAttempts, maxFailedAttemptsMsg)
		}
		listed[a.Addr] = true
	}
	return nil
}

// checkBuckets checks the buckets of a peers.json whose addresses passed
// (CheckPeersFile).
func (sp *savedPeers) checkBuckets() error {
	refs := make(map[string]int, len(sp.Addresses)) // new buckets holding it; -1: tried
	for _, a := range sp.Addresses {
		refs[a.Addr] = 0
	}
	for i, bucket := range sp.NewBuckets {
		if len(bucket) > newBucketSize {
			return fmt.Errorf("new bucket %d: %d addresses, more than %d", i, len(bucket), newBucketSize)
		}
		inBucket := make(map[string]bool, len(bucket))
		for _, a := range bucket {
			n, ok := refs[a]
			switch {
			case !ok:
				return fmt.Errorf("new bucket %d: %q not listed", i, a)
			case inBucket[a]:
				return fmt.Errorf("new bucket %d: %q twice", i, a)
			case n < 0:
				return fmt.Errorf("new bucket %d: %q tried already", i, a)
			case n >= newPerAddress:
				return fmt.Errorf("new bucket %d: %q in more than %d new buckets", i, a, newPerAddress)
			}
			refs[a] = n + 1
			inBucket[a] = true
		}
	}
	for i, bucket := range sp.TriedBuckets {
		if len(bucket) > triedBucketSize {
			return fmt.Errorf("tried bucket %d: %d addresses, more than %d", i, len(bucket), triedBucketSize)
		}
		for _, a := range bucket {
			n, ok := refs[a]
			switch {
			case !ok:
				return fmt.Errorf("tried bucket %d: %q not listed", i, a)
			case n != 0:
				return fmt.Errorf("tried bucket %d: %q new or tried already", i, a)
			}
			refs[a] = -1
		}
	}
	for a, n := range refs {
		if n == 0 {
			return fmt.Errorf("address %q in no bucket", a)
		}
	}
	return nil
}

// readPeersFile reads and checks the peers.json at name; what cannot be
// read within its bound or decoded, or breaks the rules, is errDamaged.
func readPeersFile(name string) (*savedPeers, error) {
	data, err := readLimited(name, maxPeersFile)
	if err != nil {
		return nil, err
	}
	sp, err := decodePeersFile(data)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", errDamaged, err)
	}
	return sp, nil
}

// checkPeersPath checks the peers.json at path without keeping it.
func checkPeersPath(path string) error {
	_, err := readPeersFile(path)
	return err
}

// recoverPeersFile finds the book to load at path: path itself, or the
// copy a save interrupted left at path.prev. A file that is damaged is
// set aside (diskfile.SetAside). It returns the book path now holds, if
// any.
func recoverPeersFile(path string, now time.Time) (notes []string, saved *savedPeers, err error) {
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
			note, err := setAside(name, err, now)
			if err != nil {
				return notes, nil, err
			}
			notes = append(notes, note)
		default:
			return notes, nil, fmt.Errorf("addrbook: %w", err)
		}
	}
	if len(notes) > 0 {
		notes = append(notes, fmt.Sprintf("address book %s: starts empty", path))
	}
	return notes, nil, nil
}

// setAside sets a damaged book file aside, and says so in a note.
func setAside(path string, why error, now time.Time) (string, error) {
	aside, err := diskfile.SetAside(path, now)
	if err != nil {
		return "", fmt.Errorf("addrbook: setting the damaged %s aside: %w", path, err)
	}
	return fmt.Sprintf("address book %s is damaged (%s): set aside as %s", path, damage(why), aside), nil
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
