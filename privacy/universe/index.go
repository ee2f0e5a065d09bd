package universe

import (
	"bufio"
	"cmp"
	"container/heap"
	"encoding/binary"
	"errors"
	"fmt"
	"hash"
	"hash/crc32"
	"io"
	"os"
	"slices"

	"github.com/btcsuite/btcd/chaincfg/chainhash"
)

// ErrBadIndex reports a malformed appearance index.
var ErrBadIndex = errors.New("privacy: bad appearance index")

// IndexVersion is the version of the appearance index IndexWriter
// writes: 4 records, with each transaction a candidate appears in, its
// role there (Role: paid by an output, spent by an input, or both), and
// ends, as 3 does, with a checksum of the whole file. IndexReader also
// reads versions 3 and 2, which record the transactions without their
// roles (2 without the checksum), and 1, which records the blocks only.
const IndexVersion = 4

// Role is how a candidate takes part in a transaction it appears in:
// RolePaid, RoleSpent or both (RolePaid|RoleSpent). Zero is a role not
// recorded (an appearance added by AddTx, or an index before version 4).
type Role uint8

const (
	// RolePaid is an output of the transaction paying the script.
	RolePaid Role = 1 << iota
	// RoleSpent is an input of the transaction spending a coin of the
	// script (the script the input shows it spends).
	RoleSpent
	// roleBits are the bits a role may have.
	roleBits = RolePaid | RoleSpent
)

// indexChecksum is the CRC-32C table of the index's checksum (version 3).
var indexChecksum = crc32.MakeTable(crc32.Castagnoli)

// indexMagic opens an appearance index file, its last byte the version.
var indexMagic = [7]byte{'S', 'P', 'V', 'F', 'I', 'D', 'X'}

const (
	// maxIndexCandidate bounds a candidate's length in an index: the
	// longest universe line.
	maxIndexCandidate = maxLine
	// maxIndexBlocks bounds the blocks an index covers (about 190 years
	// of blocks), and so the hash table a reader allocates.
	maxIndexBlocks = 10_000_000
	// maxIndexNetwork bounds the network name's length.
	maxIndexNetwork = 64
	// DefaultIndexMemory is how many bytes of appearances an IndexWriter
	// holds before it sorts them and spills them to a run file.
	DefaultIndexMemory = 64 << 20
	// indexFanIn bounds the run files merged at once.
	indexFanIn = 64
	// maxBlockTxs bounds the transactions of one block an entry may name
	// (a block of 4,000,000 weight units holds fewer than 17,000).
	maxBlockTxs = 1 << 17
	// noTx marks an appearance whose transaction is not known.
	noTx = ^uint32(0)
)

// IndexWriter collects, for every candidate, the heights of the blocks it
// appears in and its transactions there, and writes them as an appearance
// index (see WriteTo's format).
// Memory is bounded: appearances are held up to a limit, then sorted and
// spilled to run files in a temporary directory, which are merged at the
// end, at most indexFanIn at a time.
type IndexWriter struct {
	dir     string // run files; made on the first spill
	tempDir string
	limit   int
	held    int
	pending []appearance
	runs    []string
	named   int // run files made so far, for their names
	err     error
}

type appearance struct {
	candidate string
	height    uint32
	tx        uint32 // its position in the block, or noTx
	role      Role
}

// NewIndexWriter returns a writer that spills runs under tempDir ("" for
// the system's) once about memory bytes of appearances are held (0 for
// DefaultIndexMemory).
func NewIndexWriter(tempDir string, memory int) *IndexWriter {
	if memory <= 0 {
		memory = DefaultIndexMemory
	}
	return &IndexWriter{tempDir: tempDir, limit: memory}
}

// Add records that candidate appears in the block at height, in a
// transaction it does not name (AddTx names it). An empty candidate, one
// longer than a universe line may be, and a negative height are left out.
func (w *IndexWriter) Add(candidate string, height int32) { w.add(candidate, height, noTx, 0) }

// AddTx records that candidate appears in the block at height, in its
// transaction at position tx (from 0, the coinbase), in a role it does
// not name (AddRole names it). A position outside 0..131071 is recorded
// as Add records an appearance.
func (w *IndexWriter) AddTx(candidate string, height int32, tx int) {
	w.AddRole(candidate, height, tx, 0)
}

