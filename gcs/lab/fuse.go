package lab

import (
	"fmt"
	"math"
	"unsafe"

	"github.com/FastFilter/xorfilter"
	"github.com/aead/siphash"
	"github.com/btcsuite/btcd/wire"
)

// keyed is what the fuse and xor filters store: 64-bit SipHash-2-4 values
// of the scripts under the block's key.
func keyed(key *[16]byte, elements [][]byte) []uint64 {
	keys := make([]uint64, len(elements))
	for i, e := range elements {
		keys[i] = siphash.Sum64(e, key)
	}
	return keys
}

// fuseDesign is a binary fuse filter with fingerprints of type T.
type fuseDesign[T xorfilter.Unsigned] struct{}

// BinaryFuse8 returns the binary fuse filter design with 8-bit
// fingerprints (rate 2^-8).
func BinaryFuse8() Design { return fuseDesign[uint8]{} }

// BinaryFuse16 returns the binary fuse filter design with 16-bit
// fingerprints (rate 2^-16).
func BinaryFuse16() Design { return fuseDesign[uint16]{} }

// BinaryFuse32 returns the binary fuse filter design with 32-bit
// fingerprints (rate 2^-32).
func BinaryFuse32() Design { return fuseDesign[uint32]{} }

func fingerprintBits[T xorfilter.Unsigned]() int {
	var t T
	return 8 * int(unsafe.Sizeof(t))
}

func (fuseDesign[T]) Name() string   { return fmt.Sprintf("binary fuse %d", fingerprintBits[T]()) }
func (fuseDesign[T]) Params() string { return fmt.Sprintf("%d-bit fingerprints", fingerprintBits[T]()) }
func (fuseDesign[T]) Rate() float64  { return math.Ldexp(1, -fingerprintBits[T]()) }

func (fuseDesign[T]) Build(key [16]byte, elements [][]byte) (Filter, error) {
	if len(elements) == 0 {
		return emptyFilter{}, nil
	}
	f, err := xorfilter.NewBinaryFuse[T](keyed(&key, elements))
	if err != nil {
		return nil, fmt.Errorf("binary fuse %d: %w", fingerprintBits[T](), err)
	}
	return &fuseFilter[T]{f: f, key: key, n: len(elements)}, nil
}

func (fuseDesign[T]) NewMatcher(watch [][]byte) Matcher { return keyedMatcher{watch} }

// fuseFilter is a built binary fuse filter of n elements.
type fuseFilter[T xorfilter.Unsigned] struct {
	f   *xorfilter.BinaryFuse[T]
	key [16]byte
	n   int
}

// Size is the element count, the 8-byte seed and the fingerprints.
func (f *fuseFilter[T]) Size() int {
	return wire.VarIntSerializeSize(uint64(f.n)) + 8 + len(f.f.Fingerprints)*fingerprintBits[T]()/8
}
func (f *fuseFilter[T]) Contains(element []byte) bool {
	return f.f.Contains(siphash.Sum64(element, &f.key))
}
func (f *fuseFilter[T]) ExpectedRate() float64     { return math.Ldexp(1, -fingerprintBits[T]()) }
func (f *fuseFilter[T]) containsKey(h uint64) bool { return f.f.Contains(h) }
func (f *fuseFilter[T]) hashKey() *[16]byte        { return &f.key }

// xorDesign is the xor filter with 8-bit fingerprints.
type xorDesign struct{}

// Xor8 returns the xor filter design with 8-bit fingerprints (rate 2^-8).
func Xor8() Design { return xorDesign{} }

func (xorDesign) Name() string   { return "xor 8" }
func (xorDesign) Params() string { return "8-bit fingerprints" }
func (xorDesign) Rate() float64  { return 1.0 / 256 }

func (xorDesign) Build(key [16]byte, elements [][]byte) (Filter, error) {
	if len(elements) == 0 {
		return emptyFilter{}, nil
	}
	f, err := xorfilter.Populate(keyed(&key, elements))
	if err != nil {
		return nil, fmt.Errorf("xor 8: %w", err)
	}
	return &xorFilter{f: f, key: key, n: len(elements)}, nil
}

func (xorDesign) NewMatcher(watch [][]byte) Matcher { return keyedMatcher{watch} }

// xorFilter is a built xor filter of n elements.
type xorFilter struct {
	f   *xorfilter.Xor8
	key [16]byte
	n   int
}

// Size is the element count, the 8-byte seed and the fingerprints.
func (f *xorFilter) Size() int {
	return wire.VarIntSerializeSize(uint64(f.n)) + 8 + len(f.f.Fingerprints)
}
func (f *xorFilter) Contains(element []byte) bool {
	return f.f.Contains(siphash.Sum64(element, &f.key))
}
func (f *xorFilter) ExpectedRate() float64     { return 1.0 / 256 }
func (f *xorFilter) containsKey(h uint64) bool { return f.f.Contains(h) }
func (f *xorFilter) hashKey() *[16]byte        { return &f.key }

// emptyFilter is the filter of a block without elements: its element
// count alone, matching nothing.
type emptyFilter struct{}

func (emptyFilter) Size() int               { return 1 }
func (emptyFilter) Contains([]byte) bool    { return false }
func (emptyFilter) ExpectedRate() float64   { return 0 }
func (emptyFilter) containsKey(uint64) bool { return false }
func (emptyFilter) hashKey() *[16]byte      { return nil }

// keyedFilter is a filter of SipHash values of the scripts.
type keyedFilter interface {
	containsKey(h uint64) bool
	hashKey() *[16]byte // nil for an empty filter
}

// keyedMatcher hashes each watched script under the filter's key and
// looks the value up, stopping at the first match.
type keyedMatcher struct{ watch [][]byte }

func (m keyedMatcher) Match(f Filter) (bool, error) {
	k := f.(keyedFilter)
	key := k.hashKey()
	if key == nil {
		return false, nil
	}
	for _, w := range m.watch {
		if k.containsKey(siphash.Sum64(w, key)) {
			return true, nil
		}
	}
	return false, nil
}
