package store

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/btcsuite/btcd/chaincfg"
	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/btcsuite/btcd/wire"
	"github.com/spvfilter/spvfilter/peer/chain"
	"github.com/spvfilter/spvfilter/peer/internal/diskfile"
)

// File names inside a store's directory.
const (
	HeadersFile       = "headers.bin"
	FilterHeadersFile = "filterheaders.bin"
	FiltersDir        = "filters"
	filterCacheFile   = "cache.db"
	metaFile          = "meta"
	lockName          = "LOCK"
	// maxMetaSlack is how many bytes past this network's identity an
	// identity file may hold and still be read whole, to be quoted in
	// the error (another network's, whose name is longer).
	maxMetaSlack = 256
)

// DefaultFilterCacheBytes is the filter cache's size cap Open uses:
// 256 MiB, the basic filters of roughly the last 12,000 mainnet blocks.
const DefaultFilterCacheBytes = 256 << 20

// Errors of Open, Chain and SaveChain; test with errors.Is.
var (
	// ErrLocked: another process (or another Store in this one) has the
	// store open; the error is a *LockedError naming the process.
	ErrLocked = errors.New("store: in use by another process")
	// ErrWrongNetwork: the directory holds another network's store, or
	// a store of another format.
	ErrWrongNetwork = errors.New("store: directory belongs to another network or format")
	// ErrClosed: the store was closed.
	ErrClosed = errors.New("store: closed")
	// ErrChanged: the store's headers changed while SaveChain read its
	// source.
	ErrChanged = errors.New("store: headers changed during SaveChain")
)

// Options tune a store. The zero value keeps no filters and syncs every
// write; Open uses DefaultOptions.
type Options struct {
	// FilterCacheBytes caps the filter cache: the filter bytes plus a
	// fixed overhead of 84 bytes per filter. Zero keeps no
	// filters (and leaves an existing cache on disk untouched).
	FilterCacheBytes int64
	// NoSync skips fsync: for tests, benchmarks and disposable chains. A
	// process crash (kill -9) loses nothing the kernel has been given
	// either way. After a power failure or kernel crash, recent writes
	// may be lost (the next Open detects and cuts damaged records) or
	// reach the disk out of order: a truncation of the filter headers
	// may be lost while the block headers that replaced the
	// disconnected ones are kept, so filter headers may then belong to
	// blocks no longer in the chain. With syncing on, every truncation is
	// on disk before anything is written above it. The filter cache is
	// never synced (see the package documentation).
	NoSync bool
}

// DefaultOptions returns the options Open uses.
func DefaultOptions() Options { return Options{FilterCacheBytes: DefaultFilterCacheBytes} }

// HeaderSource is a chain of headers by height from the genesis block, as
// *chain.Chain is.
type HeaderSource interface {
	Height() int32
	Hash(height int32) chainhash.Hash
	Header(height int32) wire.BlockHeader
}

// Store keeps a network's verified block headers, basic filter headers
// and filters in a directory. Its methods are safe for concurrent use.
type Store struct {
	dir    string
	params *chaincfg.Params
	lock   *os.File

	now func() time.Time

	mu            sync.Mutex // guards all below but filters, which guards itself
	headers       *headerLog
	filterHeaders *recordLog
	recovered     []string
	closed        bool

	filters *filterCache // nil without a filter cache
}

// Open opens the store of params' network in dataDir (the directory
// dataDir/<network name>, created if need be) with DefaultOptions.
func Open(dataDir string, params *chaincfg.Params) (*Store, error) {
	return OpenWith(dataDir, params, DefaultOptions())
}

// OpenWith opens the store of params' network in dataDir with opts. It
// takes an exclusive lock on the store (ErrLocked if another has it),
// checks every stored record against its checksum, each block header's
// link to its parent and its proof of work, and cuts each file after the
// last record that passes; it checks the filter cache, and sets it aside
// if it fails (none fails Open: see the package documentation). Recovered says what was cut or set aside.
func OpenWith(dataDir string, params *chaincfg.Params, opts Options) (*Store, error) {
	return openAt(dataDir, params, opts, time.Now)
}

// openAt is OpenWith with a clock.
func openAt(dataDir string, params *chaincfg.Params, opts Options, now func() time.Time) (*Store, error) {
	dir := filepath.Join(dataDir, params.Name)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, storeErr(err)
	}
	lock, err := lockFile(filepath.Join(dir, lockName))
	if err != nil {
		return nil, storeErr(err)
	}
	s := &Store{dir: dir, params: params, lock: lock, now: now}
	if err := s.open(opts); err != nil {
		s.closeFiles()
		return nil, err
	}
	return s, nil
}

