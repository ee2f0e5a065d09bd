package store

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"runtime/debug"
	"slices"
	"sync"
	"time"

	"github.com/btcsuite/btcd/chaincfg/chainhash"
	bolt "go.etcd.io/bbolt"
	berrors "go.etcd.io/bbolt/errors"

	"github.com/spvfilter/spvfilter/peer/internal/diskfile"
)

// Bucket and key names of the filter cache database. Filters are kept in
// chunks (filterchunk.go) keyed by their insertion sequence, so that a
// scan's new filters are appended at the end of the tree, instead of
// spread over it by block hash, which rewrote most of its pages at every
// batch; the index finds a filter by block hash.
var (
	chunksBucket = []byte("chunks") // insertion sequence (8 bytes, big endian) -> bucket: chunkKey -> chunk
	chunkKey     = []byte("c")
	indexBucket  = []byte("blocks") // block hash -> loc
	metaBucket   = []byte("meta")
	sizeKey      = []byte("size") // logical bytes held, 8 bytes big endian
	// indexedKey holds the sequence of the last chunk whose records the
	// index holds (8 bytes, big endian): those of later chunks are
	// indexed in memory (filterCache.pending) until the index is written.
	indexedKey = []byte("indexed")

	// The buckets of earlier layouts, dropped on open.
	oldBuckets = [][]byte{[]byte("filters"), []byte("order"), []byte("entries"), []byte("index")}
)

// entryOverhead is what a filter costs besides its bytes: its record's
// fixed part and its line in the index.
const entryOverhead = recordHeaderSize + chainhash.HashSize + locSize

// pendingMax is how many records the index may hold in memory before it
// is written: about 5 MB. Writing it costs about a rewrite of its pages,
// however few records are new, so it is written seldom: when this many
// have gathered, before a record is dropped, and when the cache closes.
const pendingMax = 1 << 16

// ErrFilterCacheDamaged is returned by Filter, PutFilters and
// FilterCacheSize when the filter cache's file turns out damaged while the
// store uses it: bbolt faulted on its map of the file or panicked on a
// page. The file is set aside, Recovered says so, and the cache is off
// for the rest of the store's life: later calls find and keep nothing,
// without an error. A scan can go on, fetching its filters instead.
var ErrFilterCacheDamaged = errors.New("store: filter cache damaged")

// errFault is what guard makes of a memory fault or panic.
var errFault = errors.New("bbolt failed on the file")

// filterCache keeps verified filters by block hash in a bbolt database,
// in chunks (filterchunk.go), evicting the oldest chunk first once the
// logical size (filter bytes plus entryOverhead per filter) passes the
// limit.
//
// bbolt reads the file through a memory map, so a damaged file would
// fault (SIGBUS, SIGSEGV) or panic inside bbolt. openFilterCache checks
// the file (checkBolt) before bbolt maps it, and every call into bbolt
// runs inside guard, which turns what it cannot rule out (the file
// changed under the store while open) into an error: see the package
// documentation.
type filterCache struct {
	path  string
	limit int64
	now   func() time.Time

	// txMu is held around every transaction and Close: see run.
	txMu sync.Mutex

	// pending locates the records of the chunks after the indexed one
	// (indexedKey); guarded by txMu, changed only inside transactions.
	pending map[chainhash.Hash]loc

	mu     sync.Mutex
	db     *bolt.DB // nil while off or closed
	dead   *bolt.DB // the database of a file found damaged in use
	closed bool
	notes  []string // for Recovered

	deep bool // whether the last open checked the file in depth
}

// filterCacheName is how notes name the cache file.
var filterCacheName = FiltersDir + "/" + filterCacheFile

