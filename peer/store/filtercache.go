package store

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"os"
	"path/filepath"
	"runtime/debug"
	"sync"
	"time"

	"github.com/btcsuite/btcd/chaincfg/chainhash"
	bolt "go.etcd.io/bbolt"
	berrors "go.etcd.io/bbolt/errors"

	"github.com/spvfilter/spvfilter/peer/internal/diskfile"
)

// Bucket and key names of the filter cache database. Entries are keyed by
// their insertion sequence, so that a batch of new filters is appended at
// the end of their tree (pages written once, full) instead of spread over
// it by block hash, which rewrote most of its pages at every batch; the
// index, small, finds an entry by block hash.
var (
	entriesBucket = []byte("entries") // insertion sequence (8 bytes, big endian) -> entry
	indexBucket   = []byte("index")   // block hash -> insertion sequence
	metaBucket    = []byte("meta")
	sizeKey       = []byte("size") // logical bytes held, 8 bytes big endian

	// The buckets of the earlier layout, by block hash, dropped on open.
	oldBuckets = [][]byte{[]byte("filters"), []byte("order")}
)

// entryHeaderSize is the size of an entry's fixed part: the block's hash
// (32 bytes) and a CRC-32C (Castagnoli, 4 bytes, big endian) of the block
// hash and the filter.
const entryHeaderSize = chainhash.HashSize + 4

// entryOverhead is what an entry costs besides its filter bytes: its key,
// its fixed part and its line in the index.
const entryOverhead = 8 + entryHeaderSize + chainhash.HashSize + 8

// errBadEntry is the reason a cache entry that does not decode or whose
// checksum no longer matches is dropped.
var errBadEntry = errors.New("corrupt filter cache entry")

// cacheEntry is one decoded filter cache value.
type cacheEntry struct {
	block  chainhash.Hash
	filter []byte // aliases the encoded value
}

// entrySum is the checksum of an entry: of the block hash, then the
// filter.
func entrySum(block *chainhash.Hash, filter []byte) uint32 {
	return crc32.Update(crc32.Checksum(block[:], castagnoli), castagnoli, filter)
}

// encodeEntry returns the stored form of the filter of block.
func encodeEntry(block chainhash.Hash, filter []byte) []byte {
	v := make([]byte, entryHeaderSize+len(filter))
	copy(v, block[:])
	binary.BigEndian.PutUint32(v[chainhash.HashSize:], entrySum(&block, filter))
	copy(v[entryHeaderSize:], filter)
	return v
}