// open opens the files of the store, whose lock s holds.
func (s *Store) open(opts Options) error {
	dir, params := s.dir, s.params
	if err := checkMeta(dir, params); err != nil {
		return err
	}
	sync := !opts.NoSync
	headersPath := filepath.Join(dir, HeadersFile)
	var sizeHint int64
	if fi, err := os.Stat(headersPath); err == nil {
		sizeHint = fi.Size()
	}
	var cut, err error
	s.headers, cut, err = openHeaderLog(headersPath, params, sync, sizeHint)
	if err != nil {
		return storeErr(err)
	}
	if cut != nil {
		s.note("%s: kept headers 0..%d, cut the rest: %v", HeadersFile, s.headers.height(), cut)
	}
	s.filterHeaders, cut, err = openRecordLog(filepath.Join(dir, FilterHeadersFile), FilterHeaderSize, sync, nil)
	if err != nil {
		return storeErr(err)
	}
	if cut != nil {
		s.note("%s: kept filter headers 0..%d, cut the rest: %v", FilterHeadersFile, s.filterHeaders.len()-1, cut)
	}
	if n := int64(s.headers.height()) + 1; s.filterHeaders.len() > n {
		s.note("%s: cut the filter headers above the block headers' tip %d", FilterHeadersFile, n-1)
		if err := s.filterHeaders.truncate(n); err != nil {
			return storeErr(err)
		}
	}
	if opts.FilterCacheBytes > 0 {
		s.filters = openFilterCache(filepath.Join(dir, FiltersDir, filterCacheFile), opts.FilterCacheBytes, s.now)
	}
	if sync {
		// Files created just now must survive a power failure too.
		if err := diskfile.SyncDir(dir); err != nil {
			return storeErr(err)
		}
	}
	return nil
}

// checkMeta checks the store's identity file, writing it for a new store.
func checkMeta(dir string, params *chaincfg.Params) error {
	want, found, err := compareMeta(dir, params)
	if err != nil || found {
		return err
	}
	if err := diskfile.WriteAtomic(filepath.Join(dir, metaFile), want, true); err != nil {
		return storeErr(err)
	}
	return nil
}

// compareMeta checks the store's identity file, if found, against want,
// what it says for params' network.
func compareMeta(dir string, params *chaincfg.Params) (want []byte, found bool, err error) {
	want = fmt.Appendf(nil, "spvfilter store 1\nnetwork %s %08x\ngenesis %v\n", params.Name, uint32(params.Net), params.GenesisHash)
	path := filepath.Join(dir, metaFile)
	// Read within a bound, and only a regular file: a pipe would block
	// Open, a large file cost its size in memory.
	got, err := diskfile.ReadLimited(path, int64(len(want))+maxMetaSlack)
	switch {
	case errors.Is(err, diskfile.ErrTooLarge) || errors.Is(err, diskfile.ErrNotRegular):
		return want, true, storeErr(fmt.Errorf("%s: %w", path, err))
	case err == nil:
		if !bytes.Equal(got, want) {
			return want, true, fmt.Errorf("%w: %s says %q, want %q", ErrWrongNetwork, path, got, want)
		}
		return want, true, nil
	case !errors.Is(err, os.ErrNotExist):
		return want, false, storeErr(err)
	}
	return want, false, nil
}

func (s *Store) note(format string, args ...any) {
	s.recovered = append(s.recovered, fmt.Sprintf(format, args...))
}

// Dir returns the store's directory: the data directory joined with the
// network's name.
func (s *Store) Dir() string { return s.dir }

// Recovered lists what the store found damaged and dropped since it was
// opened: records cut when it opened, filter cache entries that no longer
// matched their hash, a filter cache set aside because it failed its
// checks, and a filter cache turned off.
// Each is one line, fit for a warning.
func (s *Store) Recovered() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.filters != nil {
		s.recovered = append(s.recovered, s.filters.takeNotes()...)
	}
	return append([]string(nil), s.recovered...)
}

// Close flushes and closes the files and releases the lock. Closing twice
// is harmless.
func (s *Store) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil
	}
	s.closed = true
	return s.closeFiles()
}

func (s *Store) closeFiles() error {
	var errs []error
	if s.headers != nil {
		errs = append(errs, s.headers.log.close())
	}
	if s.filterHeaders != nil {
		errs = append(errs, s.filterHeaders.close())
	}
	if s.filters != nil {
		errs = append(errs, s.filters.close())
	}
	// Closing the lock file releases the lock.
	errs = append(errs, s.lock.Close())
	return errors.Join(errs...)
}