// openFilterCache opens or creates the cache database at path. A file
// that fails checkBolt or that bbolt cannot open is set aside (diskfile.SetAside)
// and a new cache started: it is only a cache. If no cache can be
// opened, the cache is off for this run. Either way the notes say so.
func openFilterCache(path string, limit int64, now func() time.Time) *filterCache {
	fc := &filterCache{path: path, limit: limit, now: now}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		fc.notef("%s: the filter cache is off for this run: %v", filterCacheName, err)
		return fc
	}
	for attempt := 0; ; attempt++ {
		db, deep, err := fc.openBolt()
		fc.deep = deep
		switch {
		case err == nil:
			fc.db = db
			return fc
		case attempt > 0 || errors.Is(err, berrors.ErrTimeout):
			fc.notef("%s: the filter cache is off for this run: %v", filterCacheName, err)
			return fc
		}
		aside, serr := diskfile.SetAside(path, now())
		if serr != nil {
			fc.notef("%s: %v; it could not be set aside (%v): the filter cache is off for this run", filterCacheName, err, serr)
			return fc
		}
		fc.notef("%s: %v: set aside as %s, a new cache started", filterCacheName, err, aside)
	}
}

// openBolt checks the cache's file, if there is one, opens it with bbolt,
// makes it a filter cache of the limit and reads the records the index
// does not hold yet. It reports whether it checked the file in depth.
//
// The cache's writes are not synced: what a crash of the system loses or
// leaves out of order is a cache's loss, and a file it leaves unsound is
// found so on the next open (it did not close cleanly: checked in depth)
// and set aside, while a record that is sound in form but not in content
// fails its checksum and is dropped, and a filter read from the cache is
// checked against its filter header before a scan uses it. Syncing each
// transaction cost more CPU than the rest of keeping a scan's filters.
func (fc *filterCache) openBolt() (*bolt.DB, bool, error) {
	deep := !closedCleanly(fc.path)
	if err := checkFile(fc.path, deep); err != nil {
		return nil, deep, err
	}
	var db *bolt.DB
	err := guard(func() (err error) {
		db, err = bolt.Open(fc.path, 0o644, &bolt.Options{Timeout: time.Second, NoSync: true, InitialMmapSize: mmapSize(fc.limit)})
		return err
	})
	if err != nil {
		return nil, deep, err
	}
	err = guard(func() error {
		return db.Update(func(tx *bolt.Tx) error {
			if err := dropOldLayout(tx); err != nil {
				return err
			}
			for _, name := range [][]byte{chunksBucket, indexBucket, metaBucket} {
				if _, err := tx.CreateBucketIfNotExists(name); err != nil {
					return fmt.Errorf("bucket %s: %w", name, err)
				}
			}
			fc.loadPending(tx)
			return fc.evict(tx, fc.limit)
		})
	})
	if err != nil {
		closeDead(db)
		return nil, deep, err
	}
	return db, deep, nil
}

// mmapSize is the size of the address space bbolt maps for a cache of
// the limit from the start: the file it grows to (the limit, with bbolt's
// pages, branches and free pages around it), so that a filling cache is
// not mapped again at each doubling of its file, which copies the
// transaction's new entries out of the map each time. Only what is read
// is resident.
func mmapSize(limit int64) int {
	return int(min(limit+limit/2, 1<<30))
}

// checkFile runs checkBolt on the file at path; a missing file is fine.
func checkFile(path string, deep bool) error {
	fi, err := os.Lstat(path)
	switch {
	case os.IsNotExist(err):
		return nil
	case err != nil:
		return err
	case !fi.Mode().IsRegular():
		return fmt.Errorf("%w: not a regular file but %v", errBoltDamaged, fi.Mode().Type())
	}
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	if fi, err = f.Stat(); err != nil {
		return err
	}
	return checkBolt(f, fi.Size(), deep)
}

// cleanSuffix follows the cache file's name in the name of the file that
// records its stamp (fileStamp) when the store closed it cleanly.
const cleanSuffix = ".clean"

// maxCleanRecord bounds the clean-close record read: a stamp is far
// shorter.
const maxCleanRecord = 1024

// closedCleanly reports whether the cache file at path is as the store
// left it when it last closed it cleanly, and removes that record: until
// the store closes the cache cleanly again, the file counts as in use.
func closedCleanly(path string) bool {
	// A hint of a few bytes: anything but a small regular file is none.
	rec, err := diskfile.ReadLimited(path+cleanSuffix, maxCleanRecord)
	if err != nil {
		return false
	}
	_ = os.Remove(path + cleanSuffix)
	stamp, err := fileStamp(path)
	return err == nil && string(rec) == stamp
}

