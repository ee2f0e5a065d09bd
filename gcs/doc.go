// Package gcs implements Golomb-coded sets (GCS) and the BIP 158 compact
// block filters built from them.
//
// A filter holds N items, each hashed with SipHash-2-4 under a 16-byte key
// and mapped into [0, N*M) by the high word of a 64x64->128-bit multiply.
// The sorted values are stored as Golomb-Rice coded differences with
// parameter P. The BIP 158 basic filter uses P = 19 and M = 784931 and is
// keyed by the first 16 bytes of the block hash.
//
// Building a filter, and matching a watch list against one, begins by
// hashing every element. Where the processor has AVX-512, elements are
// hashed eight at a time, one per 64-bit lane of the vector registers:
// grouped by their number of SipHash blocks and gathered from their own
// bytes, the last block from each element's final 8 bytes shifted, so
// that nothing is copied and nothing beyond an element is read; elsewhere
// two at a time, interleaved. The hashed values, spread evenly over
// [0, N*M), are sorted by one pass that scatters them into about as many
// buckets as values by their high bits, then an insertion sort that moves
// each only among its bucket's few.
//
// Decoding is the hot path of a light client that rescans a chain, so this
// package reads the unary part of each code with one count-leading-zeros
// over a 64-bit window instead of bit by bit, and validates a filter once,
// when it is decoded, so that matching needs no error checks. While
// validating (or encoding) it records where each block of 64 values starts
// and the value before it, about 16 bytes per 64 items; Match then decodes
// only the one block that can hold its element, MatchAny skips the blocks
// that lie between its elements, and when most blocks are needed two are
// decoded at once, interleaved, so that their dependency chains overlap.
// Untrusted filters are decoded strictly (FromNBytes, DecodeBasic): a
// claimed N the bytes cannot hold, values out of range, truncated streams
// and leftover data are errors, and no allocation is sized by the claimed
// N.
//
// A light client asks one question of each block's filter, so
// Matcher.MatchBytes answers it from the cfilter payload directly: one
// pass over the bytes decodes, validates (exactly as DecodeBasic does, with
// the same errors) and merges the values with the sorted hashed watch
// list, comparing each value with the next watched hash as it is decoded.
// A basic filter of 1 KB or more is decoded by two interleaved decoders,
// the second started in the middle of the stream at a guessed bit, which
// join where their code boundaries meet; a watch list at least half as
// long as the filter is instead looked up in the validated values, the
// lookup stopping at the first match. MatchVerifiedBytes, for payloads
// whose hash is already checked against a filter header, may stop at the
// first match or once the values pass the watch list.
//
// What a block alone proves about its basic filter is decided by
// CheckBasic, by consensus rules alone: an output script left out, the
// script a P2SH-wrapped witness input spends left out (BIP 141 allows no
// other), a count the block cannot give, bytes that do not decode. What
// other inputs show of the scripts they spend (P2PKH, P2SH, native segwit
// and P2TR shapes) holds only if the outputs they spend were of standard
// types, which consensus does not require: it is reported apart, as
// evidence, never as a proof. A block whose transactions are not
// certainly those its header commits to (a coinbase of 64 bytes,
// CVE-2017-12842: a 64-byte transaction elsewhere is no ambiguity, since
// the coinbase fixes the depth of every leaf) proves nothing. CheckBasic's documentation states
// the rule, the spends it reads and why.
//
// Filter values are immutable and safe for concurrent reads. Match and
// MatchAny do not allocate; a Matcher matches a fixed watch list against
// filter after filter without allocating per filter, but is not safe for
// concurrent use (give each goroutine a Clone).
//
// How close the basic filter comes to the information-theoretic bound, and
// what a client pays per block with it and with the designs that came
// after Bloom filters, is measured by package gcs/lab.
package gcs
