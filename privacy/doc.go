// Package privacy measures how much a BIP 37 Bloom filter reveals about the
// wallet that sent it, and compares that with what a BIP 157/158 client
// reveals.
//
// A node that receives a filterload can test every address it knows against
// the filter. Gervais, Čapkun, Karame and Gruber ("On the Privacy Provisions
// of Bloom Filters in Lightweight Bitcoin Clients", ACSAC 2014) modelled the
// attack; Jonas Nick ("Privacy in BitcoinJ", 2015) showed that the pubkey and
// pubkey-hash pair a wallet inserts, and a second filter with a new tweak,
// make it far stronger. The work is split by role, each package importing
// only those above it in this list:
//
//   - package model: the analytic model for a wallet of N addresses, with
//     the filter sized exactly as BIP 37 (Bitcoin Core) sizes it, checked
//     on real filters, swept, turned into advice, and set against BIP 157;
//   - package universe: the candidate files an attack reads, the
//     candidates a range of blocks reveals, and the index of the blocks
//     each appears in;
//   - package capture: a capturing relay that records the filters light
//     clients send and the blocks they fetch, each record naming its
//     connection, and the records read back by connection;
//   - package attack: the filter attack on captured filters against a
//     universe, for many sessions in one pass, through an Accumulator
//     that a distributed run shares; which sessions probably belong to one
//     wallet; and the block-download attack on a BIP 157 client;
//   - package plot: the model's curves drawn as SVG or PNG (the only
//     package that links a plotting library).
//
// This package ties them together in a demonstration: RunDemo builds a
// wallet and its filters, hides its addresses in a synthetic universe,
// attacks it and sets the result against the model.
package privacy