// decodeEntry decodes a stored filter cache value and checks its
// checksum.
func decodeEntry(v []byte) (cacheEntry, error) {
	if len(v) < entryHeaderSize {
		return cacheEntry{}, fmt.Errorf("%w: %d bytes, at least %d expected", errBadEntry, len(v), entryHeaderSize)
	}
	e := cacheEntry{filter: v[entryHeaderSize:]}
	copy(e.block[:], v)
	if got, want := entrySum(&e.block, e.filter), binary.BigEndian.Uint32(v[chainhash.HashSize:]); got != want {
		return cacheEntry{}, fmt.Errorf("%w: checksum %08x, recorded %08x", errBadEntry, got, want)
	}
	return e, nil
}

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
// evicting the oldest inserted first once the logical size (filter bytes
// plus entryOverhead per entry) passes the limit.
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
func openFilterCache(path string, limit int64, noSync bool, now func() time.Time) *filterCache {
	fc := &filterCache{path: path, limit: limit, now: now}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		fc.notef("%s: the filter cache is off for this run: %v", filterCacheName, err)
		return fc
	}
	for attempt := 0; ; attempt++ {
		db, deep, err := openBolt(path, limit, noSync)
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

// openBolt checks the file at path, if there is one, opens it with bbolt
// and makes it a filter cache of the limit. It reports whether it checked
// the file in depth.
func openBolt(path string, limit int64, noSync bool) (*bolt.DB, bool, error) {
	deep := !closedCleanly(path)
	if err := checkFile(path, deep); err != nil {
		return nil, deep, err
	}
	var db *bolt.DB
	err := guard(func() (err error) {
		db, err = bolt.Open(path, 0o644, &bolt.Options{Timeout: time.Second, NoSync: noSync, InitialMmapSize: mmapSize(limit)})
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
			for _, name := range [][]byte{entriesBucket, indexBucket, metaBucket} {
				if _, err := tx.CreateBucketIfNotExists(name); err != nil {
					return fmt.Errorf("bucket %s: %w", name, err)
				}
			}
			return evict(tx, limit)
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

// closedCleanly reports whether the cache file at path is as the store
// left it when it last closed it cleanly, and removes that record: until
// the store closes the cache cleanly again, the file counts as in use.
func closedCleanly(path string) bool {
	rec, err := os.ReadFile(path + cleanSuffix)
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
	return fc.failed(db, guard(func() error {
		tx, err := db.Begin(writable)
		if err != nil {
			return err
		}
		defer tx.Rollback() // after Commit, does nothing
		if err := fn(tx); err != nil || !writable {
			return err
		}
		return tx.Commit()
	}))
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

// dropOldLayout deletes the buckets of the earlier layout, if any, and
// the size they made up.
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

// entryCost is the logical size of a stored entry of v.
func entryCost(v []byte) int64 { return int64(max(len(v)-entryHeaderSize, 0)) + entryOverhead }

// seqKey is the key of insertion sequence seq.
func seqKey(seq uint64) []byte { return binary.BigEndian.AppendUint64(nil, seq) }

// evict deletes the oldest entries until the size is at most limit.
func evict(tx *bolt.Tx, limit int64) error {
	size := cacheSize(tx)
	entries, index := tx.Bucket(entriesBucket), tx.Bucket(indexBucket)
	c := entries.Cursor()
	k, v := c.First()
	for ; k != nil && size > limit; k, v = c.First() {
		size -= entryCost(v)
		if len(v) >= chainhash.HashSize {
			// The block's line in the index, if it still leads here.
			if bytes.Equal(index.Get(v[:chainhash.HashSize]), k) {
				if err := index.Delete(v[:chainhash.HashSize]); err != nil {
					return err
				}
			}
		}
		if err := c.Delete(); err != nil {
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
// transaction, skipping those already there or alone larger than the
// limit, and evicts the oldest entries to stay within the limit.
func (fc *filterCache) put(blockHashes []chainhash.Hash, filters [][]byte) error {
	return fc.update(func(tx *bolt.Tx) error {
		entries, index := tx.Bucket(entriesBucket), tx.Bucket(indexBucket)
		// Keys only grow: fill each page.
		entries.FillPercent = 1
		size := cacheSize(tx)
		for i, blockHash := range blockHashes {
			cost := int64(len(filters[i])) + entryOverhead
			if cost > fc.limit || index.Get(blockHash[:]) != nil {
				continue
			}
			seq, err := entries.NextSequence()
			if err != nil {
				return err
			}
			k := seqKey(seq)
			if err := entries.Put(k, encodeEntry(blockHash, filters[i])); err != nil {
				return err
			}
			if err := index.Put(blockHash[:], k); err != nil {
				return err
			}
			size += cost
		}
		if err := setCacheSize(tx, size); err != nil {
			return err
		}
		return evict(tx, fc.limit)
	})
}

// get returns a copy of the cached filter of the block, or nil. An entry
// that is damaged, or that is not the block's, is deleted, noted and
// reported as absent.
func (fc *filterCache) get(blockHash chainhash.Hash) ([]byte, error) {
	var filter []byte
	var bad error
	err := fc.view(func(tx *bolt.Tx) error {
		k := tx.Bucket(indexBucket).Get(blockHash[:])
		if k == nil {
			return nil
		}
		v := tx.Bucket(entriesBucket).Get(k)
		if v == nil {
			bad = fmt.Errorf("%w: the index leads to entry %x, which is missing", errBadEntry, k)
			return nil
		}
		e, err := decodeEntry(v)
		switch {
		case err != nil:
			bad = err
		case e.block != blockHash:
			bad = fmt.Errorf("%w: the index leads to the entry of block %v", errBadEntry, e.block)
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

// drop deletes the entry of a block.
func (fc *filterCache) drop(blockHash chainhash.Hash) error {
	return fc.update(func(tx *bolt.Tx) error {
		entries, index := tx.Bucket(entriesBucket), tx.Bucket(indexBucket)
		k := index.Get(blockHash[:])
		if k == nil {
			return nil
		}
		if v := entries.Get(k); v != nil {
			if err := setCacheSize(tx, cacheSize(tx)-entryCost(v)); err != nil {
				return err
			}
			if err := entries.Delete(k); err != nil {
				return err
			}
		}
		return index.Delete(blockHash[:])
	})
}

// size returns the logical size of the cache and the number of filters
// it holds.
func (fc *filterCache) size() (bytes int64, filters int, err error) {
	err = fc.view(func(tx *bolt.Tx) error {
		bytes = cacheSize(tx)
		filters = tx.Bucket(indexBucket).Stats().KeyN
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
	if err := guard(db.Close); err != nil {
		return err
	}
	markClean(fc.path)
	return nil
}
