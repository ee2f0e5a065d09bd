package addrbook

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/btcsuite/btcd/addrmgr"
	"github.com/btcsuite/btcd/chaincfg"
	"github.com/btcsuite/btcd/wire"
)

// The two kinds of address book: btcd's address manager on public
// networks, the local list on regtest.
var bookKinds = []struct {
	name   string
	params *chaincfg.Params
	file   string
}{
	{"public", &chaincfg.MainNetParams, PeersFile},
	{"local", &chaincfg.RegressionNetParams, LocalPeersFile},
}

// clock is a test clock.
type clock struct{ t time.Time }

func (c *clock) now() time.Time          { return c.t }
func (c *clock) advance(d time.Duration) { c.t = c.t.Add(d) }
func newClock() *clock                   { return &clock{t: time.Now()} }
func onion(i int) string                 { return onionNA(i, 0).Addr.String() }
func onionKeyOf(i int) [32]byte          { return sha256.Sum256(fmt.Appendf(nil, "onion %d", i)) }
func onionNA(i int, s wire.ServiceFlag) *wire.NetAddressV2 {
	k := onionKeyOf(i)
	return wire.NetAddressV2FromBytes(time.Now(), s, k[:], 8333)
}

// na returns the network address of hostport, seen now.
func na(t testing.TB, hostport string, services wire.ServiceFlag) *wire.NetAddressV2 {
	t.Helper()
	a, err := ParseAddr(hostport, services, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// nas returns the network addresses of hostports, with services.
func nas(t testing.TB, services wire.ServiceFlag, hostports ...string) []*wire.NetAddressV2 {
	t.Helper()
	out := make([]*wire.NetAddressV2, len(hostports))
	for i, hp := range hostports {
		out[i] = na(t, hp, services)
	}
	return out
}

// openBook opens a book the test closes at its end.
func openBook(t testing.TB, params *chaincfg.Params, dir string, now func() time.Time) (*Book, []string) {
	t.Helper()
	b, notes, err := Open(params, dir, now)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	return b, notes
}

// pickAll picks from b until nothing is left, skipping what it picked,
// and returns the addresses in the order picked.
func pickAll(b *Book, need wire.ServiceFlag, inUse []string) []string {
	var got []string
	for range 1000 {
		a, ok := b.Pick(need, inUse, func(hp string) bool { return slices.Contains(got, hp) })
		if !ok {
			break
		}
		got = append(got, a)
	}
	return got
}

func sorted(s []string) []string { return slices.Sorted(slices.Values(s)) }

func TestAddrBookGroupKey(t *testing.T) {
	k := onionKeyOf(1)
	tests := []struct {
		hostport, want string
	}{
		{"1.2.3.4:8333", "1.2.0.0"},
		{"1.2.200.9:1", "1.2.0.0"},
		{"[2001:4860:1:2::1]:8333", "2001:4860::"},
		{"[2001:470:1234::1]:8333", "2001:470:1000::"}, // Hurricane Electric: /36
		{onion(1) + ":8333", fmt.Sprintf("tor:%d", k[0]&15)},
		{"127.0.0.1:18444", "127.0.0.0"},
		{"127.0.0.2:18444", "127.0.0.0"},
		{"10.1.2.3:18444", "10.1.0.0"},
		{"10.2.2.3:18444", "10.2.0.0"},
		{"[::1]:18444", "::"},
		{"Node.Example:8333", "host:node.example"},
		{"not an address", "host:not an address"},
	}
	for _, tc := range tests {
		if got := groupKey(tc.hostport); got != tc.want {
			t.Errorf("groupKey(%q) = %q, want %q", tc.hostport, got, tc.want)
		}
	}
	// Routable addresses: btcd's groups.
	for i := range 200 {
		h := sha256.Sum256([]byte{byte(i)})
		for _, ip := range []net.IP{h[:4], h[:16]} {
			a := wire.NetAddressV2FromBytes(time.Now(), 0, ip, 8333)
			if !addrmgr.IsRoutable(a) {
				continue
			}
			if got, want := groupKey(addrmgr.NetAddressKey(a)), addrmgr.GroupKey(a); got != want {
				t.Errorf("groupKey(%s) = %q, btcd's %q", addrmgr.NetAddressKey(a), got, want)
			}
		}
	}
}

func TestAddrBookAddFilters(t *testing.T) {
	torV2 := wire.NetAddressV2FromBytes(time.Now(), 0, bytes.Repeat([]byte{7}, 10), 8333)
	tests := []struct {
		name          string
		addr          *wire.NetAddressV2
		public, local bool
	}{
		{"public IPv4", na(t, "1.2.3.4:8333", 0), true, true},
		{"public IPv6", na(t, "[2001:4860::8]:8333", 0), true, true},
		{"Tor v3", onionNA(1, 0), true, true},
		{"loopback", na(t, "127.0.0.1:18444", 0), false, true},
		{"IPv6 loopback", na(t, "[::1]:18444", 0), false, true},
		{"private", na(t, "10.0.0.1:18444", 0), false, true},
		{"TEST-NET-1", na(t, "192.0.2.1:8333", 0), false, true},
		{"shared address space", na(t, "100.64.0.1:8333", 0), false, true},
		{"unspecified", na(t, "0.0.0.0:8333", 0), false, false},
		{"broadcast", na(t, "255.255.255.255:8333", 0), false, false},
		{"port 0", na(t, "1.2.3.4:0", 0), false, false},
		{"Tor v2", torV2, false, false},
		{"no address", &wire.NetAddressV2{Port: 8333}, false, false},
		{"nil", nil, false, false},
	}
	for _, kind := range bookKinds {
		for _, tc := range tests {
			t.Run(kind.name+"/"+tc.name, func(t *testing.T) {
				b, _ := openBook(t, kind.params, "", nil)
				want := tc.public
				if kind.name == "local" {
					want = tc.local
				}
				n := b.Add([]*wire.NetAddressV2{tc.addr}, "1.1.1.1:8333")
				got := pickAll(b, 0, nil)
				if (n == 1) != want || len(got) != n {
					t.Fatalf("add took %d, pick found %v; want taken %v", n, got, want)
				}
				if want && got[0] != addrmgr.NetAddressKey(tc.addr) {
					t.Errorf("picked %s, want %s", got[0], addrmgr.NetAddressKey(tc.addr))
				}
			})
		}
	}
}

func TestAddrBookPickServices(t *testing.T) {
	const need = wire.SFNodeCF | wire.SFNodeWitness
	hosts := map[string]string{"public": "1.2.%d.1:8333", "local": "127.0.0.%d:18444"}
	for _, kind := range bookKinds {
		t.Run(kind.name, func(t *testing.T) {
			b, _ := openBook(t, kind.params, "", nil)
			h := func(i int) string { return fmt.Sprintf(hosts[kind.name], i) }
			b.Add(nas(t, need|wire.SFNodeNetwork, h(1), h(2)), "1.1.1.1:8333")
			b.Add(nas(t, wire.SFNodeBloom|wire.SFNodeWitness, h(3)), "1.1.1.1:8333")
			b.Add(nas(t, wire.SFNodeCF, h(4)), "1.1.1.1:8333")
			b.Add(nas(t, 0, h(5)), "seed.example") // a seed without filtering
			got := pickAll(b, need, nil)
			if len(got) != 3 || !slices.Equal(sorted(got[:2]), []string{h(1), h(2)}) || got[2] != h(5) {
				t.Errorf("picked %v: want %s and %s (in any order), then %s of unknown services", got, h(1), h(2), h(5))
			}
			if got := pickAll(b, 0, nil); len(got) != 5 {
				t.Errorf("picked %v without a need, want all 5", got)
			}
		})
	}
}

func TestAddrBookPickGroups(t *testing.T) {
	tests := []struct {
		name   string
		params *chaincfg.Params
		addrs  []string
		inUse  []string
		want   []string // pick's possible answers; nil: none
	}{
		{"public: another group", &chaincfg.MainNetParams, []string{"1.2.0.1:8333", "1.2.0.2:8333", "5.6.0.1:8333"},
			[]string{"1.2.0.1:8333"}, []string{"5.6.0.1:8333"}},
		{"public: never a group in use", &chaincfg.MainNetParams, []string{"1.2.0.1:8333", "1.2.0.2:8333", "5.6.0.1:8333"},
			[]string{"1.2.0.1:8333", "5.6.0.1:8333"}, nil},
		{"public: a peer given by name is its own group", &chaincfg.MainNetParams, []string{"1.2.0.1:8333", "5.6.0.1:8333"},
			[]string{"node.example:8333", "1.2.0.1:8333"}, []string{"5.6.0.1:8333"}},
		{"local: another group first", &chaincfg.RegressionNetParams, []string{"10.1.0.1:18444", "10.1.0.2:18444", "10.2.0.1:18444"},
			[]string{"10.1.0.1:18444"}, []string{"10.2.0.1:18444"}},
		{"local: then a group in use", &chaincfg.RegressionNetParams, []string{"10.1.0.1:18444", "10.1.0.2:18444", "10.2.0.1:18444"},
			[]string{"10.1.0.1:18444", "10.2.0.1:18444"}, []string{"10.1.0.2:18444"}},
		{"local: loopback is one group", &chaincfg.RegressionNetParams, []string{"127.0.0.1:1", "127.0.0.1:2"},
			[]string{"127.0.0.1:1"}, []string{"127.0.0.1:2"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			b, _ := openBook(t, tc.params, "", nil)
			b.Add(nas(t, wire.SFNodeNetwork, tc.addrs...), "1.1.1.1:8333")
			for range 20 {
				got, ok := b.Pick(wire.SFNodeNetwork, tc.inUse, nil)
				if !ok && tc.want == nil {
					continue
				}
				if !ok || !slices.Contains(tc.want, got) {
					t.Fatalf("pick with %v in use = %q, %v; want one of %v", tc.inUse, got, ok, tc.want)
				}
			}
		})
	}
}

func TestAddrBookPickLater(t *testing.T) {
	t.Run("public: off the default port", func(t *testing.T) {
		b, _ := openBook(t, &chaincfg.MainNetParams, "", nil)
		b.Add(nas(t, 0, "1.2.3.4:9999", "5.6.7.8:8333"), "1.1.1.1:8333")
		if got := pickAll(b, 0, nil); !slices.Equal(got, []string{"5.6.7.8:8333", "1.2.3.4:9999"}) {
			t.Errorf("picked %v, want the default port first", got)
		}
	})
	t.Run("local: attempted lately", func(t *testing.T) {
		c := newClock()
		b, _ := openBook(t, &chaincfg.RegressionNetParams, "", c.now)
		b.Add(nas(t, 0, "127.0.0.1:1", "127.0.0.1:2"), "127.0.0.1:3")
		b.Attempt("127.0.0.1:1")
		if got := pickAll(b, 0, nil); !slices.Equal(got, []string{"127.0.0.1:2", "127.0.0.1:1"}) {
			t.Errorf("picked %v, want the address attempted now last", got)
		}
		c.advance(recentAttempt + time.Second)
		b.Attempt("127.0.0.1:2")
		if got, _ := b.Pick(0, nil, nil); got != "127.0.0.1:1" {
			t.Errorf("picked %s, want 127.0.0.1:1, attempted more than ten minutes ago", got)
		}
	})
}

func TestAddrBookTimestamps(t *testing.T) {
	c := newClock()
	b, _ := openBook(t, &chaincfg.RegressionNetParams, "", c.now)
	fiveDaysAgo := c.t.Add(-5 * 24 * time.Hour)
	tests := []struct {
		ts, want time.Time
	}{
		{c.t.Add(-time.Hour), c.t.Add(-time.Hour)},
		{c.t.Add(9 * time.Minute), c.t.Add(9 * time.Minute)},
		{c.t.Add(11 * time.Minute), fiveDaysAgo},
		{time.Unix(1e8, 0), fiveDaysAgo},
	}
	for i, tc := range tests {
		a := na(t, fmt.Sprintf("127.0.0.1:%d", i+1), 0)
		a.Timestamp = tc.ts
		b.Add([]*wire.NetAddressV2{a}, "127.0.0.1:9")
		if !a.Timestamp.Equal(tc.ts) {
			t.Errorf("add changed the caller's address")
		}
	}
	ks, _ := b.Known()
	for i, tc := range tests {
		if !ks[i].LastSeen.Equal(tc.want) {
			t.Errorf("gossiped time %v: kept as %v, want %v", tc.ts, ks[i].LastSeen, tc.want)
		}
	}
}

// lives runs two lives of a book in one directory.
func TestAddrBookPersisted(t *testing.T) {
	hosts := map[string][]string{
		"public": {"1.2.3.4:8333", "5.6.7.8:8333", "9.10.11.12:8333", "node.example:8333", onion(1) + ":8333"},
		"local":  {"127.0.0.1:18444", "127.0.0.1:18445", "10.0.0.1:18444", "node.local:18444", onion(1) + ":18444"},
	}
	for _, kind := range bookKinds {
		t.Run(kind.name, func(t *testing.T) {
			dir := t.TempDir()
			h := hosts[kind.name]
			b, notes, err := Open(kind.params, dir, nil)
			if err != nil || notes != nil {
				t.Fatalf("open: %v, notes %q", err, notes)
			}
			b.Add(nas(t, wire.SFNodeNetwork, h[0], h[1], h[4]), "1.1.1.1:8333")
			b.Attempt(h[0])
			b.Good(h[0])
			b.Attempt(h[1])
			b.Connected(h[3], wire.SFNodeCF) // given by the user
			b.Connected(h[2], wire.SFNodeWitness)
			if err := b.Close(); err != nil {
				t.Fatal(err)
			}
			if err := b.Close(); err != nil {
				t.Errorf("second close: %v", err)
			}
			b2, notes := openBook(t, kind.params, dir, nil)
			if notes != nil {
				t.Errorf("notes %q", notes)
			}
			ks, err := b2.Known()
			if err != nil {
				t.Fatal(err)
			}
			byAddr := make(map[string]Known)
			for _, k := range ks {
				byAddr[k.Addr] = k
			}
			want := []string{h[0], h[1], h[2], h[4]}
			if kind.name == "local" {
				want = append(want, h[3]) // a name: not in btcd's book
			}
			if got := slices.Sorted(func(yield func(string) bool) {
				for a := range byAddr {
					if !yield(a) {
						return
					}
				}
			}); !slices.Equal(got, sorted(want)) {
				t.Fatalf("known %v, want %v", got, sorted(want))
			}
			if k := byAddr[h[0]]; !k.Tried || k.LastSuccess.IsZero() || k.Attempts != 0 {
				t.Errorf("good address kept as %+v", k)
			}
			if k := byAddr[h[1]]; k.Tried || k.LastAttempt.IsZero() || k.Attempts != 1 || !k.LastSuccess.IsZero() {
				t.Errorf("attempted address kept as %+v", k)
			}
			if k := byAddr[h[2]]; k.Services != wire.SFNodeWitness {
				t.Errorf("connected address kept as %+v, want services %v", k, wire.SFNodeWitness)
			}
			// btcd's manager draws addresses dialled in the last ten
			// minutes a hundred times less often: pick may miss them.
			got := pickAll(b2, wire.SFNodeNetwork, nil)
			if !slices.Contains(got, h[4]) || slices.ContainsFunc(got, func(a string) bool { return !slices.Contains([]string{h[0], h[1], h[4]}, a) }) {
				t.Errorf("picked %v after reopening, want %s and maybe %s, %s", got, h[4], h[0], h[1])
			}
		})
	}
}

// savedBook returns the bytes of a book file of kind holding a few
// addresses.
func savedBook(t testing.TB, params *chaincfg.Params, file string) []byte {
	t.Helper()
	dir := t.TempDir()
	b, _, err := Open(params, dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	b.Add([]*wire.NetAddressV2{onionNA(1, 1), onionNA(2, 1), onionNA(3, 1)}, "1.1.1.1:8333")
	b.Good(onion(2) + ":8333")
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(dir, file))
	if err != nil {
		t.Fatal(err)
	}
	return data
}

func TestAddrBookDamaged(t *testing.T) {
	public := savedBook(t, &chaincfg.MainNetParams, PeersFile)
	local := savedBook(t, &chaincfg.RegressionNetParams, LocalPeersFile)
	a1 := onion(1) + ":8333"
	edit := func(f func(*savedPeers)) []byte {
		var sp savedPeers
		if err := json.Unmarshal(public, &sp); err != nil {
			t.Fatal(err)
		}
		f(&sp)
		b, _ := json.Marshal(&sp)
		return b
	}
	tests := []struct {
		name   string
		params *chaincfg.Params
		data   []byte
		why    string
	}{
		{"public/garbage", &chaincfg.MainNetParams, []byte("\x00\x01garbage"), "invalid character"},
		{"public/empty", &chaincfg.MainNetParams, nil, "empty"},
		{"public/null", &chaincfg.MainNetParams, []byte("null"), "unknown version 0"},
		{"public/cut short", &chaincfg.MainNetParams, public[:len(public)/2], "unexpected EOF"},
		{"public/version 3", &chaincfg.MainNetParams, edit(func(sp *savedPeers) { sp.Version = 3 }), "unknown version 3"},
		{"public/a host name", &chaincfg.MainNetParams, edit(func(sp *savedPeers) { sp.Addresses[0].Src = "seed.example:8333" }), "not an IP or onion address"},
		{"public/unlisted bucket entry", &chaincfg.MainNetParams, edit(func(sp *savedPeers) { sp.NewBuckets[7] = append(sp.NewBuckets[7], "1.2.3.4:8333") }), "not listed"},
		{"public/twice in a bucket", &chaincfg.MainNetParams, edit(func(sp *savedPeers) {
			sp.NewBuckets[7] = append(sp.NewBuckets[7], a1, a1)
		}), "twice"},
		{"public/twice tried", &chaincfg.MainNetParams, edit(func(sp *savedPeers) {
			sp.TriedBuckets[3] = append(sp.TriedBuckets[3], onion(2)+":8333")
		}), "new or tried already"},
		{"public/in no bucket", &chaincfg.MainNetParams, edit(func(sp *savedPeers) {
			for i := range sp.NewBuckets {
				sp.NewBuckets[i] = slices.DeleteFunc(sp.NewBuckets[i], func(s string) bool { return s == a1 })
			}
		}), "in no bucket"},
		{"public/new and tried", &chaincfg.MainNetParams, edit(func(sp *savedPeers) { sp.TriedBuckets[5] = append(sp.TriedBuckets[5], a1) }), "new or tried already"},
		{"public/too many attempts", &chaincfg.MainNetParams, edit(func(sp *savedPeers) { sp.Addresses[0].Attempts = 5000 }), "5000 failed attempts"},
		{"public/negative attempts", &chaincfg.MainNetParams, edit(func(sp *savedPeers) { sp.Addresses[0].Attempts = -1 }), "-1 failed attempts"},
		{"public/not as btcd writes it", &chaincfg.MainNetParams, edit(func(sp *savedPeers) { sp.Addresses[0].Addr = strings.ToUpper(sp.Addresses[0].Addr) }), "not written as"},
		{"public/a null address", &chaincfg.MainNetParams, edit(func(sp *savedPeers) { sp.Addresses[1] = nil }), "a null address"},
		{"local/garbage", &chaincfg.RegressionNetParams, []byte("{{{"), "invalid character"},
		{"local/cut short", &chaincfg.RegressionNetParams, local[:len(local)-2], "unexpected end of JSON input"},
		{"local/another network", &chaincfg.RegressionNetParams, bytes.Replace(local, []byte(`"regtest"`), []byte(`"simnet"`), 1), `a book of "simnet", not "regtest"`},
		{"local/version 2", &chaincfg.RegressionNetParams, bytes.Replace(local, []byte(`"version": 1`), []byte(`"version": 2`), 1), "unknown version 2"},
		{"local/too large", &chaincfg.RegressionNetParams, bytes.Repeat([]byte(" "), maxLocalFile+1), "larger than"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			file := PeersFile
			if tc.params == &chaincfg.RegressionNetParams {
				file = LocalPeersFile
			}
			path := filepath.Join(dir, file)
			if err := os.WriteFile(path, tc.data, 0o644); err != nil {
				t.Fatal(err)
			}
			b, notes := openBook(t, tc.params, dir, nil)
			if len(notes) == 0 || !strings.Contains(notes[0], path+" is damaged") || !strings.Contains(notes[0], tc.why) ||
				!strings.Contains(strings.Join(notes, "\n"), "starts empty") {
				t.Errorf("notes %q: want %s named damaged because %q, and the book empty", notes, path, tc.why)
			}
			aside, _ := filepath.Glob(path + ".damaged-*")
			if len(aside) != 1 {
				t.Fatalf("the damaged file was set aside as %q", aside)
			}
			if kept, err := os.ReadFile(aside[0]); err != nil || !bytes.Equal(kept, tc.data) || !strings.Contains(notes[0], "set aside as "+filepath.Base(aside[0])) {
				t.Errorf("the damaged file was not kept as %s (notes %q): %v", aside[0], notes, err)
			}
			if got := pickAll(b, 0, nil); got != nil {
				t.Errorf("picked %v from an empty book", got)
			}
			// The book works and saves a file the next life reads.
			b.Add([]*wire.NetAddressV2{onionNA(9, 0)}, "1.1.1.1:8333")
			if err := b.Close(); err != nil {
				t.Fatal(err)
			}
			b2, notes := openBook(t, tc.params, dir, nil)
			if got := pickAll(b2, 0, nil); notes != nil || len(got) != 1 {
				t.Errorf("next life: notes %q, picked %v", notes, got)
			}
		})
	}
}

func TestAddrBookLocalEntriesDropped(t *testing.T) {
	dir := t.TempDir()
	lf := localFile{Version: localFileVersion, Network: "regtest"}
	for _, a := range []string{"127.0.0.1:1", "no port", "127.0.0.1:0", ":5", "127.0.0.1:1"} {
		lf.Addresses = append(lf.Addresses, Known{Addr: a})
	}
	for i := range maxLocalAddresses {
		lf.Addresses = append(lf.Addresses, Known{Addr: fmt.Sprintf("10.0.%d.%d:1", i/256, i%256)})
	}
	data, _ := json.Marshal(&lf)
	if err := os.WriteFile(filepath.Join(dir, LocalPeersFile), data, 0o644); err != nil {
		t.Fatal(err)
	}
	b, notes := openBook(t, &chaincfg.RegressionNetParams, dir, nil)
	ks, _ := b.Known()
	if len(ks) != maxLocalAddresses || len(notes) != 1 || !strings.Contains(notes[0], "5 of its 1005 addresses dropped") {
		t.Errorf("kept %d addresses, notes %q; want %d and 5 dropped", len(ks), notes, maxLocalAddresses)
	}
}

func TestAddrBookRecoverPrev(t *testing.T) {
	public := savedBook(t, &chaincfg.MainNetParams, PeersFile)
	tests := []struct {
		name  string
		main  []byte // nil: none
		notes []string
	}{
		{"save cut before writing", nil, []string{"restored from"}},
		{"save cut while writing", public[:100], []string{"is damaged", "restored from"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, PeersFile)
			if err := os.WriteFile(path+prevSuffix, public, 0o644); err != nil {
				t.Fatal(err)
			}
			if tc.main != nil {
				if err := os.WriteFile(path, tc.main, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			b, notes := openBook(t, &chaincfg.MainNetParams, dir, nil)
			if len(notes) != len(tc.notes) {
				t.Fatalf("notes %q, want %d", notes, len(tc.notes))
			}
			for i, n := range tc.notes {
				if !strings.Contains(notes[i], n) {
					t.Errorf("note %q, want %q", notes[i], n)
				}
			}
			if got := pickAll(b, 0, nil); len(got) != 3 {
				t.Errorf("picked %v, want the 3 addresses of the copy", got)
			}
			if _, err := os.Stat(path + prevSuffix); err == nil {
				t.Errorf("%s left behind", path+prevSuffix)
			}
		})
	}
	t.Run("a finished save leaves no copy", func(t *testing.T) {
		dir := t.TempDir()
		path := filepath.Join(dir, PeersFile)
		for _, name := range []string{path, path + prevSuffix} {
			if err := os.WriteFile(name, public, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		_, notes := openBook(t, &chaincfg.MainNetParams, dir, nil)
		if _, err := os.Stat(path + prevSuffix); notes != nil || err == nil {
			t.Errorf("notes %q, copy: %v", notes, err)
		}
	})
}

// TestAddrBookAttemptsCapped: btcd's address manager, asked for an
// address, searches forever when the addresses it draws from have failed
// about 1,830 times; the book stops counting at maxFailedAttempts.
func TestAddrBookAttemptsCapped(t *testing.T) {
	dir := t.TempDir()
	b, _ := openBook(t, &chaincfg.MainNetParams, dir, nil)
	a := onion(1) + ":8333"
	b.Add([]*wire.NetAddressV2{onionNA(1, 0)}, "1.1.1.1:8333")
	for range 2000 {
		b.Attempt(a)
	}
	picked := make(chan string, 1)
	go func() {
		p, _ := b.Pick(0, nil, nil)
		picked <- p
	}()
	select {
	case p := <-picked:
		if p != a {
			t.Errorf("picked %q, want %s", p, a)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("pick never returned")
	}
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	b2, notes := openBook(t, &chaincfg.MainNetParams, dir, nil)
	ks, _ := b2.Known()
	if notes != nil || len(ks) != 1 || ks[0].Attempts != maxFailedAttempts {
		t.Fatalf("next life: notes %q, known %+v; want %d attempts", notes, ks, maxFailedAttempts)
	}
	// Counted from the file on: still capped, and forgotten on success.
	b2.Attempt(a)
	b2.Good(a)
	b2.Attempt(a)
	if err := b2.Close(); err != nil {
		t.Fatal(err)
	}
	b3, _ := openBook(t, &chaincfg.MainNetParams, dir, nil)
	if ks, _ := b3.Known(); len(ks) != 1 || ks[0].Attempts != 1 || !ks[0].Tried {
		t.Errorf("known %+v, want one attempt after the success", ks)
	}
}

func TestAddrBookSaveFails(t *testing.T) {
	for _, kind := range bookKinds {
		t.Run(kind.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "book")
			b, _ := openBook(t, kind.params, dir, nil)
			b.Add([]*wire.NetAddressV2{onionNA(1, 0)}, "1.1.1.1:8333")
			if err := os.RemoveAll(dir); err != nil {
				t.Fatal(err)
			}
			err := b.Close()
			if err == nil || !strings.Contains(err.Error(), "saving the address book") {
				t.Errorf("close = %v, want an error saving the book", err)
			}
		})
	}
}

func TestAddrBookBounds(t *testing.T) {
	t.Run("quota per source", func(t *testing.T) {
		c := newClock()
		b, _ := openBook(t, &chaincfg.RegressionNetParams, "", c.now)
		many := func(base, n int) []*wire.NetAddressV2 {
			out := make([]*wire.NetAddressV2, n)
			for i := range out {
				out[i] = na(t, fmt.Sprintf("10.%d.%d.%d:1", (base+i)>>16&255, (base+i)>>8&255, (base+i)&255), 0)
			}
			return out
		}
		steps := []struct {
			src     string
			wait    time.Duration
			n, want int
		}{
			{"127.0.0.1:1", 0, 1500, sourceBurst},
			{"127.0.0.1:1", 0, 10, 0},
			{"127.0.0.1:1", 60 * time.Second, 100, 10},
			{"127.0.0.1:2", 0, 300, 300},
			{"127.0.0.1:1", time.Hour, 2000, 600},
		}
		for i, s := range steps {
			c.advance(s.wait)
			if got := b.Add(many(i*2000, s.n), s.src); got != s.want {
				t.Errorf("step %d: %s added %d of %d, want %d", i, s.src, got, s.n, s.want)
			}
		}
	})
	t.Run("sources remembered", func(t *testing.T) {
		b, _ := openBook(t, &chaincfg.RegressionNetParams, "", nil)
		for i := range 3 * maxSources {
			b.Add(nas(t, 0, "127.0.0.1:1"), fmt.Sprintf("127.0.0.1:%d", i+1))
		}
		if len(b.quotas) != maxSources || len(b.sources) != maxSources {
			t.Errorf("%d quotas, %d sources kept; want %d", len(b.quotas), len(b.sources), maxSources)
		}
	})
	t.Run("local total", func(t *testing.T) {
		b, _ := openBook(t, &chaincfg.RegressionNetParams, "", nil)
		b.Add(nas(t, 0, "127.0.0.1:1"), "127.0.0.1:9")
		b.Good("127.0.0.1:1")
		for src := range 5 {
			addrs := make([]*wire.NetAddressV2, 1000)
			for i := range addrs {
				addrs[i] = na(t, fmt.Sprintf("10.%d.%d.%d:1", src, i/256, i%256), 0)
			}
			b.Add(addrs, fmt.Sprintf("127.0.0.2:%d", src))
		}
		ks, _ := b.Known()
		if len(ks) != maxLocalAddresses || !slices.ContainsFunc(ks, func(k Known) bool { return k.Addr == "127.0.0.1:1" }) {
			t.Errorf("%d addresses kept (the used one kept: %v), want %d", len(ks),
				slices.ContainsFunc(ks, func(k Known) bool { return k.Addr == "127.0.0.1:1" }), maxLocalAddresses)
		}
	})
	t.Run("public: one source group", func(t *testing.T) {
		// btcd's address manager puts what sources of one group
		// gossip into 64 of its 1,024 new buckets of 65 addresses.
		c := newClock()
		b, _ := openBook(t, &chaincfg.MainNetParams, "", c.now)
		offered := 0
		for src := range 10 {
			c.advance(24 * time.Hour)
			offered += b.Add(publicAddrs(src, sourceBurst), fmt.Sprintf("1.1.1.%d:8333", src))
		}
		const bound = 64 * 65
		if n := b.store.(*publicStore).am.NumAddresses(); n > bound || n < bound/2 {
			t.Errorf("%d addresses held of %d offered by one source group, want at most %d (and most of them)", n, offered, bound)
		}
	})
}

// publicAddrs returns n distinct routable IPv4 addresses, the same for
// the same seed.
func publicAddrs(seed, n int) []*wire.NetAddressV2 {
	out := make([]*wire.NetAddressV2, 0, n)
	for i := 0; len(out) < n; i++ {
		h := sha256.Sum256(fmt.Appendf(nil, "%d %d", seed, i))
		a := wire.NetAddressV2FromBytes(time.Now(), wire.SFNodeNetwork, h[:4], 8333)
		if addrmgr.IsRoutable(a) {
			out = append(out, a)
		}
	}
	return out
}

// BenchmarkAddrBookFull fills btcd's address manager from 200 source
// groups of 1,000 addresses each, and reports the addresses it holds,
// the heap they take and the size of the peers.json it saves.
func BenchmarkAddrBookFull(b *testing.B) {
	for range b.N {
		dir := b.TempDir()
		book, _, err := Open(&chaincfg.MainNetParams, dir, nil)
		if err != nil {
			b.Fatal(err)
		}
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		for src := range 200 {
			book.Add(publicAddrs(src, sourceBurst), fmt.Sprintf("%d.%d.1.1:8333", 1+src/200, src%200))
		}
		runtime.GC()
		runtime.ReadMemStats(&after)
		b.ReportMetric(float64(book.store.(*publicStore).am.NumAddresses()), "addresses")
		b.ReportMetric(float64(int64(after.HeapAlloc)-int64(before.HeapAlloc))/1e6, "heap-MB")
		if err := book.Close(); err != nil {
			b.Fatal(err)
		}
		st, err := os.Stat(filepath.Join(dir, PeersFile))
		if err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(float64(st.Size())/1e6, "file-MB")
	}
}

// FuzzAddrBookFile opens a book on any file: never a crash, never an
// error for what the file holds, and what the book then saves reads back
// without a note.
func FuzzAddrBookFile(f *testing.F) {
	f.Add(false, savedBook(f, &chaincfg.MainNetParams, PeersFile))
	f.Add(true, savedBook(f, &chaincfg.RegressionNetParams, LocalPeersFile))
	f.Add(false, []byte(`{"Version":2,"Addresses":[{"Addr":"1.2.3.4:8333","Src":"1.2.3.4:8333"}],"NewBuckets":[["1.2.3.4:8333"]]}`))
	f.Add(true, []byte(`{"version":1,"network":"regtest","addresses":[{"addr":"127.0.0.1:1","tried":true}]}`))
	f.Add(false, []byte("null"))
	f.Add(true, []byte("{"))
	f.Fuzz(func(t *testing.T, local bool, data []byte) {
		kind := bookKinds[0]
		if local {
			kind = bookKinds[1]
		}
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, kind.file), data, 0o644); err != nil {
			t.Fatal(err)
		}
		b, notes, err := Open(kind.params, dir, nil)
		if err != nil {
			t.Fatalf("open: %v", err)
		}
		for _, n := range notes {
			if strings.Contains(n, "btcd's address manager could not read it") {
				t.Fatalf("a file the book's check passed, btcd's address manager refused: %s", n)
			}
		}
		if _, err := b.Known(); err != nil {
			t.Fatalf("known: %v", err)
		}
		b.Pick(0, nil, nil)
		if err := b.Close(); err != nil {
			t.Fatalf("close: %v", err)
		}
		b, notes, err = Open(kind.params, dir, nil)
		if err != nil || notes != nil {
			t.Fatalf("reopening what was saved: %v, notes %q", err, notes)
		}
		b.Close()
	})
}
