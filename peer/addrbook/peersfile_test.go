package addrbook

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/btcsuite/btcd/addrmgr"
	"github.com/btcsuite/btcd/chaincfg"
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

// onionAt returns a Tor v3 address: routable for the address manager,
// which keeps it, and never contacted.
func onionAt(i int) *wire.NetAddressV2 {
	key := chainhash.DoubleHashH(binary.LittleEndian.AppendUint32([]byte("onion"), uint32(i)))
	return wire.NetAddressV2FromBytes(time.Unix(1700000000, 0), wire.SFNodeNetwork, key[:], 8333)
}

// addrBookAddresses and addrBookTried are what fillAddrBook puts in a
// peers.json: addresses, of which the first addrBookTried are tried.
const (
	addrBookAddresses = 100
	addrBookTried     = 10
)

// fillAddrBook has a real address manager keep its book in dir, and
// returns the file as the address manager wrote it.
func fillAddrBook(t *testing.T, dir string) savedPeers {
	t.Helper()
	am := addrmgr.New(dir, loopbackLookup)
	am.Start()
	for i := 0; i < addrBookAddresses; i++ {
		am.AddAddress(onionAt(i), onionAt(1000+i%3))
	}
	for i := 0; i < addrBookTried; i++ {
		am.Good(onionAt(i))
	}
	if err := am.Stop(); err != nil {
		t.Fatal(err)
	}
	var book savedPeers
	if err := json.Unmarshal(mustRead(t, filepath.Join(dir, PeersFile)), &book); err != nil {
		t.Fatal(err)
	}
	if len(book.Addresses) != addrBookAddresses {
		t.Fatalf("the address manager saved %d addresses, want %d", len(book.Addresses), addrBookAddresses)
	}
	return book
}

