package gcs

import "math"

// Stats describes a filter's size and false-positive behaviour.
type Stats struct {
	// N is the number of items, P the Golomb-Rice parameter and M the
	// inverse of the false-positive rate.
	N uint32
	P uint8
	M uint64
	// Bytes is the serialized size (NBytes), StreamBytes the bit stream's
	// alone.
	Bytes       int
	StreamBytes int
	// BitsPerElement is the stream size per item. For a large random
	// set it approaches P + 1 + 1/(e^(2^P/M) - 1): about 21.05 for the
	// basic filter.
	BitsPerElement float64
	// FalsePositiveRate is the chance that one query item not in the set
	// matches: 1/M.
	FalsePositiveRate float64
	// MinBitsPerElement is log2(M), the information-theoretic minimum
	// bits per item for that false-positive rate.
	MinBitsPerElement float64
}

// Stats returns the filter's statistics.
func (f *Filter) Stats() Stats {
	s := Stats{
		N:           f.n,
		P:           f.p,
		M:           f.m,
		Bytes:       len(f.enc),
		StreamBytes: len(f.enc) - f.off,
	}
	if f.m > 0 { // only the zero Filter has M = 0
		s.FalsePositiveRate = 1 / float64(f.m)
		s.MinBitsPerElement = math.Log2(float64(f.m))
	}
	if f.n > 0 {
		s.BitsPerElement = float64(8*s.StreamBytes) / float64(f.n)
	}
	return s
}
