package store

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/btcsuite/btcd/addrmgr"
	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/btcsuite/btcd/wire"
)

// loopbackLookup resolves localhost only, to the loopback address: the
// address manager of the tests looks up nothing else.
func loopbackLookup(host string) ([]net.IP, error) {
	if host == "localhost" {
		return []net.IP{net.IPv4(127, 0, 0, 1)}, nil
	}
	return nil, fmt.Errorf("no lookups in tests: %s", host)
}

// onion returns a Tor v3 address: routable for the address manager,
// which keeps it, and never contacted.
func onion(i int) *wire.NetAddressV2 {
	key := chainhash.DoubleHashH(binary.LittleEndian.AppendUint32([]byte("onion"), uint32(i)))
	return wire.NetAddressV2FromBytes(time.Unix(1700000000, 0), wire.SFNodeNetwork, key[:], 8333)
}

// addrBookAddresses and addrBookTried are what fillAddrBook puts in an
// address book: addresses, of which the first addrBookTried are tried.
const (
	addrBookAddresses = 100
	addrBookTried     = 10
)

// fillAddrBook has a real address manager keep an address book in the
// store in dir, and returns the file as the address manager wrote it.
func fillAddrBook(t *testing.T, dir string) addrBook {
	t.Helper()
	s := openTest(t, dir, Options{NoSync: true})
	am := addrmgr.New(s.AddrBookDir(), loopbackLookup)
	am.Start()
	for i := 0; i < addrBookAddresses; i++ {
		am.AddAddress(onion(i), onion(1000+i%3))
	}
	for i := 0; i < addrBookTried; i++ {
		am.Good(onion(i))
	}
	if err := am.Stop(); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	var book addrBook
	if err := json.Unmarshal(mustRead(t, filepath.Join(dir, "regtest", AddrBookFile)), &book); err != nil {
		t.Fatal(err)
	}
	if len(book.Addresses) != addrBookAddresses {
		t.Fatalf("the address manager saved %d addresses, want %d", len(book.Addresses), addrBookAddresses)
	}
	return book
}

// loadedAddresses starts an address manager on the store's address book
// and returns how many addresses it loaded.
func loadedAddresses(t *testing.T, s *Store) int {
	t.Helper()
	am := addrmgr.New(s.AddrBookDir(), loopbackLookup)
	am.Start()
	defer am.Stop()
	return am.NumAddresses()
}

// firstNew returns an address of a new bucket and that bucket.
func firstNew(b *addrBook) (string, int) {
	for i, bucket := range b.NewBuckets {
		if len(bucket) > 0 {
			return bucket[0], i
		}
	}
	panic("no new address")
}

