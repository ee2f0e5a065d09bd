// Package simulate writes ground truth for the attacks of package attack
// and scores their reports against it: captures, universes and chains
// whose every session is labelled with the wallet that sent it, made from
// a seed, and the precision, recall and calibration of what "privacy
// analyze" and "privacy fetches" answer about them.
//
// # The chain
//
// Every wallet transacts on one simulated chain of Options.Chain.Blocks
// blocks. Each block has a coinbase and Options.Chain.TxsPerBlock
// transactions of its own, each spending one or two earlier outputs and
// paying two new scripts (5% of them a script paid before), then the
// wallets' transactions of that height. Inputs spend earlier unspent
// outputs and show the key that spends them (in the input script for
// P2PKH, in the witness for P2WPKH), as a real chain's do, so that the
// universe and the appearance index are what package universe's Writer
// and IndexWriter extract from the blocks, the code "privacy universe"
// runs on a real chain: every address paid, every key a spend shows (as
// its address's pair), and per script the blocks and transactions it
// appears in. Candidates therefore sit together in transactions and
// blocks, and a wallet's spent addresses are tested by their key and its
// hash, as on a real chain.
//
// # The BIP 37 side
//
// Generate draws Options.Wallets wallets. Wallet i has a number of
// addresses drawn log-uniformly from Options.Addresses, real secp256k1
// keys (private key j is SHA-256 of the seed, i and j), P2PKH or P2WPKH
// addresses (one type per wallet), a false-positive rate drawn
// log-uniformly from Options.FPRate, and a number of sessions drawn
// uniformly from Options.Sessions. It is born in the first half of the
// chain; each of its addresses is first paid at a random height after
// that (a background output spent, the payer's change beside it), and
// each coin it receives is spent later with probability one half. A
// share Options.PayFraction of the wallets paid another wallet: 1 to 3 of
// the payee's addresses, which the payer's filters then hold too (it
// watches its payment), so that two wallets share matches without being
// one.
//
// A wallet's sessions are sent at heights where it had used a growing
// prefix of its addresses: the last at the tip (all of them), each earlier
// one where it had used at least half. A session's filterload holds, per
// address used by then, Options.ElementsPerAddress elements (the public
// key and its HASH160, as bitcoinj inserts them, or the hash alone) and
// the hashes of the addresses its wallet watches. It is sized for those
// elements plus Options.ExtraElements at the wallet's rate, by Bitcoin
// Core's rules or bitcoinj's (model.SizingRule), with a random tweak. A
// share Options.FilterAddFraction of the sessions send their newest
// addresses (up to a fifth) by filteradd after the filterload.
//
// Options.Noise sessions load a filter of the same kind holding random
// elements that no candidate has; Options.Degenerate sessions send, in
// turn, a filter of 0 bytes and one with every bit set (both match
// everything) and one of 2 bytes with 8 random elements (about half). All
// sessions are shuffled, named in their order in the capture and given
// client addresses of their own, so that only the filters tell who sent
// them.
//
// A wallet session's label lists the candidates its filters hold (Holds):
// the truth for its recall and for the estimate of its wallet. A
// candidate listed for a session is right when one of the session's
// wallets owns or watches it; noise and degenerate sessions have no
// wallet.
//
// # The BIP 157 side
//
// Options.Fetch.Wallets wallets are born in the first quarter of the chain
// and receive a number of payments from FetchOptions.Payments at random
// heights after their birthday, each from one of FetchOptions.Payers
// payers. A payment spends the payer's change of its previous payment
// (its first, a background output), pays the wallet a new script (or, one
// time in five, one it has) and makes the payer's new change: the payer's
// change scripts sit in the same transactions as the payments to the
// wallet, and one that is spent by the next payment appears only in the
// wallet's blocks. Half the payments are spent later by the wallet, which
// pays someone new and keeps a new change script; half the payers' last
// change outputs are spent later.
//
// Each wallet has sessions (FetchOptions.Sessions). A session asks for
// every filter header from the genesis block (getcfheaders, as a fresh
// client does whatever it scans) and for the filters from the wallet's
// birthday to the tip (getcfilters), in batches of 2,000 and 1,000 blocks,
// then for the blocks to fetch in getdata messages of 16: the blocks
// holding any of the wallet's scripts, the blocks whose BIP 158 filter
// matches by chance (each with probability 1-(1-1/M)^W for W scripts and
// M = 784,931) and FetchOptions.Decoys random blocks.
// FetchOptions.Noise sessions fetch random blocks for no wallet. A script
// listed for a session is right when it is one of its wallets'; the
// wallet's scripts that appear in the range it scanned (its label's
// Scripts) are the truth for its recall.
//
// # Regimes
//
// The standard regime above draws from the attacks' own assumptions:
// candidates the filter attack tests one by one at random, payments of 1
// to 3 addresses (the 1/S² prior linking gives shared addresses), sessions
// that hold at least half their wallet's addresses and only grow,
// log-uniform wallet sizes, and the payer-change pattern the block
// download attack's grouping rule was written for. So scoring an attack
// on it measures the attack against itself. Each other Regime (see
// Regimes for what it does and what it breaks) changes one behaviour,
// with its defaults from RegimeOptions:
//
//   - payments: wallets of 3 to 100 addresses, over half paying 1 to 3
//     others 1 to 20 addresses each, a payee of 6 or fewer in all of
//     them; BIP 157 payments of several scripts at once (3 in 10);
//   - reuse: half the payments to a wallet pay an address it used; payers
//     send their change back to one script;
//   - lookahead: filters hold the next 100 keys beyond those used, used
//     later (and so in the universe) or never;
//   - change: wallets spend 9 coins in 10 and keep change on internal
//     addresses, which their later filters hold;
//   - clustered: outputs spent at a mean age of 3 blocks, 4% of the
//     transactions batched payouts of 20 to 100 outputs, 20 busy scripts
//     paid by a tenth of the outputs; wallets paid in bursts;
//   - heavy-tail: wallet sizes by a Pareto law of index 1 (P(X > x) ~ 1/x)
//     from 1 to 20,000, 1 to 8 sessions; BIP 157 payments 1 to 200, by the
//     same law;
//   - shrink: a session holds a random part (30 to 100%, one draw per
//     session) of what its wallet used; BIP 157 sessions after the first
//     rescan from a random later height;
//   - shared-client: wallets two or three to a client address, a third of
//     their sessions holding (or fetching for) all of them at once;
//   - mixed: all of these (not covered);
//   - covered: BIP 157 clients fetch, beside their wallet's blocks, the
//     blocks of cover scripts of others (FetchOptions.CoverTarget, 0.5
//     by default). Each wallet's covers are drawn once, for all its
//     sessions, as the client draws them: as whole chains shaped like
//     the wallet's. The wallet's scripts form chains (those sharing a
//     transaction, directly or through its payers' change and payees);
//     leak.Need sizes the covers per class of chains so that the wallet
//     holds at most the target's share of each class's groups, and
//     leak.Draw draws chains of the wallet's chains' shapes (the head's
//     class, spent, riding and type, the chain's mean era, its length
//     and how many of it are spent; a short shape takes an era within
//     two deciles, then gives up riding, takes the nearest era, then
//     gives up its type, then its era, then
//     spent, never its class or length; FetchWallet.CoversMissing counts
//     the chains still short, each stood for by a chain of its length
//     of another class). A cover chain is a walk on the chain's
//     transactions of no wallet's block: each pays a cover beside a link
//     (FetchWallet.CoverMates) that the next one spends, as a payer's
//     change, and where a cover is spent, the spend's new output is a
//     cover too, as the wallet's change; where a cover appears outside
//     its walk, a script of that transaction seen only in the covers'
//     blocks joins the chain's links, as a payer's change, so that the
//     cover rides as a wallet's script paid again does. It breaks "the client fetches
//     only its own blocks";
//     an attack told the target ("privacy fetches --cover-target")
//     assumes covers it cannot tell from the wallet's scripts, which this
//     regime grants for the features of a chain's shape; what is left
//     (the era of a chain's members beyond its head, riding beyond its
//     head) TestCoverDistinguisher measures.
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
// group's sessions' filters hold, or the wallet's scripts in range) or not, as
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
