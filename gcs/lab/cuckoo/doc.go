// Package cuckoo puts the cuckoo filter (Fan, Andersen, Kaminsky and
// Mitzenmacher, 2014) into spvfilter's filter-design lab (package
// gcs/lab), from the library github.com/seiflotfy/cuckoofilter: buckets of
// four 8-bit fingerprints, two candidate buckets per element. It is a
// module of its own so that the library stays out of spvfilter's
// dependencies; the command cmd/cuckoolab runs the lab with it, on BIP
// 158's test vectors or on a block file of a node's blocks (gcs/lab's
// ReadBlockFile) that "spvfilter lab --save-blocks" writes.
//
// A block's filter is built with room for its elements at a load of at
// most 95% (the library rounds the slots up to a power of two) and
// rebuilt twice as large when an insertion fails. The elements are
// inserted as their 64-bit SipHash-2-4 values under the block's key, as
// the lab's fuse and xor filters take them, so that the filter is keyed
// by the block. Its size is the element count (CompactSize) and the
// bucket array (the library's Encode). Its expected false-positive rate
// is computed exactly from the buckets: a probe matches when its
// fingerprint is in its first bucket or in the alternate one that
// fingerprint leads to, averaged over the 255 fingerprints and every
// first bucket; at a load α it is close to 8α/255, at most the 2·4/2^8 ≈
// 3.1% that the paper bounds it by.
package cuckoo
