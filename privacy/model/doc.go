// Package model computes, without any data, what a node learns about a
// light-client wallet from the filters it sends (BIP 37) or the blocks it
// downloads (BIP 157), and turns the figures around into advice.
//
// A wallet of N addresses inserts E elements per address into a BIP 37
// filter sized, by Bitcoin Core's rules, for N·E plus some extra elements
// at a requested false-positive rate; the node tests a universe of U
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
//     which differ when S is small.
//
// MonteCarlo builds real filters with package bip37 and counts the false
// positives of random candidates, to check Evaluate within a 99% interval.
// A Sweep evaluates the model along one parameter. Advise turns the model
// around: among every filter Core builds for the element count, with the
// exact interval of rates that builds each, it finds the smallest rate
// whose filter keeps E[P_h(1)] or E[P_h(N)] below a target.
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
