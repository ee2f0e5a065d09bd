package store

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/btcsuite/btcd/chaincfg/chainhash"
	bolt "go.etcd.io/bbolt"
)

// Bucket and key names of the filter cache database.
var (
	filtersBucket = []byte("filters") // block hash -> entry
	orderBucket   = []byte("order")   // insertion sequence (8 bytes, big endian) -> block hash
	metaBucket    = []byte("meta")
	sizeKey       = []byte("size") // logical bytes held, 8 bytes big endian
)

// entryHeaderSize is the size of an entry's fixed part: its insertion
// sequence (8 bytes, big endian) and the filter's hash (32 bytes).
const entryHeaderSize = 8 + chainhash.HashSize

// entryOverhead is what an entry costs besides its filter bytes: its key,
// its fixed part and its line in the order bucket.
const entryOverhead = chainhash.HashSize + entryHeaderSize + 8 + chainhash.HashSize

// errBadEntry is the reason a cache entry that does not decode or whose
// filter no longer hashes to the recorded hash is dropped.
var errBadEntry = errors.New("corrupt filter cache entry")

// cacheEntry is one decoded filter cache value.
type cacheEntry struct {
	seq        uint64
	filterHash chainhash.Hash
	filter     []byte // aliases the encoded value
}

// encodeEntry returns the stored form of a filter inserted as seq.
func encodeEntry(seq uint64, filter []byte) []byte {
	v := make([]byte, entryHeaderSize+len(filter))
	binary.BigEndian.PutUint64(v, seq)
	h := chainhash.DoubleHashH(filter)
	copy(v[8:], h[:])
	copy(v[entryHeaderSize:], filter)
	return v
}

// decodeEntry decodes a stored filter cache value and checks that its
// filter still hashes to the hash recorded with it.
func decodeEntry(v []byte) (cacheEntry, error) {
	if len(v) < entryHeaderSize {
		return cacheEntry{}, fmt.Errorf("%w: %d bytes, at least %d expected", errBadEntry, len(v), entryHeaderSize)
	}
	e := cacheEntry{seq: binary.BigEndian.Uint64(v), filter: v[entryHeaderSize:]}
	copy(e.filterHash[:], v[8:entryHeaderSize])
	if got := chainhash.DoubleHashH(e.filter); got != e.filterHash {
		return cacheEntry{}, fmt.Errorf("%w: filter hashes to %v, recorded %v", errBadEntry, got, e.filterHash)
	}
	return e, nil
}

// filterCache keeps verified filters by block hash in a bbolt database,
// evicting the oldest inserted first once the logical size (filter bytes
// plus entryOverhead per entry) passes the limit.
type filterCache struct {
	db    *bolt.DB
	path  string
	limit int64
}

// openFilterCache opens or creates the cache database at path. A database
// that bbolt cannot open is set aside (renamed with a .corrupt suffix)
// and a new one started: it is only a cache. The second result says why,
// if so.
func openFilterCache(path string, limit int64, noSync bool) (*filterCache, error, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, nil, err
	}
	opts := &bolt.Options{Timeout: time.Second, NoSync: noSync}
	db, openErr := bolt.Open(path, 0o644, opts)
	var reset error
	if openErr != nil {
		if errors.Is(openErr, bolt.ErrTimeout) {
			return nil, nil, fmt.Errorf("filter cache %s is in use: %w", path, openErr)
		}
		reset = fmt.Errorf("filter cache could not be opened and was set aside: %w", openErr)
		if err := os.Rename(path, path+".corrupt"); err != nil {
			return nil, nil, fmt.Errorf("setting aside the filter cache: %w", err)
		}
		if db, openErr = bolt.Open(path, 0o644, opts); openErr != nil {
			return nil, nil, openErr
		}
	}
	fc := &filterCache{db: db, path: path, limit: limit}
	err := fc.update(func(tx *bolt.Tx) error {
		for _, name := range [][]byte{filtersBucket, orderBucket, metaBucket} {
			if _, err := tx.CreateBucketIfNotExists(name); err != nil {
				return err
			}
		}
		return evict(tx, limit)
	})
	if err != nil {
		db.Close()
		return nil, nil, fmt.Errorf("filter cache: %w", err)
	}
	return fc, reset, nil
}

