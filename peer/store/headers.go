package store

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"time"

	"github.com/btcsuite/btcd/chaincfg"
	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/btcsuite/btcd/wire"
	"github.com/spvfilter/spvfilter/peer/chain"
)

// HeaderSize is the size of a block header record: the header as it is
// serialized on the wire and hashed.
const HeaderSize = 80

// headerCacheSlots is the number of headers kept in memory, indexed by
// height modulo the count: enough for a difficulty period (2016 blocks)
// and the median-time window at the tip, about 0.5 MB.
const headerCacheSlots = 4096

// ErrBadHeader is returned by AppendHeaders for a header that does not
// link to the stored tip or fails its own proof of work, and wrapped in
// the reason a stored header was cut when the store was opened.
var ErrBadHeader = errors.New("store: header does not link or has no proof of work")

// encodeHeader writes h as its 80 serialized bytes into rec.
func encodeHeader(rec []byte, h *wire.BlockHeader) {
	binary.LittleEndian.PutUint32(rec[0:], uint32(h.Version))
	copy(rec[4:36], h.PrevBlock[:])
	copy(rec[36:68], h.MerkleRoot[:])
	binary.LittleEndian.PutUint32(rec[68:], uint32(h.Timestamp.Unix()))
	binary.LittleEndian.PutUint32(rec[72:], h.Bits)
	binary.LittleEndian.PutUint32(rec[76:], h.Nonce)
}

// decodeHeader reads a header from its 80 serialized bytes.
func decodeHeader(rec []byte) wire.BlockHeader {
	var h wire.BlockHeader
	h.Version = int32(binary.LittleEndian.Uint32(rec[0:]))
	copy(h.PrevBlock[:], rec[4:36])
	copy(h.MerkleRoot[:], rec[36:68])
	h.Timestamp = time.Unix(int64(binary.LittleEndian.Uint32(rec[68:])), 0)
	h.Bits = binary.LittleEndian.Uint32(rec[72:])
	h.Nonce = binary.LittleEndian.Uint32(rec[76:])
	return h
}

// cachedHeader is one slot of the header cache.
type cachedHeader struct {
	height int32 // -1 when empty
	rec    [HeaderSize]byte
	hash   chainhash.Hash
}

// headerLog is the block header file with what it needs in memory: four
// bytes of each block's hash for HeightOf, the tip, and a small cache.
type headerLog struct {
	log     *recordLog
	params  *chaincfg.Params
	pow     *chain.PowCheck
	prefix  []uint32 // first four bytes of the hash of each height
	tipHash chainhash.Hash
	cache   []cachedHeader
}

// maxPrefixHint bounds the heights the header file's size reserves room
// for before its records are read (4 MiB of prefixes, a million
// heights): a file far larger, as a sparse one, costs no more until its
// records pass.
const maxPrefixHint = 1 << 20

// openHeaderLog opens the header file at path. Its first record must be
// the genesis block of params and each later one must link to the one
// before and meet its own proof of work; the file is cut at the first
// that does not. An empty file gets the genesis header.
func openHeaderLog(path string, params *chaincfg.Params, sync bool, sizeHint int64) (*headerLog, error, error) {
	hl := &headerLog{
		params: params,
		pow:    chain.NewPowCheck(params),
		prefix: make([]uint32, 0, min(sizeHint/HeaderSize+1, maxPrefixHint)),
		cache:  make([]cachedHeader, headerCacheSlots),
	}
	for i := range hl.cache {
		hl.cache[i].height = -1
	}
	var genesis [HeaderSize]byte
	encodeHeader(genesis[:], &params.GenesisBlock.Header)
	var prev chainhash.Hash
	check := func(i int64, rec []byte) error {
		if i == 0 {
			if !bytes.Equal(rec, genesis[:]) {
				return fmt.Errorf("%w: height 0 is not the %s genesis block", ErrBadHeader, params.Name)
			}
		} else if !bytes.Equal(rec[4:36], prev[:]) {
			return fmt.Errorf("%w: height %d does not link to its parent", ErrBadHeader, i)
		}
		hash := chainhash.DoubleHashH(rec)
		if i > 0 {
			if err := hl.pow.Check(&hash, binary.LittleEndian.Uint32(rec[72:])); err != nil {
				return fmt.Errorf("%w: height %d: %v", ErrBadHeader, i, err)
			}
		}
		hl.prefix = append(hl.prefix, binary.LittleEndian.Uint32(hash[:4]))
		hl.remember(int32(i), rec, hash)
		prev = hash
		return nil
	}
	log, cut, err := openRecordLog(path, HeaderSize, sync, check)
	if err != nil {
		return nil, nil, err
	}
	hl.log, hl.tipHash = log, prev
	if log.len() == 0 {
		if err := hl.append([]wire.BlockHeader{params.GenesisBlock.Header}); err != nil {
			log.close()
			return nil, nil, err
		}
	}
	return hl, cut, nil
}