// markClean records the stamp of the cache file at path, closed cleanly.
// It is only a hint, which spares the next open the deep checks: if it
// cannot be written, the next open checks the file in depth.
func markClean(path string) {
	stamp, err := fileStamp(path)
	if err != nil {
		return
	}
	tmp := path + cleanSuffix + ".tmp"
	if os.WriteFile(tmp, []byte(stamp), 0o644) == nil {
		_ = os.Rename(tmp, path+cleanSuffix)
	}
}

// guard calls fn with memory faults turned into panics
// (debug.SetPanicOnFault, which holds for the calling goroutine only, and
// is restored after), and turns a panic into an error wrapping errFault:
// a fault reading bbolt's map of a damaged file, or a panic of bbolt on a
// page it finds inconsistent. Every call into bbolt on the cache's
// database runs inside guard, on the goroutine that calls guard; none
// starts goroutines of its own (bbolt's Tx.Check, Batch and the freelist
// scan without a stored freelist do, so the cache uses none of them).
func guard(fn func() error) (err error) {
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		if r := recover(); r != nil {
			err = faultError(r)
		}
	}()
	return fn()
}

// faultError describes a recovered panic.
func faultError(r any) error {
	if f, ok := r.(interface{ Addr() uintptr }); ok {
		return fmt.Errorf("%w: memory fault at %#x: %v", errFault, f.Addr(), r)
	}
	return fmt.Errorf("%w: %v", errFault, r)
}

// closeDeadWait is how long closeDead waits for bbolt's Close.
const closeDeadWait = 100 * time.Millisecond

// closeDead closes the database of a damaged file, waiting for it no
// longer than closeDeadWait: a fault inside bbolt can leave its locks
// held (a transaction that faulted as it began, or while a write rolled
// back), which Close waits for. The goroutine then stays blocked, with
// the file's descriptor and map: one of each per file found damaged while
// in use, for the life of the process.
func closeDead(db *bolt.DB) {
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = guard(db.Close)
	}()
	select {
	case <-done:
	case <-time.After(closeDeadWait):
	}
}

func (fc *filterCache) notef(format string, args ...any) {
	fc.mu.Lock()
	defer fc.mu.Unlock()
	fc.notes = append(fc.notes, fmt.Sprintf(format, args...))
}

// takeNotes returns the notes not taken yet.
func (fc *filterCache) takeNotes() []string {
	fc.mu.Lock()
	defer fc.mu.Unlock()
	n := fc.notes
	fc.notes = nil
	return n
}

// use returns the database: nil while the cache is off, ErrClosed once
// closed.
func (fc *filterCache) use() (*bolt.DB, error) {
	fc.mu.Lock()
	defer fc.mu.Unlock()
	if fc.closed {
		return nil, ErrClosed
	}
	return fc.db, nil
}

// view runs fn in a read-only transaction, inside guard, if the cache is
// on.
func (fc *filterCache) view(fn func(*bolt.Tx) error) error { return fc.run(false, fn) }

// update runs fn in a read-write transaction and commits it, inside
// guard, if the cache is on.
func (fc *filterCache) update(fn func(*bolt.Tx) error) error { return fc.run(true, fn) }

// run runs fn in a transaction, inside guard, if the cache is on.
// Transactions run one at a time, and only while the cache is on: a fault
// inside bbolt can leave its locks held (one that a transaction takes as
// it begins, or the writer's lock as a write rolls back), which any other
// transaction in bbolt at the time could wait on for ever. (bbolt would
// let reads run side by side, but a lookup takes microseconds.)
func (fc *filterCache) run(writable bool, fn func(*bolt.Tx) error) error {
	fc.txMu.Lock()
	defer fc.txMu.Unlock()
	db, err := fc.use()
	if db == nil {
		return err
	}
	err = guard(func() error {
		tx, err := db.Begin(writable)
		if err != nil {
			return err
		}
		defer tx.Rollback() // after Commit, does nothing
		if err := fn(tx); err != nil || !writable {
			return err
		}
		return tx.Commit()
	})
	if err != nil && writable && !errors.Is(err, errFault) {
		// What the transaction changed in pending is undone with it.
		_ = guard(func() error {
			return db.View(func(tx *bolt.Tx) error {
				fc.loadPending(tx)
				return nil
			})
		})
	}
	return fc.failed(db, err)
}

