package store

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"math/bits"
)

// The layout of a bbolt (v1.5) file, as far as checkBolt reads it. bbolt
// writes its structures in the machine's byte order.
const (
	boltMagic          = 0xED0CDAED
	boltVersion        = 2
	boltPageHeaderSize = 16 // id u64, flags u16, count u16, overflow u32
	boltElementSize    = 16 // a branch or leaf element
	boltMetaSize       = 64 // magic, version, page size, flags, root bucket (16), freelist, pgid, txid, checksum
	boltBucketSize     = 16 // a bucket's header in its parent: root page, sequence
	boltMaxKeySize     = 32768
	boltMinPageSize    = 1024
	boltMaxPageSize    = 65536
	boltMinPages       = 4 // two meta pages, the freelist, the root leaf
	boltMaxDepth       = 64
	boltNoFreelist     = ^uint64(0)

	boltBranchPage   = 0x01
	boltLeafPage     = 0x02
	boltMetaPage     = 0x04
	boltFreelistPage = 0x10
	boltBucketLeaf   = 0x01
)

var native = binary.NativeEndian

// errBoltDamaged is what checkBolt reports for a file bbolt must not be
// given.
var errBoltDamaged = errors.New("not a sound bbolt file")

// boltMeta is a decoded meta page.
type boltMeta struct {
	pageSize               uint32
	root, freelist, pgid   uint64
	txid                   uint64
	checksum, wantChecksum uint64
}

// checkBolt checks a bbolt file of the given size before bbolt maps it, so
// that nothing bbolt reads through its map lies outside the file, points
// where it should not, sizes an allocation by a damaged count or leads it
// round a cycle. It reads the file with ReadAt, never through a map. The
// quick checks, always made:
//
//   - both meta pages: magic, version, checksum, page size (a power of two,
//     the same in both), the root bucket, freelist and high-water mark
//     inside the file; the file a whole number of pages;
//   - the freelist of the meta page bbolt uses (the valid one of the
//     higher transaction id): its type, its count within its pages, every
//     id below the high-water mark and listed once.
//
// With deep set, also:
//
//   - every page of the bucket trees from that meta page's root: its id
//     and type, its extent below the high-water mark, each element and
//     each key and value inside the page, keys not empty and strictly
//     increasing within the bounds of the parent branch (as bbolt's
//     Tx.Check does), each branch key its child's first key (which
//     Tx.Check does not check, but bbolt's writes need), inline buckets
//     well formed, and no page reached twice, so that the trees have no
//     cycles, or freed;
//   - every page below the high-water mark either reached or free.
//
// Values are not read, except bucket headers: the cache checks its own
// entries' hashes. The deep checks read one page per tree page (and the
// overflow pages only where keys or elements lie in them) and keep two
// bits per page.
func checkBolt(r io.ReaderAt, size int64, deep bool) error {
	c := boltChecker{r: r, size: size}
	if err := c.check(deep); err != nil {
		return fmt.Errorf("%w: %w", errBoltDamaged, err)
	}
	return nil
}

// boltChecker is the state of one checkBolt.
type boltChecker struct {
	r        io.ReaderAt
	size     int64
	pageSize int64
	hwm      uint64 // pages below hwm are in use or free
	used     bitSet // pages reached: meta, freelist, tree pages
	free     bitSet // pages the freelist lists
	page     []byte // the first page of the page being checked
	extra    []byte // bytes of its overflow pages, read on demand
}

// boltRef says where the bytes of a page being checked live: in the file
// at page id (with extent bytes) or, for an inline bucket's page, in a
// value read already.
type boltRef struct {
	id     uint64
	extent int64
	bytes  []byte // an inline page's bytes; nil for a page of the file
}

// bitSet is a set of page ids.
type bitSet []uint64

func newBitSet(n uint64) bitSet    { return make(bitSet, (n+63)/64) }
func (b bitSet) has(i uint64) bool { return b[i/64]&(1<<(i%64)) != 0 }
func (b bitSet) set(i uint64)      { b[i/64] |= 1 << (i % 64) }

