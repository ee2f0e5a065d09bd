// Package simulate writes ground truth for the attacks of package attack
// and scores their reports against it: captures, universes and chains
// whose every session is labelled with the wallet that sent it, made from
// a seed, and the precision, recall and calibration of what "privacy
// analyze" and "privacy fetches" answer about them.
//
// # The BIP 37 side
//
// Generate draws Options.Wallets wallets. Wallet i has a number of
// addresses drawn log-uniformly from Options.Addresses, real secp256k1
// keys (private key j is SHA-256 of the seed, i and j), P2PKH or P2WPKH
// addresses (one type per wallet), a false-positive rate drawn
// log-uniformly from Options.FPRate, and a number of sessions drawn
// uniformly from Options.Sessions. A share Options.PayFraction of the
// wallets paid another wallet: 1 to 3 of the payee's addresses, which the
// payer's filters then hold too (it watches its payment), so that two
// wallets share matches without being one.
//
// A wallet's sessions know a growing prefix of its addresses: the last
// all of them, each earlier one at least half (drawn, then sorted). A
// session's filterload holds, per address, Options.ElementsPerAddress
// elements (the public key and its HASH160, as bitcoinj inserts them, or
// the hash alone) and the hashes of the addresses its wallet watches. It
// is sized for those elements plus Options.ExtraElements at the wallet's
// rate, by Bitcoin Core's rules or bitcoinj's (model.SizingRule), with a random
// tweak. A share Options.FilterAddFraction of the sessions send their
// newest addresses (up to a fifth) by filteradd after the filterload.
//
// Options.Noise sessions load a filter of the same kind holding random
// elements that no candidate has; Options.Degenerate sessions send, in
// turn, a filter of 0 bytes and one with every bit set (both match
// everything) and one of 2 bytes with 8 random elements (about half). All
// sessions are shuffled, named in their order in the capture and given
// client addresses of their own, so that only the filters tell who sent
// them. The universe holds every wallet's addresses at random lines among
// Options.UniverseSize random P2PKH and P2WPKH addresses.
//
// A wallet session's filters hold the wallet's first Loaded+Added
// addresses and the addresses it watches: those are the candidates it is
// bound to match, and the truth for its recall and for the estimate of its
// wallet. A candidate listed for a session is right when the session's
// wallet owns or watches it; noise and degenerate sessions have no wallet.
//
// # The BIP 157 side
//
// A chain of FetchOptions.Blocks blocks: each has a coinbase and
// FetchOptions.TxsPerBlock transactions, each spending one or two unspent
// outputs of the chain and making two outputs, a new script or now and
// then (5%) one seen before. FetchOptions.Wallets wallets are born in the
// first quarter of the chain and receive a number of payments from
// FetchOptions.Payments at random heights after their birthday, each from
// one of FetchOptions.Payers payers. A payment spends the payer's change
// of its previous payment (its first, an output of the chain), pays the
// wallet a new script (or, one time in five, one it has) and makes the
// payer's new change: the payer's change scripts sit in the same
// transactions as the payments to the wallet, and one that is spent by the
// next payment appears only in the wallet's blocks. Half the payments are
// spent later by the wallet, which pays someone new and keeps a new
// change script; half the payers' last change outputs are spent later.
//
// Each wallet has sessions (FetchOptions.Sessions) that rescan from its
// birthday to the tip: filter headers and filters in ranges of 2,000 and
// 1,000 blocks (getcfheaders, getcfilters), then the blocks to fetch in
// getdata messages of 16: the blocks holding any of the wallet's scripts,
// the blocks whose BIP 158 filter matches by chance (each with probability
// 1-(1-1/M)^W for W scripts and M = 784,931) and FetchOptions.Decoys
// random blocks. FetchOptions.Noise sessions fetch random blocks for no
// wallet. A script listed for a session is right when it is the session's
// wallet's, and every one of the wallet's scripts is the truth for its
// recall.
//
// # Scoring
//
// Evaluate reads a report as a JSON document field by field, so that
// fields the reports gain later are ignored (and named in Score.Absent)
// rather than breaking it. A claim is a listed item with its probability:
// a candidate of a session, a pair of sessions said to be one wallet, a
// group of scripts said to hold one of the wallet's. A claim whose
// probability reaches the threshold is attributed (a pair is attributed
// when the report links it). Precision is the share of attributed claims
// that are right; recall the share of true items attributed. Calibration
// puts every claim in a bin of its probability (see ClaimScore) and gives the
// fraction right in each, with its 95% Wilson score interval, beside the
// mean probability: a calibrated report is right as often as it says.
//
// Intervals are found by their field names wherever a report puts them
// (see the Score's Intervals): an interval on the estimated wallet covers
// the truth (the candidates the session's filters hold, those all of a
// group's sessions' filters hold, or the wallet's scripts) or not, as
// does one on a fetches report's estimated wallet groups (of the groups
// its matches form, those of two or more appearances that hold a script
// of the wallet), and the share that cover is set against the interval's
// level; an interval
// on a probability, whose truth is a yes or a no, is scored in the bins
// of its probability: the fraction right, with its Wilson interval,
// against the mean of the intervals' bounds.
//
// Filters are sized by package model's rules (model.SizingRule).
package simulate