// Height returns the height of the stored tip: 0 for a new store, which
// holds the genesis block.
func (s *Store) Height() int32 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.headers.height()
}

// Header returns the stored header at height.
func (s *Store) Header(height int32) (wire.BlockHeader, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	slot, err := s.headers.lookup(height)
	if err != nil {
		return wire.BlockHeader{}, err
	}
	return decodeHeader(slot.rec[:]), nil
}

// Hash returns the hash of the stored block at height.
func (s *Store) Hash(height int32) (chainhash.Hash, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	slot, err := s.headers.lookup(height)
	if err != nil {
		return chainhash.Hash{}, err
	}
	return slot.hash, nil
}

// HeightOf returns the height of the stored block with the given hash.
// It searches down from the tip, through four bytes per block in memory,
// so a block near the tip is found at once and any other in about a
// millisecond on a mainnet-sized chain.
func (s *Store) HeightOf(hash chainhash.Hash) (int32, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.headers.heightOf(hash)
}

// ReadHeaders returns the stored headers from..to, read in one call.
func (s *Store) ReadHeaders(from, to int32) ([]wire.BlockHeader, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if from < 0 || to < from || to > s.headers.height() {
		return nil, fmt.Errorf("store: headers %d..%d outside the stored chain 0..%d", from, to, s.headers.height())
	}
	buf := make([]byte, int(to-from+1)*HeaderSize)
	if err := s.headers.log.readAt(buf, int64(from)); err != nil {
		return nil, storeErr(err)
	}
	out := make([]wire.BlockHeader, to-from+1)
	for i := range out {
		out[i] = decodeHeader(buf[i*HeaderSize:])
	}
	return out, nil
}

// AppendHeaders stores headers above the tip. The first must link to the
// tip and each to the one before, and each must meet the target of its
// own bits; the store checks no other rule (that is the chain's job), and
// the error wraps ErrBadHeader for one that fails. With syncing on (the
// default) the headers are on stable storage when it returns.
func (s *Store) AppendHeaders(headers []wire.BlockHeader) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return ErrClosed
	}
	return s.headers.append(headers)
}

// Truncate keeps the headers 0..height and the filter headers up to
// height, as a reorganization that forks at height demands.
func (s *Store) Truncate(height int32) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.truncateLocked(height)
}

func (s *Store) truncateLocked(height int32) error {
	if s.closed {
		return ErrClosed
	}
	if height < 0 || height > s.headers.height() {
		return fmt.Errorf("store: cannot truncate to height %d of 0..%d", height, s.headers.height())
	}
	// Filter headers first: a crash between the two leaves filter
	// headers below the block headers' tip, never above it.
	if n := int64(height) + 1; s.filterHeaders.len() > n {
		if err := s.filterHeaders.truncate(n); err != nil {
			return storeErr(err)
		}
	}
	return s.headers.truncate(height)
}

// saveBatch is how many headers SaveChain writes (and syncs) at a time.
const saveBatch = 2000

// SaveChain makes the stored headers those of src: it finds the highest
// height where both hold the same block, truncates above it (and the
// filter headers with it) and appends src's headers above. It returns
// that height. Call it after each change of a chain in memory; a crash in
// the middle leaves a valid prefix of src or of the old chain. For the
// chain Chain returns, which writes its changes itself, it writes
// nothing. src is read without the store's lock held, since it may read
// from the store; the store must not change meanwhile (ErrChanged).
func (s *Store) SaveChain(src HeaderSource) (fork int32, err error) {
	tip := s.Height()
	fork = min(tip, src.Height())
	for ; fork >= 0; fork-- {
		stored, err := s.Hash(fork)
		if err != nil {
			return 0, err
		}
		if stored == src.Hash(fork) {
			break
		}
	}
	if fork < 0 {
		return 0, fmt.Errorf("%w: the chain's genesis block is not the store's", ErrWrongNetwork)
	}
	if fork < tip {
		if err := s.truncateAt(tip, fork); err != nil {
			return fork, err
		}
	}
	batch := make([]wire.BlockHeader, 0, saveBatch)
	for h := fork + 1; h <= src.Height(); h++ {
		batch = append(batch, src.Header(h))
		if len(batch) == saveBatch || h == src.Height() {
			if err := s.appendAt(h+1-int32(len(batch)), batch); err != nil {
				return fork, err
			}
			batch = batch[:0]
		}
	}
	return fork, nil
}

// truncateAt truncates to height if the tip is still at tip.
func (s *Store) truncateAt(tip, height int32) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.headers.height() != tip {
		return fmt.Errorf("%w: tip at %d, was %d", ErrChanged, s.headers.height(), tip)
	}
	return s.truncateLocked(height)
}