// AddRole records that candidate appears in the block at height, in its
// transaction at position tx, in role: paid by an output of it
// (RolePaid), spent by an input of it (RoleSpent). The roles of one
// transaction's appearances are joined. Bits of role beyond RolePaid and
// RoleSpent are dropped; a position outside 0..131071 is recorded as Add
// records an appearance.
func (w *IndexWriter) AddRole(candidate string, height int32, tx int, role Role) {
	pos := noTx
	if tx >= 0 && tx < maxBlockTxs {
		pos = uint32(tx)
	}
	w.add(candidate, height, pos, role&roleBits)
}

func (w *IndexWriter) add(candidate string, height int32, tx uint32, role Role) {
	if w.err != nil || candidate == "" || len(candidate) > maxIndexCandidate || height < 0 {
		return
	}
	if tx == noTx {
		role = 0
	}
	w.pending = append(w.pending, appearance{candidate, uint32(height), tx, role})
	w.held += len(candidate) + 36
	if w.held >= w.limit {
		w.err = w.spill()
	}
}

// sortPending sorts the held appearances by candidate, height and
// transaction.
func (w *IndexWriter) sortPending() {
	slices.SortFunc(w.pending, func(a, b appearance) int {
		if a.candidate != b.candidate {
			if a.candidate < b.candidate {
				return -1
			}
			return 1
		}
		if a.height != b.height {
			return cmp.Compare(a.height, b.height)
		}
		return cmp.Compare(a.tx, b.tx)
	})
}

// spill writes the held appearances to a new run file.
func (w *IndexWriter) spill() error {
	if w.dir == "" {
		d, err := os.MkdirTemp(w.tempDir, "spvfilter-index-")
		if err != nil {
			return fmt.Errorf("index: %w", err)
		}
		w.dir = d
	}
	w.sortPending()
	w.named++
	name := fmt.Sprintf("%s/run-%d", w.dir, w.named)
	f, err := os.Create(name)
	if err != nil {
		return fmt.Errorf("index: %w", err)
	}
	bw := bufio.NewWriter(f)
	err = writeEntries(bw, &sliceSource{apps: w.pending}, 0, nil)
	if err == nil {
		err = bw.Flush()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("index: spilling: %w", err)
	}
	w.runs = append(w.runs, name)
	w.pending, w.held = w.pending[:0], 0
	return nil
}

// Close removes the run files.
func (w *IndexWriter) Close() error {
	if w.dir == "" {
		return nil
	}
	return os.RemoveAll(w.dir)
}

// IndexHeader is what an index says about the chain it was made from.
type IndexHeader struct {
	// Version is the format's version, as IndexReader read it; WriteTo
	// ignores it and writes IndexVersion.
	Version int
	// Network is the chain's name (chaincfg.Params.Name).
	Network string
	// First is the height of Hashes[0]; the index covers the blocks
	// First..First+len(Hashes)-1.
	First  int32
	Hashes []chainhash.Hash
}

// Last is the height of the last block the index covers.
func (h *IndexHeader) Last() int32 { return h.First + int32(len(h.Hashes)) - 1 }

