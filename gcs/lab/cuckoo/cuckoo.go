package cuckoo

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"math/bits"

	"github.com/aead/siphash"
	"github.com/btcsuite/btcd/wire"
	metro "github.com/dgryski/go-metro"
	cuckoofilter "github.com/seiflotfy/cuckoofilter"

	"github.com/spvfilter/spvfilter/gcs/lab"
)

// Library constants: four fingerprints a bucket, fingerprints 1..255 (0
// marks an empty slot), alternate buckets from a metro hash of the
// fingerprint under the seed 1337.
const (
	bucketSize   = 4
	fingerprints = 255
	metroSeed    = 1337
)

// maxLoad is the highest share of slots a filter is built to fill.
const maxLoad = 0.95

// maxDoublings bounds the rebuilds of a filter whose insertions failed.
const maxDoublings = 8

// design is the cuckoo filter in the lab.
type design struct{}

// Design returns the cuckoo filter design.
func Design() lab.Design { return design{} }

func (design) Name() string   { return "cuckoo" }
func (design) Params() string { return "4 × 8-bit fingerprints a bucket" }

// Rate is the paper's bound at a full table, 2·4/255 (the library's
// fingerprints take 255 values).
func (design) Rate() float64 { return 2 * bucketSize / float64(fingerprints) }

func (design) Build(key [16]byte, elements [][]byte) (lab.Filter, error) {
	keys := make([][8]byte, len(elements))
	for i, e := range elements {
		binary.LittleEndian.PutUint64(keys[i][:], siphash.Sum64(e, &key))
	}
	capacity := uint(math.Ceil(float64(max(len(elements), 1)) / maxLoad))
	for range maxDoublings {
		f := cuckoofilter.NewFilter(capacity)
		ok := true
		for i := range keys {
			if !f.Insert(keys[i][:]) {
				ok = false
				break
			}
		}
		if ok {
			return &filter{f: f, key: key, n: len(elements)}, nil
		}
		capacity *= 2
	}
	return nil, fmt.Errorf("cuckoo: %d elements do not fit %d slots", len(elements), capacity)
}

func (design) NewMatcher(watch [][]byte) lab.Matcher { return matcher{watch} }

// filter is a built cuckoo filter of n elements.
type filter struct {
	f   *cuckoofilter.Filter
	key [16]byte
	n   int
}

// Size is the element count and the bucket array.
func (f *filter) Size() int { return wire.VarIntSerializeSize(uint64(f.n)) + len(f.f.Encode()) }

func (f *filter) Contains(element []byte) bool {
	var k [8]byte
	binary.LittleEndian.PutUint64(k[:], siphash.Sum64(element, &f.key))
	return f.f.Lookup(k[:])
}

// ExpectedRate is the share of (fingerprint, first bucket) pairs that
// match: for each first bucket, the distinct fingerprints it holds, and
// for each fingerprint a bucket holds, the first bucket whose alternate
// it is, unless that one holds it too.
func (f *filter) ExpectedRate() float64 {
	buckets := f.f.Encode()
	nb := len(buckets) / bucketSize
	mask := uint(nb - 1) // a power of two
	if bits.OnesCount(uint(nb)) != 1 {
		panic("cuckoo: bucket count not a power of two")
	}
	holds := func(b uint, fp byte) bool {
		return bytes.IndexByte(buckets[b*bucketSize:(b+1)*bucketSize], fp) >= 0
	}
	matches := 0
	for j := range uint(nb) {
		slots := buckets[j*bucketSize : (j+1)*bucketSize]
		for s, fp := range slots {
			if fp == 0 || bytes.IndexByte(slots[:s], fp) >= 0 {
				continue // empty, or a fingerprint already counted
			}
			matches++ // fp with first bucket j
			if i := j ^ (altHash(fp) & mask); !holds(i, fp) {
				matches++ // fp with first bucket i, whose alternate is j
			}
		}
	}
	return float64(matches) / (float64(fingerprints) * float64(nb))
}

// altHash is the library's hash of a fingerprint that leads from a
// bucket to the alternate one.
func altHash(fp byte) uint { return uint(metro.Hash64([]byte{fp}, metroSeed)) }

// matcher hashes each watched script under the filter's key and looks it
// up, stopping at the first match.
type matcher struct{ watch [][]byte }

func (m matcher) Match(lf lab.Filter) (bool, error) {
	f := lf.(*filter)
	for _, w := range m.watch {
		if f.Contains(w) {
			return true, nil
		}
	}
	return false, nil
}