// height returns the height of the stored tip.
func (hl *headerLog) height() int32 { return int32(hl.log.len()) - 1 }

// remember puts a header into the cache.
func (hl *headerLog) remember(height int32, rec []byte, hash chainhash.Hash) {
	slot := &hl.cache[height%headerCacheSlots]
	slot.height, slot.hash = height, hash
	copy(slot.rec[:], rec)
}

// lookup returns the cache slot of height, reading it from the file if the
// cache does not hold it.
func (hl *headerLog) lookup(height int32) (*cachedHeader, error) {
	if height < 0 || height > hl.height() {
		return nil, fmt.Errorf("store: height %d outside the stored chain 0..%d", height, hl.height())
	}
	slot := &hl.cache[height%headerCacheSlots]
	if slot.height == height {
		return slot, nil
	}
	var rec [HeaderSize]byte
	if err := hl.log.readAt(rec[:], int64(height)); err != nil {
		return nil, storeErr(err)
	}
	hl.remember(height, rec[:], chainhash.DoubleHashH(rec[:]))
	return slot, nil
}

// heightOf returns the height of the block with the given hash, searching
// down from the tip, where most lookups end.
func (hl *headerLog) heightOf(hash chainhash.Hash) (int32, bool) {
	p := binary.LittleEndian.Uint32(hash[:4])
	for h := hl.height(); h >= 0; h-- {
		if hl.prefix[h] != p {
			continue
		}
		if slot, err := hl.lookup(h); err == nil && slot.hash == hash {
			return h, true
		}
	}
	return 0, false
}

// append checks headers against the tip and their own proof of work and
// appends them.
func (hl *headerLog) append(headers []wire.BlockHeader) error {
	recs := make([]byte, len(headers)*HeaderSize)
	hashes := make([]chainhash.Hash, len(headers))
	prev := hl.tipHash
	for i := range headers {
		h := &headers[i]
		height := hl.height() + 1 + int32(i)
		hashes[i] = h.BlockHash()
		if height > 0 {
			if h.PrevBlock != prev {
				return fmt.Errorf("%w: header %v at height %d does not link to %v", ErrBadHeader, hashes[i], height, prev)
			}
			if err := hl.pow.Check(&hashes[i], h.Bits); err != nil {
				return fmt.Errorf("%w: header at height %d: %v", ErrBadHeader, height, err)
			}
		}
		encodeHeader(recs[i*HeaderSize:], h)
		prev = hashes[i]
	}
	start := hl.height() + 1
	if err := hl.log.append(recs); err != nil {
		return storeErr(err)
	}
	for i, hash := range hashes {
		hl.prefix = append(hl.prefix, binary.LittleEndian.Uint32(hash[:4]))
		hl.remember(start+int32(i), recs[i*HeaderSize:(i+1)*HeaderSize], hash)
	}
	hl.tipHash = prev
	return nil
}

// truncate keeps the headers 0..height.
func (hl *headerLog) truncate(height int32) error {
	if err := hl.log.truncate(int64(height) + 1); err != nil {
		return storeErr(err)
	}
	hl.prefix = hl.prefix[:height+1]
	for i := range hl.cache {
		if hl.cache[i].height > height {
			hl.cache[i].height = -1
		}
	}
	slot, err := hl.lookup(height)
	if err != nil {
		return err
	}
	hl.tipHash = slot.hash
	return nil
}