// WriteTo writes the index: the header, then one entry per candidate in
// increasing byte order of the candidates, then an end marker. Every
// number is an unsigned LEB128 varint (encoding/binary's Uvarint):
//
//	magic       8 bytes "SPVFIDX" and the version, 0x04
//	network     varint length, the name's bytes
//	first       varint: the height of the first block covered
//	blocks      varint B, then B block hashes of 32 bytes (wire byte
//	            order), for heights first..first+B-1
//	entries     per candidate: varint length L (1..32768), L bytes of the
//	            candidate (as a universe line writes it: an address or
//	            hex), varint k (1..B), then for each of its k blocks:
//	              varint: the height minus first for the first block, the
//	                height minus the one before for the others (at least
//	                1: heights strictly increase);
//	              varint t (0..131072): the transactions of that block it
//	                appears in (0: not recorded), then t varints, each
//	                4*d + r: d the first one's position in the block (0
//	                the coinbase), each next one's minus the one before
//	                (at least 1), and r its role there (Role: 1 paid by
//	                an output, 2 spent by an input, 3 both, 0 not
//	                recorded)
//	end         varint 0 (a length of zero), varint: the number of entries
//	checksum    4 bytes, little-endian: the CRC-32C (Castagnoli) of every
//	            byte before it, from the magic on
//
// Version 3 is the same without the roles: each of a block's t varints is
// d alone. Version 2 is version 3 without the checksum (a damaged file can
// then read as another index), version 1 also without the transactions:
// each block of an entry is its height's varint alone. A reader needs memory
// for the header's hashes and one entry at a time.
func (w *IndexWriter) WriteTo(out io.Writer, h *IndexHeader) (int64, error) {
	if w.err != nil {
		return 0, w.err
	}
	if len(h.Hashes) == 0 || len(h.Hashes) > maxIndexBlocks {
		return 0, fmt.Errorf("index: %d blocks, want 1..%d", len(h.Hashes), maxIndexBlocks)
	}
	// Fold the runs until one merge can take them all.
	for len(w.runs) > indexFanIn {
		if err := w.spill(); err != nil {
			return 0, err
		}
		group := w.runs[:indexFanIn]
		w.named++
		name := fmt.Sprintf("%s/merge-%d", w.dir, w.named)
		if err := mergeRunsToFile(group, name); err != nil {
			return 0, err
		}
		for _, r := range group {
			os.Remove(r)
		}
		w.runs = append(w.runs[indexFanIn:], name)
	}
	w.sortPending()
	sources := []entrySource{&sliceSource{apps: w.pending}}
	var files []*os.File
	defer func() {
		for _, f := range files {
			f.Close()
		}
	}()
	for _, r := range w.runs {
		f, err := os.Open(r)
		if err != nil {
			return 0, fmt.Errorf("index: %w", err)
		}
		files = append(files, f)
		sources = append(sources, &runSource{r: bufio.NewReader(f)})
	}
	bw := bufio.NewWriter(out)
	sum := crc32.New(indexChecksum)
	cw := &countingWriter{w: io.MultiWriter(bw, sum)}
	cw.Write(append(indexMagic[:], IndexVersion))
	putUvarint(cw, uint64(len(h.Network)))
	cw.Write([]byte(h.Network))
	putUvarint(cw, uint64(h.First))
	putUvarint(cw, uint64(len(h.Hashes)))
	for i := range h.Hashes {
		cw.Write(h.Hashes[i][:])
	}
	last := uint32(h.Last())
	if err := writeEntries(cw, newMerger(sources), uint32(h.First), &last); err != nil {
		return cw.n, err
	}
	cw.w = bw // the checksum is of what precedes it
	cw.Write(binary.LittleEndian.AppendUint32(nil, sum.Sum32()))
	if cw.err != nil {
		return cw.n, fmt.Errorf("index: writing: %w", cw.err)
	}
	return cw.n, bw.Flush()
}

