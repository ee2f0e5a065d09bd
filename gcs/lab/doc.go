// Package lab compares filter designs for Bitcoin light clients on a
// chain's blocks: BIP 158's Golomb-coded set (package gcs) at P = 19 and
// over a sweep of P, a BIP 37 Bloom filter sized by Bitcoin Core's rule
// (package bip37), and the filters that came after Bloom, from maintained
// libraries: binary fuse filters with 8-, 16- and 32-bit fingerprints and
// the xor filter with 8-bit fingerprints (github.com/FastFilter/xorfilter).
// Other designs plug in through the Design interface; the cuckoo filter,
// whose library is kept out of this module, is measured by the nested
// module gcs/lab/cuckoo.
//
// # What is built
//
// Each block becomes the set of distinct scripts its BIP 158 basic filter
// holds (its output scripts but empty and OP_RETURN ones, and the
// non-empty scripts its inputs spend; NewBlock, Chain), and each design
// builds one filter per block from that set, keyed by the block as BIP 158
// keys it: the GCS by the first 16 bytes of the block hash, the others by
// 64-bit SipHash-2-4 values of the scripts under the same key (the key the
// fuse and xor libraries take), the Bloom filter by a tweak taken from the
// hash. A filter's size is what a protocol would send for it: the GCS
// exactly as a cfilter message carries it; a Bloom filter as filterload
// does (the bit array with its length, the hash function count, the tweak
// and the flags); a fuse or xor filter as the element count (CompactSize),
// the 8-byte seed and the fingerprint array, from which the library's
// other parameters follow.
//
// # What is measured
//
// For each design (Measure):
//
//   - bits per element: the filters' bytes over the chain's elements,
//     against the information-theoretic bound log2(1/ε) at each filter's
//     own rate ε, and the overhead over it in percent. A Bloom filter
//     spends 1/ln 2 ≈ 1.44 times the bound; a Golomb-Rice code about
//     1.5 bits more than it at its best M/2^P (BIP 158's 1.497137); a
//     binary fuse filter 1.125 times it on large sets and more on small
//     ones, where the library's minimum sizes and every filter's header
//     weigh.
//   - the false-positive rate, from random probes spread evenly over the
//     blocks, against the rate each built filter implies: 1/M for the GCS
//     (the fraction of its value range the distinct values take), the
//     fraction of set bits to the power k for the Bloom filter, 2^-bits
//     for a fuse or xor filter. The count of matching probes is compared
//     with its expected value within a 99.9% interval (the exact Poisson
//     quantiles of the expected count, which bound the binomial's, up to
//     an expected count of 500; the normal approximation of the
//     Poisson-binomial count beyond). Every member of every block is
//     also looked up: a false negative is an error.
//   - build time per element (the fastest of repeated passes over the
//     chain) and the bytes allocated while building, per element;
//   - the time to match a watch list of W scripts against a block's
//     filter, per block, with what a client would reuse from block to
//     block: a gcs.Matcher on the serialized filter (decoded, validated
//     and merged in one pass), bip37.Prepared elements for the Bloom
//     filter, and for the fuse and xor filters one SipHash per watched
//     script and block.
//
// # What a client pays
//
// A client that watches W scripts downloads, for each block, its filter
// and, when the filter matches by a false positive, the block itself.
// BytesPerBlock computes, for a wallet of W scripts, the mean over the
// chain's blocks of
//
//	filter bytes + (1 - (1 - ε)^W) · block bytes
//
// (for small W·ε, the filter plus ε·W times the block), with each block's
// own filter size and rate; Run computes it for every design and every P
// of the sweep, and finds the P that minimises it: roughly where the filter's growth of
// N/8 bytes per extra bit of P meets the halving of the expected
// false-positive download, 2^P ≈ 8·ln 2·W·S/(1.497·N) for blocks of S bytes
// and N elements, so the optimum moves up one P for each doubling of W.
// The blocks a wallet's own scripts make it download are the same in
// every design and are left out.
//
// # Block files
//
// A block file holds consecutive blocks of one chain, so that the lab can
// be run again, or by another program (the cuckoo filter's module), on
// the blocks a node served without asking the node again
// (BlockFileWriter, ReadBlockFile). Its format, integers little-endian:
//
//	"spvfilter blocks 1\n"   19 bytes: the format and its version
//	network                   4 bytes: the chain's wire.BitcoinNet
//	first height              4 bytes: the height of the first block
//	then, for each block:
//	  length                  4 bytes: at most wire.MaxBlockPayload
//	  block                   the block's wire serialization, witness
//	                          data included (BIP 144): length bytes
//
// Each block follows the one before: its height is one more and its
// header names the previous block's hash. Reading checks that, that each
// block decodes to exactly its length, and that its transactions give its
// header's merkle root (witness data is not checked).
package lab