// mustRead returns the file at path.
func mustRead(t testing.TB, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// loadedAddresses returns how many addresses the address manager of a
// book on a public network loaded.
func loadedAddresses(b *Book) int { return b.store.(*publicStore).am.NumAddresses() }

// firstNew returns an address of a new bucket and that bucket.
func firstNew(b *savedPeers) (string, int) {
	for i, bucket := range b.NewBuckets {
		if len(bucket) > 0 {
			return bucket[0], i
		}
	}
	panic("no new address")
}

// TestPeersFileChecked: a peers.json that btcd's address manager wrote
// loads whole; one damaged in any way the manager would not take whole,
// or that breaks what it takes for granted, is set aside at open, named
// with its cause in a note, and the book starts empty. (The cases of the
// store's check and the client's, which drifted apart, in one table.)
func TestPeersFileChecked(t *testing.T) {
	template := t.TempDir()
	sound := fillAddrBook(t, template)
	params := &chaincfg.MainNetParams
	a1, _ := firstNew(&sound) // a new address (the file lists addresses in no set order)
	edit := func(f func(b *savedPeers)) func(t *testing.T, path string) {
		return func(t *testing.T, path string) {
			b := sound
			b.Addresses = nil
			for _, a := range sound.Addresses {
				c := *a
				b.Addresses = append(b.Addresses, &c)
			}
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
	tried := func(b *savedPeers) (string, int) {
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
		{"rewritten as it was", edit(func(*savedPeers) {}), ""},
		{"version 1", edit(func(b *savedPeers) { b.Version = 1 }), ""},
		{"cut in half", bytesOf(func(b []byte) []byte { return b[:len(b)/2] }), "unexpected EOF"},
		{"empty", bytesOf(func([]byte) []byte { return nil }), "empty"},
		{"garbage", bytesOf(func(b []byte) []byte { return []byte("\x00garbage") }), "invalid character"},
		{"data after", bytesOf(func(b []byte) []byte { return append(b, "[]"...) }), "data after"},
		{"version 3", edit(func(b *savedPeers) { b.Version = 3 }), "version 3"},
		{"version 0", edit(func(b *savedPeers) { b.Version = 0 }), "version 0"},
		{"a new bucket missing", edit(func(b *savedPeers) { b.NewBuckets = b.NewBuckets[1:] }), "1023 new"},
		{"a tried bucket too many", edit(func(b *savedPeers) { b.TriedBuckets = append(b.TriedBuckets, nil) }), "65 tried"},
		{"a new bucket over full", edit(func(b *savedPeers) {
			b.NewBuckets[0] = nil
			for _, a := range b.Addresses[addrBookTried : addrBookTried+65] {
				b.NewBuckets[0] = append(b.NewBuckets[0], a.Addr)
			}
		}), "65 addresses"},
		{"a bucket names an unknown address", edit(func(b *savedPeers) {
			_, i := firstNew(b)
			b.NewBuckets[i] = append(b.NewBuckets[i], addrmgr.NetAddressKey(onionAt(5000)))
		}), "not listed"},
		{"an address not as the manager keys it", edit(func(b *savedPeers) {
			b.Addresses[0].Addr = strings.ToUpper(strings.TrimSuffix(b.Addresses[0].Addr, ".onion:8333")) + ".onion:8333"
		}), "not written as btcd writes it"},
		{"an address that is a host name", edit(func(b *savedPeers) {
			b.Addresses[0].Addr = "node.example:8333"
		}), "not an IP or onion address"},
		{"an address with a bad port", edit(func(b *savedPeers) {
			b.Addresses[0].Addr = strings.TrimSuffix(b.Addresses[0].Addr, "8333") + "70000"
		}), "out of range"},
		{"a bad source", edit(func(b *savedPeers) { b.Addresses[0].Src = "x" }), "source"},
		{"an address twice", edit(func(b *savedPeers) { b.Addresses = append(b.Addresses, b.Addresses[0]) }), "listed twice"},
		{"an address in no bucket", edit(func(b *savedPeers) {
			b.Addresses = append(b.Addresses, &savedAddress{Addr: addrmgr.NetAddressKey(onionAt(5000)), Src: b.Addresses[0].Src})
		}), "in no bucket"},
		{"an address new and tried", edit(func(b *savedPeers) {
			a, _ := firstNew(b)
			b.TriedBuckets[0] = append(b.TriedBuckets[0], a)
		}), "new or tried already"},
		{"an address tried twice", edit(func(b *savedPeers) {
			a, i := tried(b)
			b.TriedBuckets[(i+1)%triedBucketCount] = append(b.TriedBuckets[(i+1)%triedBucketCount], a)
		}), "new or tried already"},
		{"an address in nine new buckets", edit(func(b *savedPeers) {
			a, i := firstNew(b)
			for j := 1; j <= newPerAddress; j++ {
				k := (i + j) % newBucketCount
				b.NewBuckets[k] = append(b.NewBuckets[k], a)
			}
		}), "more than 8 new buckets"},
		{"an address twice in a bucket", edit(func(b *savedPeers) {
			a, i := firstNew(b)
			b.NewBuckets[i] = append(b.NewBuckets[i], a)
		}), "twice"},
		{"negative attempts", edit(func(b *savedPeers) { b.Addresses[0].Attempts = -1 }), "-1 failed attempts"},
		{"too many attempts", edit(func(b *savedPeers) { b.Addresses[0].Attempts = 5000 }), "5000 failed attempts"},
		{"null", bytesOf(func([]byte) []byte { return []byte("null") }), "unknown version 0"},
		{"a source that is a host name", edit(func(b *savedPeers) { b.Addresses[0].Src = "seed.example:8333" }), "not an IP or onion address"},
		{"a null address", edit(func(b *savedPeers) { b.Addresses[1] = nil }), "a null address"},
		{"an address taken out of its buckets", edit(func(b *savedPeers) {
			for i := range b.NewBuckets {
				b.NewBuckets[i] = slices.DeleteFunc(b.NewBuckets[i], func(s string) bool { return s == a1 })
			}
		}), "in no bucket"},
		{"too large", func(t *testing.T, path string) {
			if err := os.Truncate(path, maxPeersFile+1); err != nil {
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
			path := filepath.Join(dir, PeersFile)
			if err := os.WriteFile(path, mustRead(t, filepath.Join(template, PeersFile)), 0o644); err != nil {
				t.Fatal(err)
			}
			tt.damage(t, path)
			b, notes := openBook(t, params, dir, nil)
			aside, _ := filepath.Glob(path + ".damaged-*")
			if tt.cause == "" {
				if len(notes) != 0 || len(aside) != 0 {
					t.Fatalf("sound address book: notes %q, set aside %q", notes, aside)
				}
				if n := loadedAddresses(b); n != addrBookAddresses {
					t.Fatalf("the address manager loaded %d addresses, want %d", n, addrBookAddresses)
				}
				return
			}
			if len(notes) != 2 || len(aside) != 1 || !strings.Contains(notes[0], path+" is damaged") ||
				!strings.Contains(notes[0], tt.cause) || !strings.Contains(notes[0], "set aside as "+filepath.Base(aside[0])) ||
				!strings.Contains(notes[1], "starts empty") {
				t.Fatalf("notes %q, set aside %q; want the cause %q", notes, aside, tt.cause)
			}
			t.Log(notes[0])
			if n := loadedAddresses(b); n != 0 {
				t.Fatalf("the address manager loaded %d addresses from nothing", n)
			}
		})
	}
}

// FuzzCheckPeersFile checks peers.json files: one that passes must load
// whole into a real address manager, which must not delete it.
func FuzzCheckPeersFile(f *testing.F) {
	dir := f.TempDir()
	am := addrmgr.New(dir, loopbackLookup)
	am.Start()
	for i := 0; i < 6; i++ {
		am.AddAddress(onionAt(i), onionAt(100))
	}
	am.Good(onionAt(0))
	if err := am.Stop(); err != nil {
		f.Fatal(err)
	}
	sound := mustRead(f, filepath.Join(dir, PeersFile))
	f.Add(sound)
	f.Add(sound[:len(sound)/2])
	f.Add(bytes.Replace(sound, []byte(`"Version":2`), []byte(`"Version":3`), 1))
	f.Add(bytes.Replace(sound, []byte(".onion:8333"), []byte(".example:8333"), 1))
	f.Add([]byte(`{"Version":2,"Addresses":[],"NewBuckets":[],"TriedBuckets":[]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		if CheckPeersFile(data) != nil {
			return
		}
		var book savedPeers
		if err := json.Unmarshal(data, &book); err != nil {
			t.Fatalf("passed the checks, does not decode: %v", err)
		}
		dir := t.TempDir()
		path := filepath.Join(dir, PeersFile)
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		am := addrmgr.New(dir, func(host string) ([]net.IP, error) {
			t.Fatalf("the address manager looked up %q", host)
			return nil, nil
		})
		am.Start()
		defer am.Stop()
		if _, err := os.Stat(path); err != nil {
			t.Fatalf("the address manager deleted an address book that passed the checks: %v", err)
		}
		if n := am.NumAddresses(); n != len(book.Addresses) {
			t.Fatalf("the address manager loaded %d of %d addresses", n, len(book.Addresses))
		}
	})
}
