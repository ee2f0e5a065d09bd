package gcs

// Matcher matches a fixed watch list against many filters, as a rescan
// does. It keeps its hash buffers between calls, so after the first call
// matching a filter allocates nothing. A Matcher is not safe for
// concurrent use; use one per goroutine.
type Matcher struct {
	elems [][]byte
	buf   []uint64 // hashed watch list, then radix sort scratch
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

// Len returns the number of watched elements.
func (m *Matcher) Len() int { return len(m.elems) }

// Match reports whether any watched element may be in f, which was built
// with key.
func (m *Matcher) Match(f *Filter, key [16]byte) bool {
	if f.n == 0 || len(m.elems) == 0 {
		return false
	}
	n := len(m.elems)
	if cap(m.buf) < 2*n {
		m.buf = make([]uint64, 2*n)
	}
	buf := m.buf[:2*n]
	q := buf[:n]
	hashInto(q, newSipKey(&key), f.modulus, m.elems)
	sortValues(q, f.modulus, buf[n:])
	return f.matchSorted(q)
}
