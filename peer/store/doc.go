// Package store keeps a light client's verified chain state on disk, one
// directory per network (DataDir/<network name>/):
//
//	headers.bin           block headers, 80 bytes each, record h at offset 80*h
//	headers.bin.sum       one CRC-32C per header record, 4 bytes each
//	filterheaders.bin     BIP 157 basic filter headers, 32 bytes each, by height
//	filterheaders.bin.sum one CRC-32C per filter header record
//	filters/cache.db      verified basic filters by block hash (bbolt)
//	meta                  the store's format and network, checked on open
//	LOCK                  held with flock while a Store is open
//
// The record files are append-only and truncated only to disconnect
// blocks above a fork. Each record's checksum covers its height and its
// bytes. Open reads every record, checks its checksum, and for block
// headers also the link to the parent and the proof of work against the
// header's own bits; each file is cut after the last record that passes,
// so a torn write (kill -9, power failure) or a damaged byte loses that
// record and those after it, and is never trusted. Filter headers are
// bound to the block headers by height: they are never kept above the
// block headers' tip, and are truncated before the block headers are, so
// a crash between the two cannot pair a filter header with the wrong
// block.
//
// Writes are synced (fsync of both files of a log) before AppendHeaders,
// AppendFilterHeaders, Truncate and SaveChain return, unless
// Options.NoSync is set. The filter cache is a bbolt database, which
// gives atomic multi-record updates (an entry, its place in the eviction
// order and the cache's size change together) with its own crash
// safety; each entry also records its filter's hash, checked on every
// read, and an entry that fails is dropped.
//
// In memory a Store keeps four bytes of each block's hash (for HeightOf)
// and a fixed cache of 4096 headers (about 0.5 MB). Chain returns the
// header chain backed by the store (chain.Backed), which keeps only its
// last 2,100 to 4,200 headers in memory and writes every header it
// accepts to the store: the two need about 6 bytes a header on a
// mainnet-sized chain of 900,000 headers, against about 195 for a chain
// holding every header.
package store