func (c *boltChecker) check(deep bool) error {
	if c.size < boltMinPages*boltMinPageSize {
		return fmt.Errorf("%d bytes, less than the smallest database", c.size)
	}
	m0, err := c.readMeta(0, 0)
	if err != nil {
		return err
	}
	c.pageSize = int64(m0.pageSize)
	m1, err := c.readMeta(1, c.pageSize)
	if err != nil {
		return err
	}
	if m1.pageSize != m0.pageSize {
		return fmt.Errorf("meta pages disagree on the page size: %d and %d", m0.pageSize, m1.pageSize)
	}
	if c.size%c.pageSize != 0 {
		return fmt.Errorf("%d bytes, not a whole number of %d-byte pages", c.size, c.pageSize)
	}
	pages := uint64(c.size / c.pageSize)
	for i, m := range []boltMeta{m0, m1} {
		if err := m.within(pages); err != nil {
			return fmt.Errorf("meta page %d: %w", i, err)
		}
	}
	// bbolt uses the meta page of the higher transaction id, page 0 on
	// a tie.
	m := m0
	if m1.txid > m0.txid {
		m = m1
	}
	c.hwm = m.pgid
	c.used, c.free = newBitSet(c.hwm), newBitSet(c.hwm)
	c.used.set(0)
	c.used.set(1)
	c.page = make([]byte, c.pageSize)
	if err := c.checkFreelist(m.freelist); err != nil {
		return fmt.Errorf("freelist page %d: %w", m.freelist, err)
	}
	if !deep {
		return nil
	}
	if _, err := c.checkTree(m.root, nil, 0); err != nil {
		return err
	}
	for id := uint64(2); id < c.hwm; id++ {
		if !c.used.has(id) && !c.free.has(id) {
			return fmt.Errorf("page %d: neither reached nor free", id)
		}
	}
	return nil
}

// readMeta reads and validates the meta page at off, page id.
func (c *boltChecker) readMeta(id uint64, off int64) (boltMeta, error) {
	var b [boltPageHeaderSize + boltMetaSize]byte
	if _, err := c.r.ReadAt(b[:], off); err != nil {
		return boltMeta{}, fmt.Errorf("meta page %d: %w", id, err)
	}
	if got := native.Uint64(b[0:]); got != id {
		return boltMeta{}, fmt.Errorf("meta page %d: says it is page %d", id, got)
	}
	if flags := native.Uint16(b[8:]); flags != boltMetaPage {
		return boltMeta{}, fmt.Errorf("meta page %d: type %#x", id, flags)
	}
	mb := b[boltPageHeaderSize:]
	h := fnv.New64a()
	h.Write(mb[:boltMetaSize-8])
	m := boltMeta{
		pageSize:     native.Uint32(mb[8:]),
		root:         native.Uint64(mb[16:]),
		freelist:     native.Uint64(mb[32:]),
		pgid:         native.Uint64(mb[40:]),
		txid:         native.Uint64(mb[48:]),
		checksum:     native.Uint64(mb[56:]),
		wantChecksum: h.Sum64(),
	}
	switch {
	case native.Uint32(mb[0:]) != boltMagic:
		return m, fmt.Errorf("meta page %d: magic %#x", id, native.Uint32(mb[0:]))
	case native.Uint32(mb[4:]) != boltVersion:
		return m, fmt.Errorf("meta page %d: version %d", id, native.Uint32(mb[4:]))
	case m.checksum != m.wantChecksum:
		return m, fmt.Errorf("meta page %d: checksum %016x, computed %016x", id, m.checksum, m.wantChecksum)
	case m.pageSize < boltMinPageSize || m.pageSize > boltMaxPageSize || bits.OnesCount32(m.pageSize) != 1:
		return m, fmt.Errorf("meta page %d: page size %d", id, m.pageSize)
	}
	return m, nil
}

// within checks that the meta page's pages lie in a file of pages pages.
func (m boltMeta) within(pages uint64) error {
	switch {
	case m.pgid < boltMinPages || m.pgid > pages:
		return fmt.Errorf("high-water mark %d outside the file's %d pages", m.pgid, pages)
	case m.root < 2 || m.root >= m.pgid:
		return fmt.Errorf("root page %d outside 2..%d", m.root, m.pgid-1)
	case m.freelist == boltNoFreelist:
		return errors.New("no freelist stored")
	case m.freelist < 2 || m.freelist >= m.pgid || m.freelist == m.root:
		return fmt.Errorf("freelist page %d outside 2..%d or the root", m.freelist, m.pgid-1)
	}
	return nil
}

// claim reads the header of page id into c.page, checks its id, that it
// and its overflow pages lie below the high-water mark and were not
// reached or freed before, marks them reached and returns its type,
// count and extent in bytes.
func (c *boltChecker) claim(id uint64) (flags uint16, count int, extent int64, err error) {
	if id < 2 || id >= c.hwm {
		return 0, 0, 0, fmt.Errorf("page %d outside 2..%d", id, c.hwm-1)
	}
	if _, err := c.r.ReadAt(c.page, int64(id)*c.pageSize); err != nil {
		return 0, 0, 0, fmt.Errorf("page %d: %w", id, err)
	}
	if got := native.Uint64(c.page[0:]); got != id {
		return 0, 0, 0, fmt.Errorf("page %d: says it is page %d", id, got)
	}
	flags, count = native.Uint16(c.page[8:]), int(native.Uint16(c.page[10:]))
	overflow := uint64(native.Uint32(c.page[12:]))
	if overflow >= c.hwm-id {
		return 0, 0, 0, fmt.Errorf("page %d: %d overflow pages pass the high-water mark %d", id, overflow, c.hwm)
	}
	for p := id; p <= id+overflow; p++ {
		switch {
		case c.used.has(p):
			return 0, 0, 0, fmt.Errorf("page %d: reached twice", p)
		case c.free.has(p):
			return 0, 0, 0, fmt.Errorf("page %d: in use and free", p)
		}
		c.used.set(p)
	}
	c.extra = c.extra[:0]
	return flags, count, int64(overflow+1) * c.pageSize, nil
}

