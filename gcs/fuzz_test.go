package gcs

import (
	"bytes"
	"encoding/hex"
	"errors"
	"math/rand/v2"
	"slices"
	"testing"

	btcgcs "github.com/btcsuite/btcd/btcutil/gcs"
)

// decodeErrors are the sentinels a decoding failure must wrap.
var decodeErrors = []error{ErrNTooLarge, ErrTruncated, ErrTrailingData, ErrValueOutOfRange, ErrNonCanonicalN, ErrBadM}

func mustHex(s string) []byte {
	b, err := hex.DecodeString(s)
	if err != nil {
		panic(err)
	}
	return b
}

// FuzzFromNBytes feeds untrusted bytes to the strict decoder. Whatever it
// accepts must re-encode to exactly the same bytes (so there is one
// encoding per set) with sorted values below N*M; whatever it rejects must
// be rejected with one of the package's errors, never a panic.
func FuzzFromNBytes(f *testing.F) {
	for _, s := range []string{
		"00", "019dfca8", "0174a170", "0afbc2920af1b027f31f87b592276eb4c32094bb4d3697021b4c6380",
		"0db414c859a07e8205876354a210a75042d0463404913d61a8e068e58a3ae2aa080026",
		"09027acea61b6cc3fb33f5d52f7d088a6b2f75d234e89ca800", "0385acb4f0fe889ef0",
		"", "0000", "01", "01ffffff", "fd0500", "fe00000100", "ffffffffffffffffff", "019dfca9", "019dfca800",
	} {
		f.Add(mustHex(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, pm := range []struct {
			p uint8
			m uint64
		}{{BasicP, BasicM}, {2, 3}} {
			// The fast validation agrees with the plain one exactly.
			if n, size, err := readCompactSize(data); err == nil && n < 1<<32 {
				checkValidate(t, uint32(n), uint(pm.p), n*pm.m, data[size:])
			}
			fl, err := FromNBytes(pm.p, pm.m, data)
			if err != nil {
				if !slices.ContainsFunc(decodeErrors, func(e error) bool { return errors.Is(err, e) }) {
					t.Fatalf("P=%d M=%d: error %v wraps no package error", pm.p, pm.m, err)
				}
				continue
			}
			if !bytes.Equal(fl.NBytes(), data) {
				t.Fatalf("NBytes %x, input %x", fl.NBytes(), data)
			}
			values := fl.Values(nil)
			if len(values) != int(fl.N()) || !slices.IsSorted(values) {
				t.Fatalf("values %v not N=%d sorted values", values, fl.N())
			}
			if len(values) > 0 && values[len(values)-1] >= uint64(fl.N())*pm.m {
				t.Fatalf("value %d out of range", values[len(values)-1])
			}
			again := encode(fl.N(), pm.p, pm.m, uint64(fl.N())*pm.m, values)
			if !bytes.Equal(again.NBytes(), data) {
				t.Fatalf("re-encoding gives %x, input %x", again.NBytes(), data)
			}
			// btcutil, which does not validate, reads the same stream:
			// a probe matches in both or in neither.
			probe := []byte("probe")
			bf, err := btcgcs.FromNBytes(pm.p, pm.m, data)
			if err != nil {
				t.Fatalf("btcutil rejects what we accept: %v", err)
			}
			want, _ := bf.Match([16]byte{}, probe)
			if got := fl.Match([16]byte{}, probe); got != want {
				t.Fatalf("Match %v, btcutil %v", got, want)
			}
		}
	})
}

// splitElements cuts fuzz input into elements: each byte b starts an
// element of b%41 bytes taken from what follows.
func splitElements(data []byte) [][]byte {
	var out [][]byte
	for len(data) > 0 {
		n := min(int(data[0])%41, len(data)-1)
		out = append(out, data[1:1+n])
		data = data[1+n:]
	}
	return out
}

// FuzzMatch builds filters from fuzz-derived elements and checks that
// every element matches (no false negatives, ever), in every matching
// mode, before and after a serialization round trip, and that the filter
// is the one btcutil builds.
func FuzzMatch(f *testing.F) {
	f.Add([]byte("0123456789abcdef"), []byte{3, 'a', 'b', 'c', 0, 25, 1, 2, 3})
	f.Add(make([]byte, 16), []byte{})
	f.Add([]byte("key-key-key-key!"), bytes.Repeat([]byte{5, 1, 2, 3, 4, 5}, 40))
	f.Add([]byte("another 16B key."), bytes.Repeat([]byte{22, 0, 20, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20}, 70))
	f.Fuzz(func(t *testing.T, keyBytes, data []byte) {
		var key [16]byte
		copy(key[:], keyBytes)
		elems := splitElements(data)
		fl, err := Build(key, BasicP, BasicM, elems)
		if err != nil {
			t.Fatal(err)
		}
		set, err := buildSet(key, BasicP, BasicM, elems)
		if err != nil {
			t.Fatal(err)
		}
		back, err := DecodeBasic(fl.NBytes())
		if err != nil {
			t.Fatalf("decoding a built filter: %v", err)
		}
		if !bytes.Equal(back.NBytes(), fl.NBytes()) {
			t.Fatal("round trip changed the filter")
		}
		theirs, _ := btcgcs.BuildGCSFilter(BasicP, BasicM, key, elems)
		if want, _ := theirs.NBytes(); !bytes.Equal(fl.NBytes(), want) {
			t.Fatalf("filter %x, btcutil %x", fl.NBytes(), want)
		}
		for _, e := range elems {
			if !fl.Match(key, e) || !back.Match(key, e) || !set.Match(key, e) {
				t.Fatalf("false negative for %x", e)
			}
		}
		if len(elems) > 0 {
			m := NewMatcher(elems)
			if !fl.MatchAny(key, elems) || !m.Match(back, key) || !set.MatchAny(key, elems[len(elems)/2:]) {
				t.Fatal("false negative in MatchAny/Matcher")
			}
		}
		// Other parameters, taken from the key: P in 1..32, M near 2^P.
		p := 1 + key[0]%32
		m := 1 + uint64(key[1])<<(p-1)>>7 + uint64(key[2])
		g, err := Build(key, p, m, elems)
		if err != nil {
			t.Fatalf("Build P=%d M=%d: %v", p, m, err)
		}
		gb, err := FromNBytes(p, m, g.NBytes())
		if err != nil || !bytes.Equal(gb.NBytes(), g.NBytes()) {
			t.Fatalf("P=%d M=%d: round trip: %v", p, m, err)
		}
		for _, e := range elems {
			if !gb.Match(key, e) {
				t.Fatalf("P=%d M=%d: false negative for %x", p, m, e)
			}
		}
		if len(elems) > 0 && !gb.MatchAny(key, elems) {
			t.Fatalf("P=%d M=%d: false negative in MatchAny", p, m)
		}
	})
}

// FuzzMatchBytes feeds untrusted filter bytes and a fuzz-derived watch
// list to the one-pass path and holds it to the strict decoder: the same
// accept/reject and error, the same answer as Matcher.Match on the
// decoded filter, and the same answer in the early-exit mode when the
// filter is valid.
func FuzzMatchBytes(f *testing.F) {
	for _, s := range []string{
		"00", "019dfca8", "0174a170", "0afbc2920af1b027f31f87b592276eb4c32094bb4d3697021b4c6380",
		"0db414c859a07e8205876354a210a75042d0463404913d61a8e068e58a3ae2aa080026",
		"09027acea61b6cc3fb33f5d52f7d088a6b2f75d234e89ca800", "0385acb4f0fe889ef0",
		"", "0000", "01", "01ffffff", "fd0500", "019dfca9", "019dfca800",
	} {
		f.Add(mustHex(s), []byte{3, 'a', 'b', 'c', 1, 0})
	}
	key := [16]byte{1, 2, 3}
	// A filter large enough to be split between two decoders, with a
	// member and with a long watch list.
	elems := randSet(rand.New(rand.NewPCG(1, 1)), 600, 30)
	big, _ := Build(key, BasicP, BasicM, elems)
	f.Add(big.NBytes(), append([]byte{30}, elems[7]...))
	f.Add(big.NBytes(), bytes.Repeat([]byte{2, 1, 2}, 400))
	f.Fuzz(func(t *testing.T, data, watchBytes []byte) {
		watch := splitElements(watchBytes)
		for _, pm := range []struct {
			p uint8
			m uint64
		}{{BasicP, BasicM}, {2, 3}, {8, 200}} {
			checkMatchBytes(t, pm.p, pm.m, data, key, watch)
		}
	})
}
