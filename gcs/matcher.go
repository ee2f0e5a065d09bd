package gcs

// Matcher matches a fixed watch list against many filters, as a rescan
// does. It keeps its buffers between calls, so once they have grown to
// the largest filter seen, matching allocates nothing. (A cfilter payload
// is at most 256 KiB, so they stay below a megabyte.)
//
// A Matcher is not safe for concurrent use, because the hash buffers are
// shared between calls. To match on several goroutines, give each its own
// Clone: clones share the copied watch list, which is never written, and
// have buffers of their own.
type Matcher struct {
	elems [][]byte
	buf   []uint64 // hashed watch list, then radix sort scratch
	// MatchBytes scratch: the second decoder's values or the filter's,
	// and the bucket starts of the lookup table.
	vals   []uint64
	starts []uint32
}

// NewMatcher returns a Matcher for elements, which it copies.
func NewMatcher(elements [][]byte) *Matcher {
	m := &Matcher{elems: make([][]byte, len(elements))}
	total := 0
	for _, e := range elements {
		total += len(e)
	}
	// One backing array for all copies.
	store := make([]byte, 0, total)
	for i, e := range elements {
		store = append(store, e...)
		m.elems[i] = store[len(store)-len(e) : len(store) : len(store)]
	}
	return m
}

// Clone returns a Matcher for the same watch list with its own buffers,
// for use on another goroutine. It copies no element.
func (m *Matcher) Clone() *Matcher {
	return &Matcher{elems: m.elems}
}

// Len returns the number of watched elements.
func (m *Matcher) Len() int { return len(m.elems) }

// Match reports whether any watched element may be in f, which was built
// with key.
func (m *Matcher) Match(f *Filter, key [16]byte) bool {
	if f.n == 0 || len(m.elems) == 0 {
		return false
	}
	return f.matchSorted(m.hashes(key, f.modulus))
}

// hashes returns the watch list hashed with key into [0, modulus) and
// sorted, in the Matcher's buffer (valid until the next call).
func (m *Matcher) hashes(key [16]byte, modulus uint64) []uint64 {
	n := len(m.elems)
	if cap(m.buf) < 2*n {
		m.buf = make([]uint64, 2*n)
	}
	buf := m.buf[:2*n]
	q := buf[:n]
	hashInto(q, newSipKey(&key), modulus, m.elems)
	sortValues(q, modulus, buf[n:])
	return q
}
