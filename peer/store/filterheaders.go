package store

import (
	"errors"
	"fmt"

	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/spvfilter/spvfilter/gcs"
)

// FilterHeaderSize is the size of a filter header record: a BIP 157 basic
// filter header in the byte order of wire.MsgCFHeaders.
const FilterHeaderSize = chainhash.HashSize

// KeepFilterHeaders is how many filter headers below the tip BIP 157 asks
// a client to keep, to compare with a new peer's: LastFilterHeaders
// returns at most this many when asked for more.
const KeepFilterHeaders = 100

// ErrFilterMismatch is returned by CheckFilter for a filter that does not
// hash to the stored filter header of its block.
var ErrFilterMismatch = errors.New("store: filter does not match the stored filter header")

// FilterHeaderTip returns the height of the highest stored filter header,
// or -1 when none is stored. It is never above Height.
func (s *Store) FilterHeaderTip() int32 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return int32(s.filterHeaders.len()) - 1
}

// FilterHeaders returns the stored basic filter headers of the blocks
// from..to.
func (s *Store) FilterHeaders(from, to int32) ([]chainhash.Hash, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.filterHeadersLocked(from, to)
}

func (s *Store) filterHeadersLocked(from, to int32) ([]chainhash.Hash, error) {
	if from < 0 || to < from || int64(to) >= s.filterHeaders.len() {
		return nil, fmt.Errorf("store: filter headers %d..%d outside the stored 0..%d", from, to, s.filterHeaders.len()-1)
	}
	buf := make([]byte, int(to-from+1)*FilterHeaderSize)
	if err := s.filterHeaders.readAt(buf, int64(from)); err != nil {
		return nil, storeErr(err)
	}
	out := make([]chainhash.Hash, to-from+1)
	for i := range out {
		copy(out[i][:], buf[i*FilterHeaderSize:])
	}
	return out, nil
}

// LastFilterHeaders returns the highest min(n, KeepFilterHeaders) stored
// filter headers and the height of the first, so that a client can
// compare them with what a new peer serves after a restart (BIP 157: a
// client SHOULD keep the last 100). It returns no headers when none are
// stored.
func (s *Store) LastFilterHeaders(n int) (start int32, headers []chainhash.Hash, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	tip := int32(s.filterHeaders.len()) - 1
	n = min(n, KeepFilterHeaders, int(tip)+1)
	if n <= 0 {
		return tip + 1, nil, nil
	}
	start = tip - int32(n) + 1
	headers, err = s.filterHeadersLocked(start, tip)
	return start, headers, err
}

// AppendFilterHeaders stores the verified basic filter headers of the
// blocks start, start+1, ...: start must be FilterHeaderTip()+1 and the
// last of them at most Height(). Filter headers are bound to the stored
// block headers by height: Truncate cuts both.
func (s *Store) AppendFilterHeaders(start int32, headers []chainhash.Hash) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.appendFilterHeadersLocked(start, headers)
}

// AppendFilterHashes stores the filter headers that commit to the
// verified basic filter hashes of the blocks start, start+1, ..., each
// chained on the one before (the stored one at start-1, zero at the
// genesis block), as AppendFilterHeaders does.
func (s *Store) AppendFilterHashes(start int32, filterHashes []chainhash.Hash) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	var prev chainhash.Hash
	if start > 0 && int64(start) <= s.filterHeaders.len() {
		hs, err := s.filterHeadersLocked(start-1, start-1)
		if err != nil {
			return err
		}
		prev = hs[0]
	}
	headers := make([]chainhash.Hash, len(filterHashes))
	for i := range filterHashes {
		headers[i] = gcs.MakeHeader(&filterHashes[i], &prev)
		prev = headers[i]
	}
	return s.appendFilterHeadersLocked(start, headers)
}

func (s *Store) appendFilterHeadersLocked(start int32, headers []chainhash.Hash) error {
	if s.closed {
		return ErrClosed
	}
	tip := int32(s.filterHeaders.len()) - 1
	if start != tip+1 {
		return fmt.Errorf("store: filter headers from height %d do not follow the stored tip %d", start, tip)
	}
	if last := start + int32(len(headers)) - 1; last > s.headers.height() {
		return fmt.Errorf("store: filter header at height %d above the stored block headers' tip %d", last, s.headers.height())
	}
	buf := make([]byte, 0, len(headers)*FilterHeaderSize)
	for i := range headers {
		buf = append(buf, headers[i][:]...)
	}
	if err := s.filterHeaders.append(buf); err != nil {
		return storeErr(err)
	}
	return nil
}

// CheckFilter checks a serialized basic filter for the block at height
// against the stored filter headers: it must hash, after the filter
// header at height-1 (zero below height 1), to the one at height. The
// error wraps ErrFilterMismatch when it does not.
func (s *Store) CheckFilter(height int32, filter []byte) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	var prev chainhash.Hash
	from := max(height-1, 0)
	hs, err := s.filterHeadersLocked(from, height)
	if err != nil {
		return err
	}
	if height > 0 {
		prev = hs[0]
	}
	filterHash := chainhash.DoubleHashH(filter)
	if got := gcs.MakeHeader(&filterHash, &prev); got != hs[len(hs)-1] {
		return fmt.Errorf("%w: height %d commits to %v, the filter gives %v", ErrFilterMismatch, height, hs[len(hs)-1], got)
	}
	return nil
}

// TruncateFilterHeaders keeps the filter headers up to height (none for
// -1) and drops those above, leaving the block headers as they are: for a
// client that no longer trusts the ones above, to verify them again.
func (s *Store) TruncateFilterHeaders(height int32) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return ErrClosed
	}
	if height < -1 {
		return fmt.Errorf("store: cannot truncate filter headers to height %d", height)
	}
	if n := int64(height) + 1; s.filterHeaders.len() > n {
		if err := s.filterHeaders.truncate(n); err != nil {
			return storeErr(err)
		}
	}
	return nil
}
