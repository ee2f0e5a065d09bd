// Package universe reads and writes the candidates a node tests against a
// light client's filters, and the index of the blocks each appears in.
//
// A universe is a text file of one candidate per line: an address (base58
// or bech32/bech32m, of any network), a public key, a 20- or 32-byte hash
// or a script in hex, each optionally followed by a comment (see
// Parser.Parse for the exact forms). A candidate is tested by its
// elements: the hash or witness program an address encodes, a key and its
// HASH160 (the pubkey/pubkey-hash pair a bitcoinj wallet inserts), or a
// script's data pushes. A key line may carry the marker "# pair ADDRESS"
// and name in "listed ADDRESS" fields the address lines it takes over, so
// that an analysis counts an address and its key once without looking
// anything up across lines.
//
// The common forms are parsed without allocating: a 40-digit hash eight
// digits at a time in a 64-bit word, base58check and bech32 by decoders
// of their own that accept exactly what btcutil accepts (tested against
// it). ReadParallel reads a universe of any size in constant memory, in
// chunks of whole lines parsed by several goroutines, each giving its
// candidates to a Visitor; lines that are not candidates are skipped and
// counted in a Scan, which names the first of them.
//
// Writer writes the universe a range of blocks reveals: the address of
// every standard output, every public key seen (as its pair) and the
// non-standard scripts. With an IndexWriter it also records the blocks
// every output script appears in, as an output and as the script an input
// spends (what a block's BIP 158 basic filter holds), and the
// transactions it appears in there, with its role in each (paid or
// spent): the appearance index, sorted in bounded memory by spilling runs
// to disk and merging them, whose format IndexWriter.WriteTo gives and
// IndexReader reads (version 4, which a checksum closes; version 3,
// without the roles, version 2, also without the checksum, and version 1,
// also without the transactions, are still read). An index made from a
// block after the genesis block holds spends of coins paid before it: only
// from version 4 on can its reader tell a script's creation (a
// transaction paying it) from such a spend.
package universe
