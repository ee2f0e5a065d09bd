// Package model computes, without any data, what a node learns about a
// light-client wallet from the filters it sends (BIP 37) or the blocks it
// downloads (BIP 157), and turns the figures around into advice.
//
// A wallet of N addresses inserts E elements per address into a BIP 37
// filter sized for N·E plus some extra elements at a requested
// false-positive rate, by Bitcoin Core's rule or by bitcoinj's (a
// SizingRule: bitcoinj, like python-bitcoinlib, divides the bits by the
// elements in floating point and so often uses one more hash function); the node tests a universe of U
// candidate addresses, the wallet's included (Gervais, Čapkun, Karame and
// Gruber, "On the Privacy Provisions of Bloom Filters in Lightweight
// Bitcoin Clients", ACSAC 2014). Evaluate computes, after each of B
// filters with independent tweaks:
//
//   - pf, the chance that one element outside the filter matches, at the
//     filter's actual fill: (1-(1-1/m)^(k·n))^k for m bits, k hash
//     functions and n elements inserted (squared under the pair test,
//     where the public key and its hash must both match: Jonas Nick,
//     "Privacy in BitcoinJ", 2015);
//   - S = (U-N)·pf^B, the expected false positives;
//   - P_h(1) = N/(N+S), that one matching address is the wallet's, and
//     P_h(N) = 1/C(N+S, N), that N matching addresses picked at random are
//     all the wallet's, with the binomial coefficient extended to real S
//     by the Gamma function and computed in log space;
//   - the same two probabilities averaged over the binomial number of
//     false positives instead of taken at its mean S (the E[P_h] columns),
//     which differ when S is small;
//   - on request (Result.PHCurve), P_h(j) = C(N, j)/C(N+S, j) for every j
//     from 1 to N, that j matching addresses picked at random are all the
//     wallet's, at S and in expectation: the curves of Gervais et al.'s
//     figures, whose quoted points a universe of 3.2·10^7 addresses
//     reproduces.
//
// MonteCarlo builds real filters with package bip37 and counts the false
// positives of random candidates, to check Evaluate within a 99% interval.
// A Sweep evaluates the model along one parameter. Advise turns the model
// around: among every filter the sizing rule builds for the element count,
// with the exact interval of rates that builds each, it finds the largest
// filter that keeps E[P_h(1)] or E[P_h(N)] below a target, both at the
// filter's expected fill and averaged over the fills of real filters (the
// occupancy moments of the filter's bits give the spread of a candidate's
// false-positive rate from one tweak to the next), and a rate to ask for it
// that every rounding to its printed digits leaves inside that interval.
//
// Compare sets BIP 37 against BIP 157 for the same wallet: a block's BIP
// 158 basic filter matches a watch list of W items by chance with
// probability 1-(1-1/(Nb·M))^(W·Nb) for Nb items per block, and a script
// that appears in k blocks is matched by the block-download attack when
// all k were fetched, which chance explains with probability
// C(B-k, F-k)/C(B, F) for F of B blocks fetched (ChanceAllFetched).
//
// Wallet is a synthetic wallet of real keys with bitcoinj's filter layout,
// for demonstrations and tests.
package model