// update runs fn in a read-write transaction, turning a panic of bbolt
// on a damaged page into an error.
func (fc *filterCache) update(fn func(*bolt.Tx) error) (err error) {
	defer recoverCorrupt(&err)
	return fc.db.Update(fn)
}

// view runs fn in a read-only transaction, as update does.
func (fc *filterCache) view(fn func(*bolt.Tx) error) (err error) {
	defer recoverCorrupt(&err)
	return fc.db.View(fn)
}

func recoverCorrupt(err *error) {
	if r := recover(); r != nil {
		*err = fmt.Errorf("filter cache damaged: %v", r)
	}
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

// evict deletes the oldest entries until the size is at most limit.
func evict(tx *bolt.Tx, limit int64) error {
	size := cacheSize(tx)
	filters, order := tx.Bucket(filtersBucket), tx.Bucket(orderBucket)
	c := order.Cursor()
	k, blockHash := c.First()
	for ; k != nil && size > limit; k, blockHash = c.First() {
		if v := filters.Get(blockHash); v != nil {
			size -= int64(max(len(v)-entryHeaderSize, 0)) + entryOverhead
			if err := filters.Delete(blockHash); err != nil {
				return err
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
		bucket, order := tx.Bucket(filtersBucket), tx.Bucket(orderBucket)
		size := cacheSize(tx)
		for i, blockHash := range blockHashes {
			cost := int64(len(filters[i])) + entryOverhead
			if cost > fc.limit || bucket.Get(blockHash[:]) != nil {
				continue
			}
			seq, err := order.NextSequence()
			if err != nil {
				return err
			}
			var k [8]byte
			binary.BigEndian.PutUint64(k[:], seq)
			if err := order.Put(k[:], blockHash[:]); err != nil {
				return err
			}
			if err := bucket.Put(blockHash[:], encodeEntry(seq, filters[i])); err != nil {
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

// get returns a copy of the cached filter of the block. An entry that is
// damaged is deleted and reported as absent, with the reason as dropped.
func (fc *filterCache) get(blockHash chainhash.Hash) (filter []byte, dropped error, err error) {
	var bad bool
	err = fc.view(func(tx *bolt.Tx) error {
		v := tx.Bucket(filtersBucket).Get(blockHash[:])
		if v == nil {
			return nil
		}
		e, derr := decodeEntry(v)
		if derr != nil {
			bad, dropped = true, fmt.Errorf("block %v: %w", blockHash, derr)
			return nil
		}
		filter = append([]byte{}, e.filter...)
		return nil
	})
	if err != nil || !bad {
		return filter, nil, err
	}
	return nil, dropped, fc.drop(blockHash)
}

// drop deletes the entry of a block.
func (fc *filterCache) drop(blockHash chainhash.Hash) error {
	return fc.update(func(tx *bolt.Tx) error {
		filters, order := tx.Bucket(filtersBucket), tx.Bucket(orderBucket)
		v := filters.Get(blockHash[:])
		if v == nil {
			return nil
		}
		size := cacheSize(tx) - (int64(max(len(v)-entryHeaderSize, 0)) + entryOverhead)
		if len(v) >= 8 {
			if err := order.Delete(v[:8]); err != nil {
				return err
			}
		}
		if err := filters.Delete(blockHash[:]); err != nil {
			return err
		}
		return setCacheSize(tx, size)
	})
}

// size returns the logical size of the cache and the number of filters
// it holds.
func (fc *filterCache) size() (bytes int64, filters int, err error) {
	err = fc.view(func(tx *bolt.Tx) error {
		bytes = cacheSize(tx)
		filters = tx.Bucket(filtersBucket).Stats().KeyN
		return nil
	})
	return bytes, filters, err
}

func (fc *filterCache) close() error { return fc.db.Close() }
