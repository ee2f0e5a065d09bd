package store

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"time"

	"github.com/btcsuite/btcd/addrmgr"
	"github.com/btcsuite/btcd/wire"
	"github.com/spvfilter/spvfilter/peer/internal/diskfile"
)

// AddrBookFile is the address book btcd's address manager (addrmgr)
// keeps in AddrBookDir.
const AddrBookFile = "peers.json"

// The shape of addrmgr's address book, as btcd v0.24.2 writes it: its
// newest format version, the number and size of its buckets of new and
// tried addresses, and in how many new buckets one address may be.
const (
	addrBookVersion      = 2
	addrNewBucketCount   = 1024
	addrNewBucketSize    = 64
	addrTriedBucketCount = 64
	addrTriedBucketSize  = 256
	addrNewPerAddress    = 8
	maxAddrBookAddresses = addrNewBucketCount*addrNewBucketSize + addrTriedBucketCount*addrTriedBucketSize
)

// maxAddrBookSize bounds the address book Open reads: a full one takes
// about 25 MB.
const maxAddrBookSize = 64 << 20

// AddrBookDir returns the directory to give btcd's address manager
// (addrmgr.New), which keeps its address book there in AddrBookFile: the
// store's directory. Open checks that file before the address manager
// reads it (which, on a file it cannot use, says nothing and deletes it):
// one that fails the checks is set aside, and Recovered says so.
func (s *Store) AddrBookDir() string { return s.dir }

// addrBook mirrors addrmgr's serialized address book.
type addrBook struct {
	Version      int
	Key          [32]byte
	Addresses    []addrBookEntry
	NewBuckets   [][]string
	TriedBuckets [][]string
}

type addrBookEntry struct {
	Addr        string
	Src         string
	Attempts    int
	TimeStamp   int64
	LastAttempt int64
	LastSuccess int64
	Services    wire.ServiceFlag
	SrcServices wire.ServiceFlag
}

// checkAddrBook checks the address book at path, if there is one, and
// sets it aside if it fails; the result says so.
func checkAddrBook(path string, now func() time.Time) string {
	err := readAddrBook(path)
	if err == nil {
		return ""
	}
	note := fmt.Sprintf("%s: %v", AddrBookFile, err)
	aside, serr := diskfile.SetAside(path, now())
	if serr != nil {
		return note + fmt.Sprintf("; it could not be set aside (%v), and the address manager will delete it", serr)
	}
	return note + ": set aside as " + aside + "; the address book starts empty"
}

// readAddrBook reads and checks the address book at path; a missing file
// is fine.
func readAddrBook(path string) error {
	fi, err := os.Lstat(path)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return nil
	case err != nil:
		return err
	case !fi.Mode().IsRegular():
		return fmt.Errorf("not a regular file but %v", fi.Mode().Type())
	case fi.Size() > maxAddrBookSize:
		return fmt.Errorf("%d bytes, more than %d", fi.Size(), maxAddrBookSize)
	}
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxAddrBookSize+1))
	if err != nil {
		return err
	}
	if len(b) > maxAddrBookSize {
		return fmt.Errorf("more than %d bytes", maxAddrBookSize)
	}
	return checkAddrBookData(b)
}

// errNoLookups refuses the host names an address book must not hold.
var errNoLookups = errors.New("a host name, not an address")

// checkAddrBookData checks an address book as addrmgr reads it, so that
// it takes all of it: the format version; each address and source as
// addrmgr parses them, addresses in the form it keys them by, each listed
// once; the buckets, of the right number and sizes, naming listed
// addresses, each address in at least one and at most
// addrNewPerAddress new buckets or in one tried bucket, not both. An
// address that is a host name fails: addrmgr would look it up.
func checkAddrBookData(b []byte) error {
	if len(bytes.TrimSpace(b)) == 0 {
		return errors.New("empty")
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	var book addrBook
	if err := dec.Decode(&book); err != nil {
		return err
	}
	if _, err := dec.Token(); err != io.EOF {
		return errors.New("data after the address book")
	}
	switch {
	case book.Version < 1 || book.Version > addrBookVersion:
		return fmt.Errorf("version %d, want 1 to %d", book.Version, addrBookVersion)
	case len(book.Addresses) > maxAddrBookAddresses:
		return fmt.Errorf("%d addresses, more than %d", len(book.Addresses), maxAddrBookAddresses)
	case len(book.NewBuckets) != addrNewBucketCount || len(book.TriedBuckets) != addrTriedBucketCount:
		return fmt.Errorf("%d new and %d tried buckets, want %d and %d", len(book.NewBuckets), len(book.TriedBuckets), addrNewBucketCount, addrTriedBucketCount)
	}
	parser := addrmgr.New("", func(host string) ([]net.IP, error) { return nil, errNoLookups })
	refs := make(map[string]int, len(book.Addresses)) // new buckets holding it; -1: tried
	for i, a := range book.Addresses {
		na, err := parser.DeserializeNetAddress(a.Addr, a.Services)
		if err != nil {
			return fmt.Errorf("address %d %q: %w", i, a.Addr, err)
		}
		if key := addrmgr.NetAddressKey(na); key != a.Addr {
			return fmt.Errorf("address %d %q: not in the form %q", i, a.Addr, key)
		}
		if _, err := parser.DeserializeNetAddress(a.Src, a.SrcServices); err != nil {
			return fmt.Errorf("address %d: source %q: %w", i, a.Src, err)
		}
		if _, dup := refs[a.Addr]; dup {
			return fmt.Errorf("address %d %q: listed twice", i, a.Addr)
		}
		if a.Attempts < 0 {
			return fmt.Errorf("address %d %q: %d attempts", i, a.Addr, a.Attempts)
		}
		refs[a.Addr] = 0
	}
	for i, bucket := range book.NewBuckets {
		if len(bucket) > addrNewBucketSize {
			return fmt.Errorf("new bucket %d: %d addresses, more than %d", i, len(bucket), addrNewBucketSize)
		}
		inBucket := make(map[string]bool, len(bucket))
		for _, a := range bucket {
			n, ok := refs[a]
			switch {
			case !ok:
				return fmt.Errorf("new bucket %d: %q not listed", i, a)
			case inBucket[a]:
				return fmt.Errorf("new bucket %d: %q twice", i, a)
			case n >= addrNewPerAddress:
				return fmt.Errorf("new bucket %d: %q in more than %d new buckets", i, a, addrNewPerAddress)
			}
			refs[a] = n + 1
			inBucket[a] = true
		}
	}
	for i, bucket := range book.TriedBuckets {
		if len(bucket) > addrTriedBucketSize {
			return fmt.Errorf("tried bucket %d: %d addresses, more than %d", i, len(bucket), addrTriedBucketSize)
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