func (c *boltChecker) checkFreelist(id uint64) error {
	flags, count, extent, err := c.claim(id)
	if err != nil {
		return err
	}
	if flags != boltFreelistPage {
		return fmt.Errorf("type %#x", flags)
	}
	ref := boltRef{id: id, extent: extent}
	start := int64(boltPageHeaderSize)
	n := int64(count)
	if count == 0xFFFF {
		b, err := c.bytes(ref, start, 8)
		if err != nil {
			return err
		}
		start += 8
		n = int64(min(native.Uint64(b), uint64(extent))) // bounded, checked below
	}
	if n > (extent-start)/8 {
		return fmt.Errorf("%d ids do not fit its %d bytes", n, extent)
	}
	ids, err := c.bytes(ref, start, n*8)
	if err != nil {
		return err
	}
	for i := int64(0); i < n; i++ {
		p := native.Uint64(ids[i*8:])
		switch {
		case p < 2 || p >= c.hwm:
			return fmt.Errorf("free page %d outside 2..%d", p, c.hwm-1)
		case c.free.has(p):
			return fmt.Errorf("page %d freed twice", p)
		case c.used.has(p):
			return fmt.Errorf("page %d: in use and free", p)
		}
		c.free.set(p)
	}
	return nil
}

// bytes returns n bytes at off of the page ref: from c.page, from the
// inline page, or read from the file's overflow pages. The result is
// valid until the next call.
func (c *boltChecker) bytes(ref boltRef, off, n int64) ([]byte, error) {
	if off < 0 || n < 0 || off > ref.extent || n > ref.extent-off {
		return nil, fmt.Errorf("page %d: %d bytes at %d pass its %d bytes", ref.id, n, off, ref.extent)
	}
	switch {
	case ref.bytes != nil:
		return ref.bytes[off : off+n], nil
	case off+n <= c.pageSize:
		return c.page[off : off+n], nil
	}
	if int64(cap(c.extra)) < n {
		c.extra = make([]byte, n)
	}
	b := c.extra[:n]
	if _, err := c.r.ReadAt(b, int64(ref.id)*c.pageSize+off); err != nil {
		return nil, fmt.Errorf("page %d: %w", ref.id, err)
	}
	return b, nil
}

// checkTree checks the tree of pages from id, whose keys must lie below
// hi (nil: unbounded), and returns its first key.
func (c *boltChecker) checkTree(id uint64, hi []byte, depth int) ([]byte, error) {
	if depth > boltMaxDepth {
		return nil, fmt.Errorf("page %d: deeper than %d levels", id, boltMaxDepth)
	}
	flags, count, extent, err := c.claim(id)
	if err != nil {
		return nil, err
	}
	ref := boltRef{id: id, extent: extent}
	switch flags {
	case boltBranchPage:
		return c.checkBranch(ref, count, hi, depth)
	case boltLeafPage:
		return c.checkLeaf(ref, count, hi, depth)
	}
	return nil, fmt.Errorf("page %d: type %#x in a tree", id, flags)
}

// element is one decoded branch or leaf element.
type element struct {
	flags  uint32 // leaf only
	key    []byte // a copy
	bucket []byte // leaf only: a copy of the value of a bucket element
	child  uint64 // branch only
}