// appendAt appends headers from height start if the tip is still just
// below it.
func (s *Store) appendAt(start int32, headers []wire.BlockHeader) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return ErrClosed
	}
	if s.headers.height() != start-1 {
		return fmt.Errorf("%w: tip at %d, was %d", ErrChanged, s.headers.height(), start-1)
	}
	return s.headers.append(headers)
}

// Chain returns the stored headers as a chain backed by the store
// (chain.Backed): every stored header is checked against the chain's
// rules, and the chain keeps only its last few thousand headers in
// memory, reading the others from the store, and writes each change
// Extend makes to the store before Extend returns. If a stored header
// fails the chain's rules, the store is cut below it, Recovered says so,
// and the chain holds the headers before it.
//
// While the chain is in use, change the store's headers only through it:
// AppendHeaders, Truncate and SaveChain of another chain would leave it
// behind the store, which its Extend then refuses (chain.ErrStorage).
// SaveChain of the chain itself writes nothing.
func (s *Store) Chain() (*chain.Chain, error) {
	if s.isClosed() {
		return nil, ErrClosed
	}
	c, err := chain.Backed(s.params, s)
	switch {
	case err == nil:
		return c, nil
	case c == nil:
		return nil, storeErr(err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.note("%s: kept headers 0..%d, cut the rest: %v", HeadersFile, c.Height(), err)
	return c, nil
}

func (s *Store) isClosed() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.closed
}

// PutFilter caches a basic filter of the block, which the caller has
// verified against its filter header, as PutFilters does.
func (s *Store) PutFilter(blockHash chainhash.Hash, filter []byte) error {
	return s.PutFilters([]chainhash.Hash{blockHash}, [][]byte{filter})
}

// PutFilters caches filters[i] as the basic filter of blockHashes[i], all
// in one transaction (one sync for the batch: put a scan's batch at
// once). Without a filter cache it does nothing; filters already cached,
// or larger than the whole cache, are skipped. Once the cache is over
// its cap, the filters cached first are evicted first. If the cache's
// file turns out damaged, the error wraps ErrFilterCacheDamaged and the
// cache is off from then on.
func (s *Store) PutFilters(blockHashes []chainhash.Hash, filters [][]byte) error {
	if len(blockHashes) != len(filters) {
		return fmt.Errorf("store: %d block hashes for %d filters", len(blockHashes), len(filters))
	}
	if s.filters == nil {
		return nil
	}
	return cacheError(s.filters.put(blockHashes, filters))
}

// cacheError returns an error of the filter cache for a caller: the
// store's errors as they are, others wrapped.
func cacheError(err error) error {
	if err == nil || errors.Is(err, ErrClosed) || errors.Is(err, ErrFilterCacheDamaged) {
		return err
	}
	return fmt.Errorf("store: filter cache: %w", err)
}

// Filter returns the cached basic filter of the block, if any. An entry
// that fails its checksum, or that the index leads to wrongly, is deleted,
// reported as absent and listed in Recovered. Check the filter against
// the block's filter header (CheckFilter) before trusting it for a scan:
// the cache knows blocks by hash only. If the cache's file turns out
// damaged, the error wraps ErrFilterCacheDamaged and the cache is off
// from then on: later calls find nothing, without an error.
func (s *Store) Filter(blockHash chainhash.Hash) ([]byte, bool, error) {
	if s.filters == nil {
		return nil, false, nil
	}
	f, err := s.filters.get(blockHash)
	if err != nil {
		return nil, false, cacheError(err)
	}
	return f, f != nil, nil
}

// DropFilter removes the filter of blockHash from the cache: one a caller
// found not to match the filter header it checked it against (a filter
// kept when that header rested on a liar), so that the right one can take
// its place.
func (s *Store) DropFilter(blockHash chainhash.Hash) error {
	if s.filters == nil {
		return nil
	}
	return cacheError(s.filters.drop(blockHash))
}

// FilterCacheSize returns the cache's logical size in bytes (what its
// cap bounds) and the number of filters it holds: zero without a cache or
// with the cache off.
func (s *Store) FilterCacheSize() (bytes int64, filters int, err error) {
	if s.filters == nil {
		return 0, 0, nil
	}
	bytes, filters, err = s.filters.size()
	if err != nil {
		return 0, 0, cacheError(err)
	}
	return bytes, filters, nil
}

// storeErr prefixes err with the package's name, once: the package's own
// errors carry it already.
func storeErr(err error) error {
	if strings.HasPrefix(err.Error(), "store: ") {
		return err
	}
	return fmt.Errorf("store: %w", err)
}
