package store

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"

	"github.com/btcsuite/btcd/chaincfg/chainhash"
)

// A chunk is the filters one PutFilters call keeps (up to chunkMax
// bytes), the one value of a bucket of its own in the filter cache's
// chunks bucket (chunkOf), one record after another, each
//
//	the filter's length   4 bytes, big endian
//	the block's hash      32 bytes
//	CRC-32C               4 bytes, big endian: of the block hash, then the filter
//	the filter
//
// bbolt writes a chunk as one run of overflow pages, in one system call;
// a value per filter cost it a page, a write and a node entry each, and
// those were most of what caching a scan's filters cost.
const recordHeaderSize = 4 + chainhash.HashSize + 4

// chunkMax bounds a chunk, so that one PutFilters call never holds more
// than about twice that in memory; a smaller cache's chunks are at most a
// sixteenth of its limit, so that an eviction frees little more than it
// must. A filter larger than the bound is a chunk of its own.
func chunkMax(limit int64) int64 { return min(limit/16, 4<<20) }

// chunkSize is the size of a chunk of the first of filters and as many
// of the next ones as fit within max: what a chunk is allocated.
func chunkSize(filters [][]byte, max int64) int {
	n := int64(0)
	for i, f := range filters {
		size := int64(recordHeaderSize + len(f))
		if i > 0 && n+size > max {
			break
		}
		n += size
	}
	return int(n)
}

// errBadEntry is the reason a cache record that does not decode, whose
// checksum no longer matches or that the index locates wrongly is
// dropped.
var errBadEntry = errors.New("corrupt filter cache entry")

// cacheEntry is one decoded record.
type cacheEntry struct {
	block  chainhash.Hash
	filter []byte // aliases the chunk
}

// loc is where a record lies: its chunk's insertion sequence and its
// offset in the chunk. Stored in the index as 12 bytes, big endian.
type loc struct {
	seq uint64
	off uint32
}

// locSize is the size of a stored loc.
const locSize = 12

func (l loc) encode() []byte {
	return binary.BigEndian.AppendUint32(binary.BigEndian.AppendUint64(make([]byte, 0, locSize), l.seq), l.off)
}

func decodeLoc(b []byte) (loc, bool) {
	if len(b) != locSize {
		return loc{}, false
	}
	return loc{seq: binary.BigEndian.Uint64(b), off: binary.BigEndian.Uint32(b[8:])}, true
}

// seqKey is the key of the chunk of insertion sequence seq.
func seqKey(seq uint64) []byte { return binary.BigEndian.AppendUint64(nil, seq) }

// chunkSum is the checksum of a chunk's record.
func chunkSum(block *chainhash.Hash, filter []byte) uint32 {
	return crc32.Update(crc32.Checksum(block[:], castagnoli), castagnoli, filter)
}

// appendRecord appends the record of the filter of block to chunk.
func appendRecord(chunk []byte, block *chainhash.Hash, filter []byte) []byte {
	chunk = binary.BigEndian.AppendUint32(chunk, uint32(len(filter)))
	chunk = append(chunk, block[:]...)
	chunk = binary.BigEndian.AppendUint32(chunk, chunkSum(block, filter))
	return append(chunk, filter...)
}

// parseRecord reads the record at off in chunk, without its checksum,
// and returns it and the offset of the next record.
func parseRecord(chunk []byte, off uint32) (cacheEntry, uint32, error) {
	rest := uint64(len(chunk)) - min(uint64(off), uint64(len(chunk)))
	if rest < recordHeaderSize {
		return cacheEntry{}, 0, fmt.Errorf("%w: %d bytes at offset %d, a record takes at least %d", errBadEntry, rest, off, recordHeaderSize)
	}
	r := chunk[off:]
	n := binary.BigEndian.Uint32(r)
	if uint64(n) > rest-recordHeaderSize {
		return cacheEntry{}, 0, fmt.Errorf("%w: a filter of %d bytes at offset %d passes the chunk's %d", errBadEntry, n, off, len(chunk))
	}
	e := cacheEntry{filter: r[recordHeaderSize : recordHeaderSize+n]}
	copy(e.block[:], r[4:])
	return e, off + recordHeaderSize + n, nil
}

// decodeRecord reads the record at off in chunk and checks its checksum.
func decodeRecord(chunk []byte, off uint32) (cacheEntry, error) {
	e, _, err := parseRecord(chunk, off)
	if err != nil {
		return cacheEntry{}, err
	}
	sum := binary.BigEndian.Uint32(chunk[off+4+chainhash.HashSize:])
	if got := chunkSum(&e.block, e.filter); got != sum {
		return cacheEntry{}, fmt.Errorf("%w: checksum %08x, recorded %08x", errBadEntry, got, sum)
	}
	return e, nil
}