// failed returns err, after turning the cache off if err is a fault.
func (fc *filterCache) failed(db *bolt.DB, err error) error {
	if !errors.Is(err, errFault) {
		return err
	}
	fc.mu.Lock()
	defer fc.mu.Unlock()
	if fc.db != db {
		// Turned off (or closed) by another call meanwhile.
		return fmt.Errorf("%w: %v", ErrFilterCacheDamaged, err)
	}
	fc.db, fc.dead = nil, db
	note := fmt.Sprintf("%s: damaged while in use (%v)", filterCacheName, err)
	if aside, serr := diskfile.SetAside(fc.path, fc.now()); serr != nil {
		note += fmt.Sprintf(" and could not be set aside (%v)", serr)
	} else {
		note += ": set aside as " + aside
	}
	note += "; the filter cache is off for this run"
	fc.notes = append(fc.notes, note)
	return fmt.Errorf("%w: %s", ErrFilterCacheDamaged, note)
}

// cacheSize reads the logical size recorded in tx.
func cacheSize(tx *bolt.Tx) int64 {
	v := tx.Bucket(metaBucket).Get(sizeKey)
	if len(v) != 8 {
		return 0
	}
	return int64(binary.BigEndian.Uint64(v))
}

func setCacheSize(tx *bolt.Tx, n int64) error {
	var v [8]byte
	binary.BigEndian.PutUint64(v[:], uint64(max(n, 0)))
	return tx.Bucket(metaBucket).Put(sizeKey, v[:])
}

// dropOldLayout deletes the buckets of earlier layouts, if any, and the
// size they made up.
func dropOldLayout(tx *bolt.Tx) error {
	found := false
	for _, name := range oldBuckets {
		if tx.Bucket(name) == nil {
			continue
		}
		found = true
		if err := tx.DeleteBucket(name); err != nil {
			return fmt.Errorf("bucket %s: %w", name, err)
		}
	}
	if meta := tx.Bucket(metaBucket); found && meta != nil {
		return meta.Delete(sizeKey)
	}
	return nil
}

// indexed returns the sequence of the last chunk the index holds.
func indexed(tx *bolt.Tx) uint64 {
	v := tx.Bucket(metaBucket).Get(indexedKey)
	if len(v) != 8 {
		return 0
	}
	return binary.BigEndian.Uint64(v)
}

// loadPending locates in memory the records of the chunks after the
// indexed one: written, but not indexed when the cache was last closed
// (a crash). A chunk's records after one that does not parse are lost.
func (fc *filterCache) loadPending(tx *bolt.Tx) {
	fc.pending = map[chainhash.Hash]loc{}
	chunks := tx.Bucket(chunksBucket)
	c := chunks.Cursor()
	for k, _ := c.Seek(seqKey(indexed(tx) + 1)); k != nil; k, _ = c.Next() {
		if len(k) != 8 {
			continue
		}
		seq, v := binary.BigEndian.Uint64(k), chunkOf(chunks, k)
		for off := uint32(0); int(off) < len(v); {
			e, next, err := parseRecord(v, off)
			if err != nil {
				break
			}
			fc.pending[e.block] = loc{seq, off}
			off = next
		}
	}
}

// find locates the record of block.
func (fc *filterCache) find(tx *bolt.Tx, block chainhash.Hash) (loc, bool) {
	if l, ok := fc.pending[block]; ok {
		return l, true
	}
	return decodeLoc(tx.Bucket(indexBucket).Get(block[:]))
}

// unindex forgets where the record of block is.
func (fc *filterCache) unindex(tx *bolt.Tx, block chainhash.Hash) error {
	if _, ok := fc.pending[block]; ok {
		delete(fc.pending, block)
		return nil
	}
	return tx.Bucket(indexBucket).Delete(block[:])
}

