// Package attack runs, on real data, the attacks a node can make on what
// light clients send it: the BIP 37 filter attack against a universe of
// candidates, the linking of captured sessions that share a wallet, and
// the block-download attack on a BIP 157 client.
//
// # The filter attack
//
// A node that received a session's filters tests every candidate of a
// universe (package universe) against them, as the client's wallet would
// be tested: a candidate matches a filter when any of its elements does,
// or, under the pair test, when a public key and its HASH160 both do; it
// matches a session when it matches every filter the session loaded (the
// intersection attack of Gervais et al., and of Jonas Nick, "Privacy in
// BitcoinJ", 2015).
//
// What chance alone would match is computed from the filters as they are,
// not as they were sized: a filter with a fraction X of its bits set
// matches an element outside it with probability X^k, for k hash
// functions, and a candidate of t elements with probability 1-(1-X^k)^t
// (X^2k for a pair under the pair test). Filters of one hashing (the same
// size, hash count and tweak: one filter sent twice, or reloaded after
// filteradd) test the same bit positions, so together they match where all
// of them have the bit set; filters of different hashings are taken as
// independent. The expected false positives S are the sum of these chances
// over the universe's candidates, counted by class (their number of
// elements, or the pair class), at every step of the intersection.
//
// The wallet's size is then estimated as N = max(M-S, 0) for M matches,
// and each match's probability of being the wallet's is π/(π+(1-π)·f) for
// f its chance of matching by accident and π = N/U the share of the
// universe of U candidates estimated to be the wallet's; P_h(1) and P_h(N)
// of package model are given at N. A key line marked as an address's pair
// counts as that address, tested by the key and its hash, and the address
// lines it names as taken over are taken back out of every count when the
// reports are finished, wherever in the universe they are.
//
// An Accumulator holds the groups of filters (one group per session) and
// the counts that testing a universe gives: per group, how many candidates
// each filter matches alone and how many match each prefix of its filters,
// the matches themselves (at most AnalyzeOptions.MaxMatches), and the
// universe's candidates by class. ReadUniverse reads a universe in
// parallel and constant memory; readings, and accumulators merged with
// Merge (or sent as JSON between machines and merged), add up as the
// reading of their concatenation, so a universe split over files gives the
// reports of one pass over the whole. Reports finishes the counts into
// one Report per group. Analyze and AnalyzeGroups do all of it in one
// call.
//
// # Linking sessions
//
// Two sessions of one wallet share its candidates; sessions of different
// wallets share only chance matches. Accumulator.Link compares every pair
// of sessions: the shared matches are expected to number λ0, the false
// positives both sessions' filters give plus each wallet's candidates
// matching the other's filters by chance, if the wallets differ, and
// λ1 = λ0 plus the smaller estimated wallet if they are one. The posterior
// probability of one wallet weighs the two Poisson likelihoods of the
// shared count against a prior, and linked pairs form groups
// transitively. Accumulator.Intersect intersects the sessions of a group
// from their reports, without reading the universe again.
//
// # The block-download attack
//
// A BIP 157 client downloads the blocks whose filters match its scripts.
// For a session that scanned B blocks and fetched F of them, a script that
// appears in k of the scanned blocks matches when all k were fetched; the
// wallet's scripts always are, another script by chance with probability
// C(B-k, F-k)/C(B, F) (model.ChanceAllFetched; about f^k for f = F/B).
// AnalyzeFetches tests every script of an appearance index (package
// universe) against every session's downloads in one pass, sums the chance
// probabilities into the expected false positives, and gives each match
// the probability of being the wallet's as one less the share of chance
// among the matches of the same k. A script seen in a single fetched block
// matches whoever's it is (the other outputs of the wallet's own
// transactions do), so its probability is at most one over the
// single-appearance matches of its block.
package attack