func TestAddrBook(t *testing.T) {
	template := t.TempDir()
	sound := fillAddrBook(t, template)
	// A second life: the file passes the checks and the address
	// manager loads it whole.
	s := openTest(t, template, Options{NoSync: true})
	if r := s.Recovered(); len(r) != 0 {
		t.Fatalf("notes on a sound address book: %q", r)
	}
	if n := loadedAddresses(t, s); n != addrBookAddresses {
		t.Fatalf("the address manager loaded %d addresses, want %d", n, addrBookAddresses)
	}
	s.Close()
	if s.AddrBookDir() != filepath.Join(template, "regtest") {
		t.Fatalf("AddrBookDir() = %s", s.AddrBookDir())
	}

	edit := func(f func(b *addrBook)) func(t *testing.T, path string) {
		return func(t *testing.T, path string) {
			b := sound
			b.Addresses = append([]addrBookEntry(nil), sound.Addresses...)
			b.NewBuckets = make([][]string, len(sound.NewBuckets))
			for i := range sound.NewBuckets {
				b.NewBuckets[i] = append([]string(nil), sound.NewBuckets[i]...)
			}
			b.TriedBuckets = make([][]string, len(sound.TriedBuckets))
			for i := range sound.TriedBuckets {
				b.TriedBuckets[i] = append([]string(nil), sound.TriedBuckets[i]...)
			}
			f(&b)
			data, err := json.Marshal(&b)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, data, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	bytesOf := func(f func(b []byte) []byte) func(t *testing.T, path string) {
		return func(t *testing.T, path string) {
			if err := os.WriteFile(path, f(mustRead(t, path)), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	tried := func(b *addrBook) (string, int) {
		for i, bucket := range b.TriedBuckets {
			if len(bucket) > 0 {
				return bucket[0], i
			}
		}
		panic("no tried address")
	}
	tests := []struct {
		name   string
		damage func(t *testing.T, path string)
		cause  string // in the note; "" for a sound file
	}{
		{"rewritten as it was", edit(func(*addrBook) {}), ""},
		{"version 1", edit(func(b *addrBook) { b.Version = 1 }), ""},
		{"cut in half", bytesOf(func(b []byte) []byte { return b[:len(b)/2] }), "unexpected EOF"},
		{"empty", bytesOf(func([]byte) []byte { return nil }), "empty"},
		{"garbage", bytesOf(func(b []byte) []byte { return []byte("\x00garbage") }), "invalid character"},
		{"data after", bytesOf(func(b []byte) []byte { return append(b, "[]"...) }), "data after"},
		{"version 3", edit(func(b *addrBook) { b.Version = 3 }), "version 3"},
		{"version 0", edit(func(b *addrBook) { b.Version = 0 }), "version 0"},
		{"a new bucket missing", edit(func(b *addrBook) { b.NewBuckets = b.NewBuckets[1:] }), "1023 new"},
		{"a tried bucket too many", edit(func(b *addrBook) { b.TriedBuckets = append(b.TriedBuckets, nil) }), "65 tried"},
		{"a new bucket over full", edit(func(b *addrBook) {
			b.NewBuckets[0] = nil
			for _, a := range b.Addresses[addrBookTried : addrBookTried+65] {
				b.NewBuckets[0] = append(b.NewBuckets[0], a.Addr)
			}
		}), "65 addresses"},
		{"a bucket names an unknown address", edit(func(b *addrBook) {
			_, i := firstNew(b)
			b.NewBuckets[i] = append(b.NewBuckets[i], addrmgr.NetAddressKey(onion(5000)))
		}), "not listed"},
		{"an address not as the manager keys it", edit(func(b *addrBook) {
			b.Addresses[0].Addr = strings.ToUpper(strings.TrimSuffix(b.Addresses[0].Addr, ".onion:8333")) + ".onion:8333"
		}), "not in the form"},
		{"an address that is a host name", edit(func(b *addrBook) {
			b.Addresses[0].Addr = "node.example:8333"
		}), "host name"},
		{"an address with a bad port", edit(func(b *addrBook) {
			b.Addresses[0].Addr = strings.TrimSuffix(b.Addresses[0].Addr, "8333") + "70000"
		}), "out of range"},
		{"a bad source", edit(func(b *addrBook) { b.Addresses[0].Src = "x" }), "source"},
		{"an address twice", edit(func(b *addrBook) { b.Addresses = append(b.Addresses, b.Addresses[0]) }), "listed twice"},
		{"an address in no bucket", edit(func(b *addrBook) {
			b.Addresses = append(b.Addresses, addrBookEntry{Addr: addrmgr.NetAddressKey(onion(5000)), Src: b.Addresses[0].Src})
		}), "in no bucket"},
		{"an address new and tried", edit(func(b *addrBook) {
			a, _ := firstNew(b)
			b.TriedBuckets[0] = append(b.TriedBuckets[0], a)
		}), "new or tried already"},
		{"an address tried twice", edit(func(b *addrBook) {
			a, i := tried(b)
			b.TriedBuckets[(i+1)%addrTriedBucketCount] = append(b.TriedBuckets[(i+1)%addrTriedBucketCount], a)
		}), "new or tried already"},
		{"an address in nine new buckets", edit(func(b *addrBook) {
			a, i := firstNew(b)
			for j := 1; j <= addrNewPerAddress; j++ {
				k := (i + j) % addrNewBucketCount
				b.NewBuckets[k] = append(b.NewBuckets[k], a)
			}
		}), "more than 8 new buckets"},
		{"an address twice in a bucket", edit(func(b *addrBook) {
			a, i := firstNew(b)
			b.NewBuckets[i] = append(b.NewBuckets[i], a)
		}), "twice"},
		{"negative attempts", edit(func(b *addrBook) { b.Addresses[0].Attempts = -1 }), "attempts"},
		{"too large", func(t *testing.T, path string) {
			if err := os.Truncate(path, maxAddrBookSize+1); err != nil {
				t.Fatal(err)
			}
		}, "more than"},
		{"a directory", func(t *testing.T, path string) {
			if err := os.Remove(path); err != nil {
				t.Fatal(err)
			}
			if err := os.MkdirAll(filepath.Join(path, "x"), 0o755); err != nil {
				t.Fatal(err)
			}
		}, "not a regular file"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			openTest(t, dir, Options{NoSync: true}).Close()
			path := filepath.Join(dir, "regtest", AddrBookFile)
			if err := os.WriteFile(path, mustRead(t, filepath.Join(template, "regtest", AddrBookFile)), 0o644); err != nil {
				t.Fatal(err)
			}
			tt.damage(t, path)
			s := openTest(t, dir, Options{NoSync: true})
			defer s.Close()
			notes := s.Recovered()
			aside, _ := filepath.Glob(path + ".damaged-*")
			if tt.cause == "" {
				if len(notes) != 0 || len(aside) != 0 {
					t.Fatalf("sound address book: notes %q, set aside %q", notes, aside)
				}
				if n := loadedAddresses(t, s); n != addrBookAddresses {
					t.Fatalf("the address manager loaded %d addresses, want %d", n, addrBookAddresses)
				}
				return
			}
			if len(notes) != 1 || len(aside) != 1 || !strings.HasPrefix(notes[0], AddrBookFile+": ") ||
				!strings.Contains(notes[0], tt.cause) || !strings.Contains(notes[0], "set aside as "+filepath.Base(aside[0])) {
				t.Fatalf("notes %q, set aside %q; want the cause %q", notes, aside, tt.cause)
			}
			t.Log(notes[0])
			if _, err := os.Lstat(path); !os.IsNotExist(err) {
				t.Fatalf("the damaged address book is still in place: %v", err)
			}
			if n := loadedAddresses(t, s); n != 0 {
				t.Fatalf("the address manager loaded %d addresses from nothing", n)
			}
		})
	}
}