// elements decodes the count elements of page ref and copies their keys,
// checking that each lies inside the page and that the keys are not empty
// and increase strictly, below hi.
func (c *boltChecker) elements(ref boltRef, count int, branch bool, hi []byte) ([]element, error) {
	hdr, err := c.bytes(ref, boltPageHeaderSize, int64(count)*boltElementSize)
	if err != nil {
		return nil, err
	}
	hdr = bytes.Clone(hdr)
	elems := make([]element, count)
	for i := range elems {
		b := hdr[i*boltElementSize:]
		at := int64(boltPageHeaderSize + i*boltElementSize)
		var e element
		var pos, ksize, vsize int64
		if branch {
			pos, ksize, e.child = int64(native.Uint32(b[0:])), int64(native.Uint32(b[4:])), native.Uint64(b[8:])
		} else {
			e.flags, pos, ksize = native.Uint32(b[0:]), int64(native.Uint32(b[4:])), int64(native.Uint32(b[8:]))
			vsize = int64(native.Uint32(b[12:]))
		}
		if ksize == 0 || ksize > boltMaxKeySize {
			return nil, fmt.Errorf("page %d element %d: key of %d bytes", ref.id, i, ksize)
		}
		if ref.extent-(at+pos+ksize) < vsize {
			return nil, fmt.Errorf("page %d element %d: passes the page's %d bytes", ref.id, i, ref.extent)
		}
		k, err := c.bytes(ref, at+pos, ksize)
		if err != nil {
			return nil, fmt.Errorf("element %d: %w", i, err)
		}
		e.key = bytes.Clone(k)
		if err := keyInOrder(e.key, i, elems, hi); err != nil {
			return nil, fmt.Errorf("page %d element %d: %w", ref.id, i, err)
		}
		if e.flags == boltBucketLeaf {
			// bbolt inlines buckets of up to a quarter page; a
			// bucket with pages of its own has a 16-byte value.
			if vsize < boltBucketSize || vsize > c.pageSize {
				return nil, fmt.Errorf("page %d element %d: a bucket of %d bytes", ref.id, i, vsize)
			}
			v, err := c.bytes(ref, at+pos+ksize, vsize)
			if err != nil {
				return nil, fmt.Errorf("element %d: %w", i, err)
			}
			e.bucket = bytes.Clone(v)
		}
		elems[i] = e
	}
	return elems, nil
}

// keyInOrder checks key i of a page against the keys before it and the
// bound the parent sets: the next key of the parent branch. (The lower
// bound holds since a branch's key must be its child's first key.)
func keyInOrder(key []byte, i int, before []element, hi []byte) error {
	switch {
	case i > 0 && bytes.Compare(before[i-1].key, key) >= 0:
		return fmt.Errorf("key %x not above the one before, %x", key, before[i-1].key)
	case hi != nil && bytes.Compare(key, hi) >= 0:
		return fmt.Errorf("key %x not below the next key of its parent, %x", key, hi)
	}
	return nil
}

// checkBranch checks a branch page and the trees below it. bbolt keeps
// each branch key equal to its child's first key, and finds a child by
// it when it writes the child back: a key that differs, though in order,
// would make it add a second reference instead of replacing the old one.
func (c *boltChecker) checkBranch(ref boltRef, count int, hi []byte, depth int) ([]byte, error) {
	if count == 0 {
		return nil, fmt.Errorf("page %d: a branch without elements", ref.id)
	}
	elems, err := c.elements(ref, count, true, hi)
	if err != nil {
		return nil, err
	}
	for i, e := range elems {
		next := hi
		if i+1 < len(elems) {
			next = elems[i+1].key
		}
		first, err := c.checkTree(e.child, next, depth+1)
		if err != nil {
			return nil, err
		}
		if !bytes.Equal(first, e.key) {
			return nil, fmt.Errorf("page %d element %d: key %x, its child's first key %x", ref.id, i, e.key, first)
		}
	}
	return elems[0].key, nil
}

func (c *boltChecker) checkLeaf(ref boltRef, count int, hi []byte, depth int) ([]byte, error) {
	elems, err := c.elements(ref, count, false, hi)
	if err != nil {
		return nil, err
	}
	for i, e := range elems {
		switch e.flags {
		case 0:
		case boltBucketLeaf:
			if err := c.checkBucket(ref, e, depth); err != nil {
				return nil, fmt.Errorf("bucket %q: %w", e.key, err)
			}
		default:
			return nil, fmt.Errorf("page %d element %d: flags %#x", ref.id, i, e.flags)
		}
	}
	if count == 0 {
		return nil, nil
	}
	return elems[0].key, nil
}

// checkBucket checks the bucket whose header is element e of leaf ref:
// its tree of pages, or its inline page.
func (c *boltChecker) checkBucket(ref boltRef, e element, depth int) error {
	if ref.bytes != nil {
		return errors.New("a bucket inside an inline bucket")
	}
	if root := native.Uint64(e.bucket); root != 0 {
		_, err := c.checkTree(root, nil, depth+1)
		return err
	}
	page := e.bucket[boltBucketSize:]
	if len(page) < boltPageHeaderSize {
		return fmt.Errorf("inline page of %d bytes", len(page))
	}
	if flags := native.Uint16(page[8:]); flags != boltLeafPage {
		return fmt.Errorf("inline page of type %#x", flags)
	}
	inline := boltRef{id: ref.id, extent: int64(len(page)), bytes: page}
	_, err := c.checkLeaf(inline, int(native.Uint16(page[10:])), nil, depth+1)
	return err
}