// mergeRunsToFile merges run files into one run file.
func mergeRunsToFile(runs []string, name string) error {
	var sources []entrySource
	for _, r := range runs {
		f, err := os.Open(r)
		if err != nil {
			return fmt.Errorf("index: %w", err)
		}
		defer f.Close()
		sources = append(sources, &runSource{r: bufio.NewReader(f)})
	}
	f, err := os.Create(name)
	if err != nil {
		return fmt.Errorf("index: %w", err)
	}
	bw := bufio.NewWriter(f)
	err = writeEntries(bw, newMerger(sources), 0, nil)
	if err == nil {
		err = bw.Flush()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// IndexEntry is one candidate and the heights of the blocks it appears in,
// in increasing order, and there the positions of the transactions it
// appears in.
type IndexEntry struct {
	Candidate string
	Heights   []int32
	// Txs[i] are the positions in block Heights[i] of the transactions
	// the candidate appears in, in increasing order; empty when the index
	// does not record them (version 1, or an appearance added without
	// its transaction).
	Txs [][]uint32
	// Roles[i][j] is the candidate's role in transaction Txs[i][j]: paid
	// there, spent there or both, or 0 when not recorded. Roles is nil in
	// an index before version 4, which cannot tell a script's creation
	// from its spends: there a script's first appearance in the index is
	// its creation only when the index starts before it (from the genesis
	// block), as it may be a spend of a coin paid before the index's
	// first block.
	Roles [][]Role
}

// blockApps is a candidate's appearances in one block: the positions of
// its transactions there (none when not recorded), and its role in each.
type blockApps struct {
	height uint32
	txs    []uint32
	roles  []Role // as long as txs
}

// entrySource yields entries in increasing candidate order (equal
// candidates may repeat); ok is false at the end.
type entrySource interface {
	next() (candidate string, apps []blockApps, ok bool, err error)
}

// sliceSource groups sorted appearances into entries.
type sliceSource struct {
	apps []appearance
	i    int
}

func (s *sliceSource) next() (string, []blockApps, bool, error) {
	if s.i >= len(s.apps) {
		return "", nil, false, nil
	}
	c := s.apps[s.i].candidate
	var out []blockApps
	for ; s.i < len(s.apps) && s.apps[s.i].candidate == c; s.i++ {
		a := s.apps[s.i]
		if len(out) == 0 || out[len(out)-1].height != a.height {
			out = append(out, blockApps{height: a.height})
		}
		b := &out[len(out)-1]
		switch {
		case a.tx == noTx:
		case len(b.txs) == 0 || b.txs[len(b.txs)-1] != a.tx:
			b.txs = append(b.txs, a.tx)
			b.roles = append(b.roles, a.role)
		default:
			b.roles[len(b.roles)-1] |= a.role
		}
	}
	return c, out, true, nil
}

// runSource reads a run file: entries with absolute first heights, no
// header and no end marker.
type runSource struct{ r *bufio.Reader }

func (s *runSource) next() (string, []blockApps, bool, error) {
	c, hs, err := readEntry(s.r, 0, ^uint32(0), IndexVersion)
	if err == io.EOF {
		return "", nil, false, nil
	}
	if err != nil {
		return "", nil, false, fmt.Errorf("index: run file: %w", err)
	}
	return c, hs, true, nil
}

// merger merges sources into one stream, joining equal candidates.
type merger struct {
	h       mergeHeap
	started bool
}

type mergeItem struct {
	candidate string
	apps      []blockApps
	src       entrySource
}

type mergeHeap []*mergeItem

func (h mergeHeap) Len() int           { return len(h) }
func (h mergeHeap) Less(i, j int) bool { return h[i].candidate < h[j].candidate }
func (h mergeHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *mergeHeap) Push(x any)        { *h = append(*h, x.(*mergeItem)) }
func (h *mergeHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

func newMerger(sources []entrySource) entrySource {
	m := &merger{}
	for _, s := range sources {
		m.h = append(m.h, &mergeItem{src: s})
	}
	return m
}

func (m *merger) advance(it *mergeItem) (bool, error) {
	c, hs, ok, err := it.src.next()
	if err != nil || !ok {
		return false, err
	}
	it.candidate, it.apps = c, hs
	return true, nil
}

func (m *merger) next() (string, []blockApps, bool, error) {
	if !m.started {
		m.started = true
		items := m.h
		m.h = mergeHeap{}
		for _, it := range items {
			ok, err := m.advance(it)
			if err != nil {
				return "", nil, false, err
			}
			if ok {
				m.h = append(m.h, it)
			}
		}
		heap.Init(&m.h)
	}
	if len(m.h) == 0 {
		return "", nil, false, nil
	}
	c := m.h[0].candidate
	var hs []blockApps
	for len(m.h) > 0 && m.h[0].candidate == c {
		it := m.h[0]
		hs = mergeApps(hs, it.apps)
		ok, err := m.advance(it)
		if err != nil {
			return "", nil, false, err
		}
		if ok {
			heap.Fix(&m.h, 0)
		} else {
			heap.Pop(&m.h)
		}
	}
	return c, hs, true, nil
}

// mergeApps merges two lists of appearances in increasing order of
// height, joining the transactions of a block in both.
func mergeApps(a, b []blockApps) []blockApps {
	out := make([]blockApps, 0, len(a)+len(b))
	i, j := 0, 0
	for i < len(a) || j < len(b) {
		switch {
		case j >= len(b) || i < len(a) && a[i].height < b[j].height:
			out = append(out, a[i])
			i++
		case i >= len(a) || b[j].height < a[i].height:
			out = append(out, b[j])
			j++
		default:
			txs, roles := mergeSorted(a[i], b[j])
			out = append(out, blockApps{height: a[i].height, txs: txs, roles: roles})
			i++
			j++
		}
	}
	return out
}

// mergeSorted merges the transactions of two appearances in one block,
// increasing lists, without repeats: the roles of a transaction in both
// are joined.
func mergeSorted(x, y blockApps) ([]uint32, []Role) {
	a, b := x.txs, y.txs
	out := make([]uint32, 0, len(a)+len(b))
	roles := make([]Role, 0, len(a)+len(b))
	i, j := 0, 0
	for i < len(a) || j < len(b) {
		var v uint32
		var r Role
		switch {
		case j >= len(b) || i < len(a) && a[i] < b[j]:
			v, r = a[i], x.roles[i]
			i++
		case i >= len(a) || b[j] < a[i]:
			v, r = b[j], y.roles[j]
			j++
		default:
			v, r = a[i], x.roles[i]|y.roles[j]
			i++
			j++
		}
		out, roles = append(out, v), append(roles, r)
	}
	return out, roles
}

// writeEntries writes src's entries relative to first. With last non-nil
// it writes the index's body: heights outside first..*last are dropped,
// and the end marker follows.
func writeEntries(w io.Writer, src entrySource, first uint32, last *uint32) error {
	cw, ok := w.(*countingWriter)
	if !ok {
		cw = &countingWriter{w: w}
	}
	var entries uint64
	for {
		c, apps, ok, err := src.next()
		if err != nil {
			return err
		}
		if !ok {
			break
		}
		if last != nil {
			apps = slices.DeleteFunc(apps, func(a blockApps) bool { return a.height < first || a.height > *last })
			if len(apps) == 0 {
				continue
			}
		}
		putUvarint(cw, uint64(len(c)))
		cw.Write([]byte(c))
		putUvarint(cw, uint64(len(apps)))
		prev := first
		for i, a := range apps {
			if i == 0 {
				putUvarint(cw, uint64(a.height-first))
			} else {
				putUvarint(cw, uint64(a.height-prev))
			}
			prev = a.height
			putUvarint(cw, uint64(len(a.txs)))
			for j, tx := range a.txs {
				d := tx
				if j > 0 {
					d = tx - a.txs[j-1]
				}
				putUvarint(cw, uint64(d)<<2|uint64(a.roles[j]))
			}
		}
		entries++
	}
	if last != nil {
		putUvarint(cw, 0)
		putUvarint(cw, entries)
	}
	return cw.err
}

// readEntry reads one entry of an index of the given version whose
// heights lie in first..last. It returns io.EOF at a clean end of input
// and ErrBadIndex for anything malformed; it allocates only for bytes that
// are present.
func readEntry(r byteReader, first, last uint32, version int) (string, []blockApps, error) {
	n, err := binary.ReadUvarint(r)
	if err == io.EOF {
		return "", nil, io.EOF
	}
	if err != nil {
		return "", nil, fmt.Errorf("%w: candidate length: %w", ErrBadIndex, err)
	}
	if n == 0 {
		return "", nil, errEndMarker
	}
	if n > maxIndexCandidate {
		return "", nil, fmt.Errorf("%w: candidate of %d bytes, at most %d", ErrBadIndex, n, maxIndexCandidate)
	}
	cb := make([]byte, n)
	if _, err := io.ReadFull(r, cb); err != nil {
		return "", nil, fmt.Errorf("%w: candidate truncated", ErrBadIndex)
	}
	k, err := binary.ReadUvarint(r)
	if err != nil {
		return "", nil, fmt.Errorf("%w: %q: appearance count: %v", ErrBadIndex, cb, noEOF(err))
	}
	if k == 0 || k > uint64(last-first)+1 {
		return "", nil, fmt.Errorf("%w: %q: %d appearances in %d blocks", ErrBadIndex, cb, k, uint64(last-first)+1)
	}
	var apps []blockApps
	h := uint64(first)
	for i := uint64(0); i < k; i++ {
		d, err := binary.ReadUvarint(r)
		if err != nil {
			return "", nil, fmt.Errorf("%w: %q: height %d: %v", ErrBadIndex, cb, i+1, noEOF(err))
		}
		if i > 0 && d == 0 {
			return "", nil, fmt.Errorf("%w: %q: heights not increasing", ErrBadIndex, cb)
		}
		h += d
		if d > uint64(last) || h > uint64(last) {
			return "", nil, fmt.Errorf("%w: %q: height beyond the last block %d", ErrBadIndex, cb, last)
		}
		a := blockApps{height: uint32(h)}
		if version >= 2 {
			if a.txs, a.roles, err = readTxs(r, version); err != nil {
				return "", nil, fmt.Errorf("%w: %q: block %d: %w", ErrBadIndex, cb, h, err)
			}
		}
		apps = append(apps, a)
	}
	return string(cb), apps, nil
}

// readTxs reads the transactions of one block of an entry, and from
// version 4 on their roles (else zeros).
func readTxs(r byteReader, version int) ([]uint32, []Role, error) {
	t, err := binary.ReadUvarint(r)
	if err != nil {
		return nil, nil, fmt.Errorf("transaction count: %v", noEOF(err))
	}
	if t > maxBlockTxs {
		return nil, nil, fmt.Errorf("%d transactions, at most %d", t, maxBlockTxs)
	}
	var txs []uint32
	var roles []Role
	var pos uint64
	for j := uint64(0); j < t; j++ {
		d, err := binary.ReadUvarint(r)
		if err != nil {
			return nil, nil, fmt.Errorf("transaction %d: %v", j+1, noEOF(err))
		}
		var role Role
		if version >= 4 {
			d, role = d>>2, Role(d&3)
		}
		if j > 0 && d == 0 {
			return nil, nil, fmt.Errorf("transactions not increasing")
		}
		if pos += d; d >= maxBlockTxs || pos >= maxBlockTxs {
			return nil, nil, fmt.Errorf("transaction position beyond %d", maxBlockTxs-1)
		}
		txs = append(txs, uint32(pos))
		roles = append(roles, role)
	}
	return txs, roles, nil
}

var errEndMarker = errors.New("end marker")

// byteReader is what the entries are read from.
type byteReader interface {
	io.Reader
	io.ByteReader
}

// summingReader passes on the bytes read from r, adding them to a
// checksum; single bytes are gathered in pending first, so that a byte
// costs no call of the hash.
type summingReader struct {
	r       *bufio.Reader
	sum     hash.Hash32
	pending []byte
}

func (s *summingReader) Read(p []byte) (int, error) {
	s.flush()
	n, err := s.r.Read(p)
	s.sum.Write(p[:n])
	return n, err
}

func (s *summingReader) ReadByte() (byte, error) {
	b, err := s.r.ReadByte()
	if err == nil {
		if len(s.pending) == cap(s.pending) {
			s.flush()
		}
		s.pending = append(s.pending, b)
	}
	return b, err
}

func (s *summingReader) flush() {
	s.sum.Write(s.pending)
	s.pending = s.pending[:0]
}

// Sum32 is the checksum of every byte read.
func (s *summingReader) Sum32() uint32 {
	s.flush()
	return s.sum.Sum32()
}

func noEOF(err error) error {
	if err == io.EOF {
		return io.ErrUnexpectedEOF
	}
	return err
}

// IndexReader reads an appearance index one entry at a time.
type IndexReader struct {
	r       *summingReader
	header  IndexHeader
	height  map[chainhash.Hash]int32
	prev    string
	entries uint64
	done    bool
}

// NewIndexReader reads the index's header. From version 3 on, the
// index's checksum is checked after its last entry (Next): an index
// damaged anywhere, its header included, is ErrBadIndex then.
func NewIndexReader(r io.Reader) (*IndexReader, error) {
	br := &summingReader{r: bufio.NewReaderSize(r, 64<<10), sum: crc32.New(indexChecksum), pending: make([]byte, 0, 4096)}
	var magic [8]byte
	if _, err := io.ReadFull(br, magic[:]); err != nil || [7]byte(magic[:7]) != indexMagic {
		return nil, fmt.Errorf("%w: not an appearance index (no %q header)", ErrBadIndex, indexMagic[:])
	}
	version := int(magic[7])
	if version < 1 || version > IndexVersion {
		return nil, fmt.Errorf("%w: version %d, this reader reads 1 to %d", ErrBadIndex, version, IndexVersion)
	}
	n, err := binary.ReadUvarint(br)
	if err != nil || n > maxIndexNetwork {
		return nil, fmt.Errorf("%w: network name", ErrBadIndex)
	}
	name := make([]byte, n)
	if _, err := io.ReadFull(br, name); err != nil {
		return nil, fmt.Errorf("%w: network name truncated", ErrBadIndex)
	}
	first, err := binary.ReadUvarint(br)
	if err != nil || first > 1<<31-1 {
		return nil, fmt.Errorf("%w: first height", ErrBadIndex)
	}
	b, err := binary.ReadUvarint(br)
	if err != nil || b == 0 || b > maxIndexBlocks || first+b-1 > 1<<31-1 {
		return nil, fmt.Errorf("%w: block count", ErrBadIndex)
	}
	ir := &IndexReader{r: br, header: IndexHeader{Version: version, Network: string(name), First: int32(first)}}
	ir.height = map[chainhash.Hash]int32{}
	for i := uint64(0); i < b; i++ {
		var h chainhash.Hash
		if _, err := io.ReadFull(br, h[:]); err != nil {
			return nil, fmt.Errorf("%w: block hashes truncated at %d of %d", ErrBadIndex, i, b)
		}
		ir.header.Hashes = append(ir.header.Hashes, h)
		ir.height[h] = int32(first + i)
	}
	return ir, nil
}

// Header returns the index's header.
func (ir *IndexReader) Header() *IndexHeader { return &ir.header }

// Height returns the height of the block with hash h, if the index covers it.
func (ir *IndexReader) Height(h chainhash.Hash) (int32, bool) {
	v, ok := ir.height[h]
	return v, ok
}

// Next returns the next entry, or io.EOF after the end marker. An index
// cut short, out of order or with a wrong entry count is ErrBadIndex.
func (ir *IndexReader) Next() (*IndexEntry, error) {
	if ir.done {
		return nil, io.EOF
	}
	c, apps, err := readEntry(ir.r, uint32(ir.header.First), uint32(ir.header.Last()), ir.header.Version)
	switch {
	case err == errEndMarker:
		n, err := binary.ReadUvarint(ir.r)
		if err != nil || n != ir.entries {
			return nil, fmt.Errorf("%w: end marker counts %d entries, read %d", ErrBadIndex, n, ir.entries)
		}
		if ir.header.Version >= 3 {
			want := ir.r.Sum32()
			var got [4]byte
			if _, err := io.ReadFull(ir.r.r, got[:]); err != nil {
				return nil, fmt.Errorf("%w: truncated: no checksum after the end marker", ErrBadIndex)
			}
			if binary.LittleEndian.Uint32(got[:]) != want {
				return nil, fmt.Errorf("%w: checksum %08x, the data give %08x: the file is damaged", ErrBadIndex, binary.LittleEndian.Uint32(got[:]), want)
			}
		}
		if _, err := ir.r.r.ReadByte(); err != io.EOF {
			return nil, fmt.Errorf("%w: data after the end marker", ErrBadIndex)
		}
		ir.done = true
		return nil, io.EOF
	case err == io.EOF:
		return nil, fmt.Errorf("%w: truncated: no end marker after %d entries", ErrBadIndex, ir.entries)
	case err != nil:
		return nil, err
	}
	if ir.entries > 0 && c <= ir.prev {
		return nil, fmt.Errorf("%w: candidate %q after %q: not in increasing order", ErrBadIndex, c, ir.prev)
	}
	ir.prev = c
	ir.entries++
	e := &IndexEntry{Candidate: c, Heights: make([]int32, len(apps))}
	if ir.header.Version >= 2 {
		e.Txs = make([][]uint32, len(apps))
	}
	if ir.header.Version >= 4 {
		e.Roles = make([][]Role, len(apps))
	}
	for i, a := range apps {
		e.Heights[i] = int32(a.height)
		if e.Txs != nil {
			e.Txs[i] = a.txs
		}
		if e.Roles != nil {
			e.Roles[i] = a.roles
		}
	}
	return e, nil
}

type countingWriter struct {
	w   io.Writer
	n   int64
	err error
}

func (c *countingWriter) Write(p []byte) (int, error) {
	if c.err != nil {
		return 0, c.err
	}
	n, err := c.w.Write(p)
	c.n += int64(n)
	c.err = err
	return n, err
}

func putUvarint(w io.Writer, v uint64) {
	var b [binary.MaxVarintLen64]byte
	w.Write(b[:binary.PutUvarint(b[:], v)])
}
