// Package store keeps a light client's verified chain state on disk, one
// directory per network (DataDir/<network name>/):
//
//	headers.bin             block headers, 80 bytes each, record h at offset 80*h
//	headers.bin.sum         one CRC-32C per header record, 4 bytes each
//	filterheaders.bin       BIP 157 basic filter headers, 32 bytes each, by height
//	filterheaders.bin.sum   one CRC-32C per filter header record
//	filters/cache.db        verified basic filters by block hash (bbolt)
//	filters/cache.db.clean  the cache file's stamp, written when it closed cleanly
//	bans.json               banned hosts (kept by package pool)
//	peers.json              the address book (kept by package addrbook: btcd's
//	                        address manager's, or peers-local.json on regtest)
//	meta                    the store's format and network, checked on open
//	LOCK                    held with flock while a Store is open
//	*.damaged-<unix time>   a file found damaged and set aside (two kept per file)
//
// Block headers are stored as serialized on the wire, height 0 being the
// genesis block; filter headers in the byte order of wire.MsgCFHeaders.
// meta holds the format version, the network's name and magic and its
// genesis hash: a directory of another network or format is refused with
// ErrWrongNetwork. A second Open of the same directory, in this process
// or another, fails with ErrLocked (without flock, on systems other than
// Unix, only the filter cache is locked).
//
// # Crash safety
//
// The record files are append-only fixed-size records by height, the
// layout of neutrino's headerfs, and are truncated only to disconnect
// blocks above a fork. Unlike headerfs's, each record has a checksum: a
// CRC-32C (Castagnoli), stored little endian, over the record's height
// (4 bytes, little endian) and its bytes. Open reads every record, checks
// its checksum, and for block headers also that height 0 is the network's
// genesis block, the link to the parent and the proof of work against the
// header's own bits within the network's limit; each file is cut after
// the last record that passes, so a torn write (kill -9, power failure),
// a missing checksum, zeros left by a crash or a damaged byte loses that
// record and those after it, and is never trusted. Recovered lists what
// was cut, one line each, fit for a warning. Filter headers are bound to
// the block headers by height: they are never kept above the block
// headers' tip, and are truncated before the block headers are, so a
// crash between the two cannot pair a filter header with the wrong block.
// Store.Chain then checks every header again by the chain's rules
// (difficulty, checkpoints), and cuts the store below the first that fails.
//
// Writes are synced (fsync of both files of a log) before AppendHeaders,
// AppendFilterHeaders, Truncate and SaveChain return (SaveChain writes in
// batches of 2,000 headers, one sync each), unless Options.NoSync is set,
// whose documentation says what a crash may then lose. The filter cache
// is a bbolt database, which gives atomic multi-record updates (an
// insert, the evictions it causes, its place in the eviction order and
// the cache's size change together) with its own crash safety, where a
// hand-written index would have to solve that again; a scan's filters
// are best put with one PutFilters call. Its transactions are not synced:
// what a crash of the system loses is a cache's loss, a file left unsound
// fails the checks of the next open (below) and is set aside, and a
// record sound in form but not in content fails its checksum.
// The filters of one call are kept together, in chunks of up to 4 MiB
// (each the one value of a bucket of its own, so that it is written once)
// keyed by their insertion sequence, with an index by block hash beside
// them: a scan's new filters are appended at the end of the tree in one
// write, where keyed by block hash, one value each, they landed all over
// it and each batch rewrote most of its pages. The index lines of new
// chunks are kept in memory (up to 65,536) and written in one transaction
// when that many have gathered, before a filter is dropped and on Close;
// after a crash, Open finds them again in the chunks written since. Each
// filter's record also holds its block's hash and a CRC-32C of the two,
// checked on every read, and a record that fails is dropped and listed in
// Recovered. Chunks are evicted oldest first, by insertion: a read does
// not refresh a filter, so reads never write. A cache of an earlier
// layout (filters by block hash) is emptied on open. The bbolt file does
// not shrink when filters are evicted (bbolt reuses the freed pages).
//
// A damaged cache file must not crash the process, and bbolt reads the
// file through a memory map, where a truncated file faults (SIGBUS), a
// wrong page id or count sends it outside the map (SIGSEGV), a cycle of
// pages recurses until the stack overflows and a damaged freelist count
// sizes an allocation. So Open first checks the file with plain reads:
// the size, both meta pages and the freelist always, and, unless the
// cache closed cleanly and the file's stamp (size, inode, times of
// modification and change) is still the one recorded then, every page of
// the trees too: its bounds, key order, branch keys and that each page is
// reached once or free. The deep check reads one page per leaf: for a
// full default cache (a file of 286 MiB) it took 18 to 35 ms with the
// file in the page cache and 1.2 to 2 s from disk (BenchmarkCheckFilterCache;
// bbolt's Tx.Check, 230 to 270 ms and 1 to 3 s); the quick checks take
// under a millisecond. A file that fails is renamed cache.db.damaged-<unix time> and a
// new cache started; Recovered says so. Every call into bbolt then runs
// one at a time, with runtime/debug.SetPanicOnFault set, so that a fault
// on a file damaged while open (truncated under the store) is an error:
// the call returns ErrFilterCacheDamaged, the file is set aside and the
// cache is off until the store is opened again.
//
// The ban list and the address book share the directory, and its lock:
// packages pool and addrbook keep them, while the store is open.
//
// # Memory
//
// In memory a Store keeps four bytes of each block's hash (for HeightOf),
// a fixed cache of 4096 headers (about 0.5 MB) and the filter cache's
// index lines not written yet (up to 65,536, about 5 MB). Chain returns the
// header chain backed by the store (chain.Backed), which keeps only its
// last 2,100 to 4,200 headers in memory and writes every header it
// accepts to the store: the two need about 6 bytes a header on a
// mainnet-sized chain of 900,000 headers, against about 195 for a chain
// holding every header.
package store