// writeIndex writes the records located in memory into the index, in
// the index's order: bbolt inserts each key into a slice of its page's
// keys, so that keys in no order cost a copy of the slice each.
func (fc *filterCache) writeIndex(tx *bolt.Tx) error {
	index := tx.Bucket(indexBucket)
	blocks := slices.SortedFunc(maps.Keys(fc.pending), func(a, b chainhash.Hash) int { return bytes.Compare(a[:], b[:]) })
	for _, block := range blocks {
		if err := index.Put(block[:], fc.pending[block].encode()); err != nil {
			return err
		}
	}
	fc.pending = map[chainhash.Hash]loc{}
	return tx.Bucket(metaBucket).Put(indexedKey, seqKey(tx.Bucket(chunksBucket).Sequence()))
}

// chunkOf returns the chunk of key k in chunks, nil if there is none.
// Each chunk is the one value of a bucket of its own: bbolt keeps at least
// two keys on a page and rewrites a page whenever a key is added to it, so
// chunks side by side in one bucket were written again with each of the
// next few; a bucket's page is written once.
func chunkOf(chunks *bolt.Bucket, k []byte) []byte {
	b := chunks.Bucket(k)
	if b == nil {
		return nil
	}
	return b.Get(chunkKey)
}

// deleteChunk deletes the chunk at c, of key k, whatever its form.
func deleteChunk(chunks *bolt.Bucket, c *bolt.Cursor, k []byte) error {
	if chunks.Bucket(k) != nil {
		return chunks.DeleteBucket(k)
	}
	return c.Delete()
}

// evict deletes the oldest chunks until the size is at most limit,
// counting off the records of each that the index still locates there.
func (fc *filterCache) evict(tx *bolt.Tx, limit int64) error {
	size := cacheSize(tx)
	chunks := tx.Bucket(chunksBucket)
	c := chunks.Cursor()
	k, _ := c.First()
	for ; k != nil && size > limit; k, _ = c.First() {
		if v := chunkOf(chunks, k); len(k) == 8 {
			seq := binary.BigEndian.Uint64(k)
			for off := uint32(0); int(off) < len(v); {
				e, next, err := parseRecord(v, off)
				if err != nil {
					break // the rest of a damaged chunk: its index lines find nothing
				}
				if l, ok := fc.find(tx, e.block); ok && l == (loc{seq, off}) {
					size -= int64(len(e.filter)) + entryOverhead
					if err := fc.unindex(tx, e.block); err != nil {
						return err
					}
				}
				off = next
			}
		}
		if err := deleteChunk(chunks, c, k); err != nil {
			return err
		}
	}
	if k == nil {
		// Empty: whatever the recorded size said.
		size = 0
	}
	return setCacheSize(tx, size)
}

// put stores filters[i] as the filter of blockHashes[i], in one
// transaction, in chunks of up to chunkMax bytes, skipping those already
// there or alone larger than the limit, and evicts the oldest chunks to
// stay within the limit.
func (fc *filterCache) put(blockHashes []chainhash.Hash, filters [][]byte) error {
	return fc.update(func(tx *bolt.Tx) error {
		chunks := tx.Bucket(chunksBucket)
		// Keys only grow: fill each page.
		chunks.FillPercent = 1
		size := cacheSize(tx)
		var chunk []byte
		var seq uint64
		store := func() error {
			if len(chunk) == 0 {
				return nil
			}
			b, err := chunks.CreateBucket(seqKey(seq))
			if err == nil {
				err = b.Put(chunkKey, chunk)
			}
			chunk = nil
			return err
		}
		for i, block := range blockHashes {
			cost := int64(len(filters[i])) + entryOverhead
			if _, ok := fc.find(tx, block); ok || cost > fc.limit {
				continue
			}
			if len(chunk) > 0 && int64(len(chunk)+recordHeaderSize+len(filters[i])) > chunkMax(fc.limit) {
				if err := store(); err != nil {
					return err
				}
			}
			if len(chunk) == 0 {
				var err error
				if seq, err = chunks.NextSequence(); err != nil {
					return err
				}
				chunk = make([]byte, 0, chunkSize(filters[i:], chunkMax(fc.limit)))
			}
			fc.pending[block] = loc{seq, uint32(len(chunk))}
			chunk = appendRecord(chunk, &block, filters[i])
			size += cost
		}
		if err := store(); err != nil {
			return err
		}
		if err := setCacheSize(tx, size); err != nil {
			return err
		}
		if err := fc.evict(tx, fc.limit); err != nil {
			return err
		}
		if len(fc.pending) >= pendingMax {
			return fc.writeIndex(tx)
		}
		return nil
	})
}

