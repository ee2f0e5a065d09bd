// Package chain holds a verified chain of block headers: every header
// links to its parent, meets its proof of work and the network's
// difficulty and time rules, and the chain with the most work wins.
//
// A Chain knows nothing of peers; the peer package feeds it the headers a
// node sends, and the client package shares one Chain among its peers.
//
// # Header rules
//
// A header is accepted only if it passes the checks btcd's blockchain
// package makes of a header (checkBlockHeaderSanity and
// CheckBlockHeaderContext), plus BIP 94 on testnet4:
//
//   - it links to its parent, and its hash meets its own target, which is
//     no easier than the network's proof-of-work limit;
//   - it carries exactly the difficulty bits the network demands. Without
//     retargeting (regtest) every block carries the limit. On mainnet and
//     signet a block keeps its parent's bits, and every 2016 blocks the
//     bits are retargeted: scaled by the time the last 2015 intervals
//     took, clamped to a factor of four, rounded down, capped at the
//     limit. On networks with ReduceMinDifficulty (testnet3, testnet4,
//     simnet) a block dated more than MinDiffReductionTime (20 minutes)
//     after its parent must use the limit, and any other block between
//     retargets carries the bits of the last block that is a retarget
//     boundary or not at the limit; the first block of a period never
//     takes the exception. On testnet4 (see BIP94) the retarget scales the
//     bits of the period's first block, not its last, so that a last
//     block mined at the minimum cannot reset the next period (testnet3's
//     "block storms");
//   - its timestamp is after the median of the previous eleven blocks, at
//     most MaxFutureDrift (two hours) ahead of the local clock, and on
//     testnet4 the first block of a period is dated no more than
//     MaxTimeWarp (600 s) before its parent (BIP 94's time-warp rule);
//   - its version is at least what the network's BIP 34, 66 and 65
//     heights require (2, 3, 4);
//   - it matches the network's block checkpoint at its height, if any.
//
// Nothing inside blocks is checked here (merkle roots, transactions,
// witness commitments: package peer checks the blocks it fetches), nor
// signet's block signatures (BIP 325), nor a minimum chain work such as
// Bitcoin Core's nMinimumChainWork: before the first checkpoint a peer can
// feed a low-work chain of its own from the genesis block, and it is
// accepted if no other is offered. The two-hour limit reads the local
// clock (Chain.Now), not a network-adjusted time.
//
// # Branches
//
// Extend appends headers that continue the tip. Headers that fork off
// below the tip make a competing branch, which replaces the chain's blocks
// above the fork only when it has more work than they have (on a tie the
// chain keeps what it saw first), and never when it forks below the
// highest network checkpoint the chain holds. Every header of a branch is
// checked by the chain's own rules on a copy of the chain's headers below
// the fork, so a bad branch changes nothing.
//
// A node sends at most 2,000 headers a message, so a branch longer than
// the chain's part above the fork may need several to win. NewBranch
// takes the first message, Branch.Add each next one (asked for with
// Branch.Locator) and checks it as it comes, and Adopt replaces the
// chain's blocks once the whole branch has more work. A branch holds at
// most MaxBranchHeaders headers, so a peer cannot make it grow without
// end.
//
// # Checkpoints
//
// The block checkpoints are btcd's for mainnet and testnet3, and for
// testnet4 (TestNet4Params, which btcd v0.24.2 lacks) the two blocks
// Bitcoin Core names with their heights. FilterCheckpoints returns the BIP
// 157 basic filter headers hard-coded for mainnet, testnet3 and testnet4,
// taken from lightninglabs/neutrino (chainsync/filtercontrol.go); Bitcoin
// Core hard-codes none, so they have no second source, and neither project
// has any for signet. CheckFilterHeader compares a peer's filter header
// with them. On signet, regtest and simnet nothing is checked this way.
//
// # Memory and storage
//
// New and Load make a chain that holds every header in memory (about 195
// bytes a header). Backed makes one over a Store, such as peer/store's,
// that holds only its last WindowHeaders to 2×WindowHeaders headers in
// memory, reads older ones from the store, and writes every header it
// accepts to the store; both check headers by exactly the same rules,
// from the same code. The window always holds the ancestors the rules
// read for the next header (a difficulty period, or the eleven blocks of
// the median time past), so following the tip reads nothing from the
// store. A branch forking below the window is checked on a copy of its
// fork's ancestors read from the store, and the work of the blocks it
// would disconnect is summed from the store's headers: a deep
// reorganization is handled, never refused for want of memory.
//
// # Concurrency
//
// A Chain is safe for concurrent use. Extend and Adopt change it under a
// lock that the other methods share, so each call sees the chain as it
// was before a change or after it, never half-way; two calls may see two
// chains, which is why Tip reads the tip's height and hash together and
// Hashes a range at once. A Branch is for one goroutine at a time.
package chain
