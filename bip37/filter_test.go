package bip37

import (
	"bytes"
	"math/rand/v2"
	"testing"

	"github.com/btcsuite/btcd/btcutil/bloom"
	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/btcsuite/btcd/wire"
)

// btcutilFilter loads the same parameters into btcutil's filter, the
// oracle for the differential tests.
func btcutilFilter(f *Filter) *bloom.Filter {
	return bloom.LoadFilter(wire.NewMsgFilterLoad(f.Bits(), f.HashFuncs(), f.Tweak(), f.Flags()))
}

func randBytes(r *rand.Rand, n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	return b
}

func TestMurmurHash3AgainstBtcutil(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for i := 0; i < 20000; i++ {
		data := randBytes(r, r.IntN(300))
		seed := r.Uint32()
		if got, want := MurmurHash3(seed, data), bloom.MurmurHash3(seed, data); got != want {
			t.Fatalf("MurmurHash3(%#x, %x) = %#x, btcutil %#x", seed, data, got, want)
		}
	}
}

func TestModIsExactRemainder(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	divisors := []uint32{8, 16, 24, 8 * 3, 8 * 35, 8 * 1258, 8 * 36000, 8 * 35999}
	for i := 0; i < 200; i++ {
		divisors = append(divisors, 8*(1+r.Uint32N(MaxFilterSize)))
	}
	for _, d := range divisors {
		f := &Filter{}
		f.setData(make([]byte, d/8))
		values := []uint32{0, 1, d - 1, d, d + 1, 1<<31 - 1, 1 << 31, ^uint32(0), ^uint32(0) - 1}
		for i := 0; i < 2000; i++ {
			values = append(values, r.Uint32())
		}
		for _, h := range values {
			if got := f.mod(h); got != h%d {
				t.Fatalf("mod(%d) with %d bits = %d, want %d", h, d, got, h%d)
			}
		}
	}
}

// TestAddContainsAgainstBtcutil inserts random elements of all lengths
// (including ones longer than the stack-buffered path) into our filter and
// btcutil's with identical parameters and compares bit arrays and answers.
func TestAddContainsAgainstBtcutil(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	var sparse, dense int // Contains probes differently below and above 1/4 density
	for round := 0; round < 300; round++ {
		size := 1 + r.IntN(2000)
		if round%50 == 0 {
			size = MaxFilterSize
		}
		k := uint32(r.IntN(MaxHashFuncs + 1))
		f, err := NewFilterFromParams(make([]byte, size), k, r.Uint32(), wire.BloomUpdateType(r.IntN(3)))
		if err != nil {
			t.Fatal(err)
		}
		oracle := btcutilFilter(f)
		count := 1 + r.IntN(size/4+1)
		if round%2 == 0 { // fill well past the density where probing changes
			count = 1 + r.IntN(min(2*size, 4000))
		}
		for i := 0; i < count; i++ {
			e := randBytes(r, r.IntN(200))
			f.Add(e)
			oracle.Add(e)
		}
		if !bytes.Equal(f.Bits(), oracle.MsgFilterLoad().Filter) {
			t.Fatalf("round %d: bit arrays differ (size %d, k %d)", round, size, k)
		}
		if n := popCount(f.data); f.fill < f.sparseLimit && n > f.fill || f.fill >= f.sparseLimit && n < f.sparseLimit {
			t.Fatalf("round %d: fill %d, array has %d bits set", round, f.fill, n)
		}
		if f.fill < f.sparseLimit {
			sparse++
		} else {
			dense++
		}
		for i := 0; i < 200; i++ {
			e := randBytes(r, r.IntN(200))
			if got, want := f.Contains(e), oracle.Matches(e); got != want {
				t.Fatalf("round %d: Contains(%x) = %v, btcutil %v", round, e, got, want)
			}
		}
		op := wire.NewOutPoint(&chainhash.Hash{byte(round)}, r.Uint32())
		f.AddOutPoint(op)
		oracle.AddOutPoint(op)
		if !f.ContainsOutPoint(op) || !bytes.Equal(f.Bits(), oracle.MsgFilterLoad().Filter) {
			t.Fatalf("round %d: outpoint insertion differs", round)
		}
	}
	if sparse < 30 || dense < 30 {
		t.Fatalf("weak test: %d sparse and %d dense filters", sparse, dense)
	}
}

func TestEmptyFilterMatchesEverything(t *testing.T) {
	for _, f := range []*Filter{{}, NewFilter(0, 0.01, 0, wire.BloomUpdateAll), NewFilter(10, 1, 0, wire.BloomUpdateAll)} {
		if len(f.Bits()) != 0 {
			t.Fatalf("filter has %d bytes, want 0", len(f.Bits()))
		}
		f.Add([]byte("x")) // must not panic (Core: no-op)
		if !f.Contains([]byte("anything")) || !f.ContainsOutPoint(&wire.OutPoint{}) {
			t.Error("0-byte filter does not contain everything")
		}
		if !f.MatchTxAndUpdate(wire.NewMsgTx(1)) {
			t.Error("0-byte filter does not match a transaction")
		}
	}
}

func TestZeroHashFuncsContainsEverything(t *testing.T) {
	f, err := NewFilterFromParams(make([]byte, 10), 0, 0, wire.BloomUpdateNone)
	if err != nil {
		t.Fatal(err)
	}
	f.Add([]byte("a"))
	if !f.Contains([]byte("b")) || !bytes.Equal(f.Bits(), make([]byte, 10)) {
		t.Error("a filter without hash functions must set nothing and contain everything")
	}
}

func TestCloneAndBitsAreCopies(t *testing.T) {
	f := NewFilter(10, 0.01, 7, wire.BloomUpdateAll)
	f.Add([]byte("one"))
	before := f.Bits()
	c := f.Clone()
	c.Add([]byte("two"))
	if !bytes.Equal(f.Bits(), before) {
		t.Error("adding to the clone changed the original")
	}
	if bytes.Equal(c.Bits(), before) {
		t.Error("adding to the clone changed nothing")
	}
	b := f.Bits()
	b[0] ^= 0xff
	if bytes.Equal(b, f.Bits()) {
		t.Error("Bits returned the internal array")
	}
	if c.Tweak() != 7 || c.Flags() != wire.BloomUpdateAll || c.HashFuncs() != f.HashFuncs() {
		t.Error("clone lost its parameters")
	}
}

func TestNewFilterFromParamsLimits(t *testing.T) {
	tests := []struct {
		size  int
		k     uint32
		flags wire.BloomUpdateType
		want  error
	}{
		{MaxFilterSize, MaxHashFuncs, wire.BloomUpdateP2PubkeyOnly, nil},
		{0, 0, wire.BloomUpdateNone, nil},
		{MaxFilterSize + 1, 1, 0, ErrFilterTooLarge},
		{10, MaxHashFuncs + 1, 0, ErrTooManyHashFuncs},
		{10, 1, 0xff, nil},
	}
	for _, tt := range tests {
		_, err := NewFilterFromParams(make([]byte, tt.size), tt.k, 0, tt.flags)
		if !errorIs(err, tt.want) {
			t.Errorf("NewFilterFromParams(%d bytes, %d, flags %d) error %v, want %v", tt.size, tt.k, tt.flags, err, tt.want)
		}
	}
}