// get returns a copy of the cached filter of the block, or nil. A record
// that is damaged, or that is not the block's, is dropped, noted and
// reported as absent.
func (fc *filterCache) get(blockHash chainhash.Hash) ([]byte, error) {
	var filter []byte
	var bad error
	err := fc.view(func(tx *bolt.Tx) error {
		l, ok := fc.find(tx, blockHash)
		if !ok {
			if v := tx.Bucket(indexBucket).Get(blockHash[:]); v != nil {
				bad = fmt.Errorf("%w: its index line is %d bytes long, not %d", errBadEntry, len(v), locSize)
			}
			return nil
		}
		chunk := chunkOf(tx.Bucket(chunksBucket), seqKey(l.seq))
		if chunk == nil {
			bad = fmt.Errorf("%w: the index locates it in chunk %d, which is missing", errBadEntry, l.seq)
			return nil
		}
		e, err := decodeRecord(chunk, l.off)
		switch {
		case err != nil:
			bad = err
		case e.block != blockHash:
			bad = fmt.Errorf("%w: the index locates the record of block %v", errBadEntry, e.block)
		default:
			filter = bytes.Clone(e.filter)
		}
		return nil
	})
	if err != nil || bad == nil {
		return filter, err
	}
	fc.notef("%s: dropped a damaged entry: block %v: %v", FiltersDir, blockHash, bad)
	return nil, fc.drop(blockHash)
}

// drop forgets the filter of a block. Its record stays in its chunk until
// the chunk is evicted, so the index is written first: the records it
// does not hold are found again on open. An index line that locates
// nothing (damaged) is deleted.
func (fc *filterCache) drop(blockHash chainhash.Hash) error {
	return fc.update(func(tx *bolt.Tx) error {
		l, ok := fc.find(tx, blockHash)
		if !ok {
			return tx.Bucket(indexBucket).Delete(blockHash[:])
		}
		if len(fc.pending) > 0 {
			if err := fc.writeIndex(tx); err != nil {
				return err
			}
		}
		if chunk := chunkOf(tx.Bucket(chunksBucket), seqKey(l.seq)); chunk != nil {
			if e, _, err := parseRecord(chunk, l.off); err == nil {
				if err := setCacheSize(tx, cacheSize(tx)-int64(len(e.filter))-entryOverhead); err != nil {
					return err
				}
			}
		}
		return tx.Bucket(indexBucket).Delete(blockHash[:])
	})
}

// size returns the logical size of the cache and the number of filters
// it holds.
func (fc *filterCache) size() (bytes int64, filters int, err error) {
	err = fc.view(func(tx *bolt.Tx) error {
		bytes = cacheSize(tx)
		filters = tx.Bucket(indexBucket).Stats().KeyN + len(fc.pending)
		return nil
	})
	return bytes, filters, err
}

// close closes the database, and the one of a file found damaged, if
// any. Later calls find the cache closed.
func (fc *filterCache) close() error {
	fc.txMu.Lock()
	defer fc.txMu.Unlock()
	fc.mu.Lock()
	db, dead := fc.db, fc.dead
	fc.db, fc.dead, fc.closed = nil, nil, true
	fc.mu.Unlock()
	if dead != nil {
		closeDead(dead)
	}
	if db == nil {
		return nil
	}
	if len(fc.pending) > 0 {
		// If it fails, the next open finds them in their chunks.
		_ = guard(func() error { return db.Update(fc.writeIndex) })
	}
	if err := guard(db.Close); err != nil {
		return err
	}
	markClean(fc.path)
	return nil
}
