// Package bip37 implements BIP 37 connection Bloom filters and merkle block
// proofs with Bitcoin Core's exact semantics.
//
// # Filters
//
// A Filter is a bit array, a number of hash functions, a tweak and update
// flags, as carried by the filterload message. Hash function i is
// MurmurHash3 (x86_32) with seed i*0xFBA4C795 + tweak, reduced modulo the
// number of bits. NewFilter sizes a filter with Core's CBloomFilter
// arithmetic (OptimalSize), which differs from btcutil's for many inputs;
// Sizing names that rule and bitcoinj's (Sizing.Size, Sizing.NewFilter),
// and FalsePositiveRate and Capacity are the formula both size by.
//
// MatchTxAndUpdate is Core's CBloomFilter::IsRelevantAndUpdate: it matches
// a transaction on its txid, the data pushes of its output scripts, the
// outpoints it spends and the data pushes of its input scripts, and adds
// the outpoints of matching outputs according to the update flags
// (wire.BloomUpdateNone, BloomUpdateAll, BloomUpdateP2PubkeyOnly).
//
// As in Core, a 0-byte filter matches everything (it is how a client asks
// for every transaction without a division by zero, CVE-2013-5700).
//
// To test many elements against many filters, as an attacker who holds
// the filters of many clients does, prepare each element once (Prepared:
// MurmurHash3 scrambles each 4-byte block the same way for every seed, so
// only the seed's chain is run per filter and hash function) and ask each
// filter about a batch of them (Filter.ContainsBatch, Filter.ContainsPrepared);
// the answers are those of Contains.
//
// # Messages
//
// MarshalBinary and DecodeFilterLoad encode and strictly decode the
// filterload payload; MsgFilterLoad and FilterFromMsg convert to and from
// btcd's wire.MsgFilterLoad. ValidateFilterAdd and Filter.FilterAdd apply
// Core's 520-byte limit on filteradd. The filterclear message has no
// counterpart here: a node receiving it drops the filter and relays every
// transaction again, which is not the same as an empty filter
// (Filter.Reset clears the bits and keeps the parameters).
//
// # Merkle blocks
//
// NewMerkleBlock builds the merkleblock message a node sends for a block
// and a filter (running MatchTxAndUpdate on each transaction in order),
// NewMerkleBlockFromTxids one for a set of txids; VerifyMerkleBlock checks a
// received proof against its header's merkle root and returns the proven
// transactions; DecodeMerkleBlock and EncodeMerkleBlock convert the payload.
//
// # Errors
//
// Decoders of untrusted bytes enforce every limit before allocating and
// return errors that wrap the package's sentinel errors, for errors.Is.
//
// A Filter is not safe for concurrent use.
package bip37
