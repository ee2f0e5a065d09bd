// Package privacy measures how much a BIP 37 Bloom filter reveals about the
// wallet that sent it, and compares that with what a BIP 157/158 client
// reveals.
//
// A node that receives a filterload can test every address it knows against
// the filter. Gervais, Čapkun, Karame and Gruber ("On the Privacy Provisions
// of Bloom Filters in Lightweight Bitcoin Clients", ACSAC 2014) modelled the
// attack; Jonas Nick ("Privacy in BitcoinJ", 2015) showed that the pubkey and
// pubkey-hash pair a wallet inserts, and a second filter with a new tweak,
// make it far stronger. The package offers:
//
//   - package model: the analytic model for a wallet of N addresses, with
//     the filter sized exactly as BIP 37 (Bitcoin Core) sizes it, checked
//     on real filters, swept, turned into advice, and set against BIP 157;
//   - package attack: a real attack of captured filters against a
//     universe of candidate addresses, read as a stream, for many sessions
//     in one pass; which captured sessions probably belong to one wallet;
//     and the block-download attack on a BIP 157 client;
//   - package capture: a capturing relay that records the filters light
//     clients send and the blocks they fetch, each record naming its
//     connection, and the records read back by connection;
//   - package universe: the candidate files an attack reads, the
//     candidates a range of blocks reveals, and the index of the blocks
//     each appears in;
//   - package plot: the model's curves drawn as SVG or PNG;
//   - RunDemo: all of it on built-in defaults.
package privacy
