package bip37

import (
	"fmt"
	"math"

	"github.com/btcsuite/btcd/wire"
)

// densityTolerance is how far the fraction of set bits may stray from one
// half, the density of a filter sized optimally for its elements, before
// Stats warns.
const densityTolerance = 0.25

// Stats describes the health of a filter. Quantities that are undefined or
// infinite for a degenerate filter (no bits, no hash functions, every bit
// set) are NaN or +Inf.
type Stats struct {
	SizeBits  uint32
	SizeBytes uint32
	HashFuncs uint32
	Tweak     uint32
	Flags     wire.BloomUpdateType
	// FlagsName is "none", "all", "p2pubkey-only" or "unknown(N)".
	FlagsName string
	// BitsSet is the number of bits set (X) and Density is X/m.
	BitsSet uint32
	Density float64
	// EstimatedElements is n ≈ -(m/k)·ln(1 - X/m), +Inf when every bit
	// is set.
	EstimatedElements float64
	// FalsePositiveRate is the chance that an element not inserted
	// matches at the current fill: (X/m)^k.
	FalsePositiveRate float64
	// BitsPerElement is m / EstimatedElements.
	BitsPerElement float64
	// BoundBitsPerElement is the information-theoretic minimum for the
	// current false-positive rate, log2(1/FalsePositiveRate).
	BoundBitsPerElement float64
	// OverheadRatio is BitsPerElement / BoundBitsPerElement; an optimally
	// sized Bloom filter reaches 1/ln 2 ≈ 1.44.
	OverheadRatio float64
	// Warning is non-empty when the filter looks mis-sized or degenerate.
	Warning string
}

// Stats computes the filter's health statistics.
func (f *Filter) Stats() Stats {
	s := Stats{
		SizeBits:  f.nbits,
		SizeBytes: uint32(len(f.data)),
		HashFuncs: f.hashFuncs,
		Tweak:     f.tweak,
		Flags:     f.flags,
		FlagsName: FlagsName(f.flags),
	}
	s.BitsSet = popCount(f.data)
	nan := math.NaN()
	if f.nbits == 0 {
		s.Density, s.EstimatedElements, s.BitsPerElement = nan, nan, nan
		s.FalsePositiveRate, s.BoundBitsPerElement, s.OverheadRatio = 1, 0, nan
		s.Warning = "0-byte filter: nodes treat it as matching every transaction"
		return s
	}
	m := float64(f.nbits)
	x := float64(s.BitsSet)
	k := float64(f.hashFuncs)
	s.Density = x / m
	s.FalsePositiveRate = math.Pow(s.Density, k)
	if f.hashFuncs == 0 {
		s.EstimatedElements = nan
	} else {
		// -(m/k)·ln(1 - X/m); Log1p keeps precision for small X/m
		// and gives +Inf for a full filter.
		s.EstimatedElements = -(m / k) * math.Log1p(-s.Density)
	}
	s.BitsPerElement = m / s.EstimatedElements
	s.BoundBitsPerElement = -math.Log2(s.FalsePositiveRate)
	if s.FalsePositiveRate == 1 {
		s.BoundBitsPerElement = 0 // not -0, which JSON would print as -0
	}
	s.OverheadRatio = s.BitsPerElement / s.BoundBitsPerElement
	switch {
	case f.hashFuncs == 0:
		s.Warning = "no hash functions: the filter matches everything"
	case s.BitsSet == f.nbits:
		s.Warning = "every bit is set: the filter matches everything"
	case s.BitsSet == 0:
		s.Warning = "no bits set: the filter matches nothing yet"
	case s.Density > 0.5+densityTolerance:
		s.Warning = fmt.Sprintf("density %.3f is far above 1/2: filter too small for its elements, false positives well above design", s.Density)
	case s.Density < 0.5-densityTolerance:
		s.Warning = fmt.Sprintf("density %.3f is far below 1/2: filter larger than its elements need (or sized for more elements to come)", s.Density)
	}
	return s
}

// FlagsName returns the CLI name of an update flags value: "none", "all",
// "p2pubkey-only", or for a byte BIP 37 does not define "unknown(N), acts as
// NAME" with the rule Core applies to it.
func FlagsName(flags wire.BloomUpdateType) string {
	switch flags {
	case wire.BloomUpdateNone:
		return "none"
	case wire.BloomUpdateAll:
		return "all"
	case wire.BloomUpdateP2PubkeyOnly:
		return "p2pubkey-only"
	}
	// Core looks only at the two low bits, and 3 has no rule of its own.
	acts := flags & bloomUpdateMask
	if acts == bloomUpdateMask {
		acts = wire.BloomUpdateNone
	}
	return fmt.Sprintf("unknown(%d), acts as %s", uint8(flags), FlagsName(acts))
}

// ParseFlags is the inverse of FlagsName for the three defined values.
func ParseFlags(name string) (wire.BloomUpdateType, error) {
	switch name {
	case "none":
		return wire.BloomUpdateNone, nil
	case "all":
		return wire.BloomUpdateAll, nil
	case "p2pubkey-only":
		return wire.BloomUpdateP2PubkeyOnly, nil
	}
	return 0, fmt.Errorf("%w: %q (want none, all or p2pubkey-only)", ErrBadUpdateFlags, name)
}
