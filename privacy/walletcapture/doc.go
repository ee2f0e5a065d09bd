// Package walletcapture scores the block-download attack of package
// attack ("privacy fetches") on the downloads of real wallets: six
// btcsuite/btcwallet v0.16.10 wallets, each over btcwallet's own
// compact-filter backend (chain.NeutrinoClient over lightninglabs/neutrino
// v0.16.0) that reaches a regtest btcd only through a privacy/capture
// relay, each from a loopback address of its own. It is a module of its
// own, so that btcwallet and neutrino stay out of spvfilter's go.mod.
//
// Unlike package neutrinocapture's chains, whose wallets' keys, payments
// and change the test scripts, here btcwallet chooses: each payment is
// made and signed by the wallet (coin selection largest first, its own
// change address, P2TR in this version, and its own P2WPKH receive
// addresses), wallets pay outside payees and each other, and outsiders
// pay them, over 252 blocks with background payments in every block. The
// labels are every address btcwallet derived that appears on the chain,
// the truth of each session the blocks its wallet's addresses appear in
// from the first filter it asked for. The capture, the chain's index
// (package universe) and those labels are scored as "privacy evaluate"
// scores them:
//
//	go test -run TestBtcwalletCaptureScored -v
//
// Two chains are built, about 30 s each: "spread", each payment in a
// block of its round at random (a round is 7 blocks), and "together",
// all of a round's payments in one block, so that the wallets' blocks
// are mostly the same blocks. Each is built on one seed (1) by default;
//
//	SPVFILTER_WALLET_SEEDS=2-5 go test -run TestBtcwalletCaptureScored -v
//
// builds each on every seed named instead (about 30 s a chain and seed)
// and logs each chain's claims pooled over them. Measured (said /
// fraction right [Wilson interval] n), on seed 1:
//
//	spread, scripts: [0, 0.5) 0.055 / 0.156 [0.135, 0.181] n=940;
//	  [0.5, 0.8) 0.598 / 0.500 n=2; [0.8, 0.95) 0.912 / 1.000
//	  [0.924, 1.000] n=47; none at P >= 0.95
//	spread, groups: [0, 0.5) 0.006 / 0.220 [0.177, 0.270] n=300;
//	  [0.5, 0.8) 0.502, the one wrong; [0.8, 0.95) 0.917 / 1.000
//	  [0.927, 1.000] n=49; none at P >= 0.95
//	together, scripts: [0, 0.5) 0.055 / 0.132 [0.115, 0.150] n=1450;
//	  [0.5, 0.8) 0.644 / 1.000 [0.439, 1.000] n=3; [0.8, 0.95) 0.940,
//	  the one right; none at P >= 0.95
//	together, groups: [0, 0.5) 0.072 / 0.243 [0.205, 0.284] n=449;
//	  [0.5, 0.8) 0.536 / 0.400 [0.118, 0.769] n=5; [0.8, 0.95) 0.940 /
//	  1.000 [0.439, 1.000] n=3; P >= 0.95: 1 of 1 right
//
// and on seeds 2 to 5 pooled (250 s):
//
//	spread, scripts: [0, 0.5) 0.057 / 0.161 [0.149, 0.173] n=3544;
//	  [0.5, 0.8) 0.597 / 0.991 [0.950, 0.998] n=110; [0.8, 0.95) 0.891 /
//	  1.000 [0.935, 1.000] n=55; P >= 0.95 (0.968 said): 8 of 8 right
//	  [0.676, 1.000]
//	spread, groups: [0, 0.5) 0.010 / 0.182 [0.160, 0.207] n=1044;
//	  [0.5, 0.8) 0.534 / 0.962 [0.811, 0.993] n=26; [0.8, 0.95) 0.936 /
//	  1.000 [0.977, 1.000] n=161; P >= 0.95 (0.961 said): 26 of 26
//	  right [0.871, 1.000]
//	together, scripts: [0, 0.5) 0.067 / 0.139 [0.130, 0.148] n=5289;
//	  [0.5, 0.8) 0.592 / 1.000 [0.566, 1.000] n=5; [0.8, 0.95) 0.891 /
//	  0.800 [0.376, 0.964] n=5; none at P >= 0.95
//	together, groups: [0, 0.5) 0.090 / 0.232 [0.212, 0.253] n=1602;
//	  [0.5, 0.8) 0.598 / 0.643 [0.458, 0.793] n=28; [0.8, 0.95) 0.945 /
//	  1.000 [0.342, 1.000] n=2; P >= 0.95 (0.961 said): 12 of 13 right
//	  [0.667, 0.986]
//
// No bin is over-confident, pooled or on a seed, and the claims given
// P >= 0.95 are not measurably below 95% right; but there are too few of
// them to show the target either: every pooled Wilson lower bound at
// P >= 0.95 is under 0.93 (the one wrong group, at 0.954 on seed 5's
// together chain, was three addresses of two other wallets, claimed in
// a session of a third).
//
// On seeds 6 to 21, never looked at before (1816 s), pooled:
//
//	spread, scripts: [0, 0.5) 0.055 / 0.161 [0.155, 0.167] n=14823;
//	  [0.5, 0.8) 0.613 / 0.997 [0.988, 0.999] n=601; [0.8, 0.95) 0.853 /
//	  1.000 [0.943, 1.000] n=64; none at P >= 0.95
//	spread, groups: [0, 0.5) 0.011 / 0.185 [0.174, 0.196] n=4402;
//	  [0.5, 0.8) 0.535 / 0.881 [0.811, 0.928] n=118; [0.8, 0.95) 0.941 /
//	  1.000 [0.994, 1.000] n=647; P >= 0.95 (0.959 said): 115 of 115
//	  right [0.968, 1.000]
//	together, scripts: [0, 0.5) 0.067 / 0.132 [0.127, 0.136] n=23004;
//	  [0.5, 0.8) 0.597 / 0.571 [0.326, 0.786] n=14; [0.8, 0.95) 0.853 /
//	  1.000 [0.676, 1.000] n=8; none at P >= 0.95
//	together, groups: [0, 0.5) 0.088 / 0.220 [0.210, 0.229] n=7099;
//	  [0.5, 0.8) 0.586 / 0.789 [0.706, 0.854] n=114; [0.8, 0.95) 0.942 /
//	  0.882 [0.657, 0.967] n=17; P >= 0.95 (0.958 said): 38 of 42 right
//	  [0.779, 0.962]
//
// The target is met by the spread chain's groups (115 of 115, Wilson
// lower bound 0.968; 141 of 141, 0.973, over seeds 2 to 21) and by the
// claims of both chains at P >= 0.95 pooled (153 of 157, 0.936; 199 of
// 204, 0.944, over 2 to 21), not by the together chain's groups (38 of
// 42, 0.779; 50 of 55, 0.804, over 2 to 21): no pooled bin is
// over-confident, but on seed 21 the together chain's groups given 0.95
// to 0.99 are 4 of 6 right [0.300, 0.903] at 0.964 said. Each of the
// five wrong groups at P >= 0.95 over seeds 2 to 21 is addresses of two
// or three other wallets (and their payees) in blocks the session
// fetched for its own. Scripts are given P >= 0.95 too seldom to show
// the target (none on seeds 6 to 21).
//
// Below 0.95 the attack says too little, not too much: on seeds 1 to 5
// the scripts and groups given less than 0.5 (0.006 to 0.090 said) are
// the wallet's 0.132 to 0.243 of the time on both chains, every seed,
// and on 6 to 21 so too but for the together chain's scripts on seeds 10
// and 16 (under their intervals by less than 0.05); on the spread chain
// those given 0.5 to 0.95 are right nearly always (scripts 164 of 165,
// groups 186 of 187 on seeds 2 to 5; 663 of 665 and 751 of 765 on 6 to
// 21; the bins saying 0.53 to 0.94), so that those bins too are
// under-confident.
//
// On the together chain the sessions of the wallets fetch mostly the
// same blocks, and each session's downloads explain the other wallets'
// payments in them (their receive addresses, change and payees) as well
// as its own: before package leak's coFetched gave each such claim its
// share of the claims the sessions of other addresses make on it, the
// groups given P >= 0.95 there on seed 1 were 10 of 16 right [0.386,
// 0.815], those given [0.8, 0.95) 0.940 said, 9 of 14 right, and
// scripts [0.8, 0.95) 0.866 said, 1 of 3 right; every wrong one another
// wallet's payment. The shares are honest but cost the right claims
// too: of the 19 right groups given 0.8 or more there, 4 still are, and
// the right groups given 0.5 to 0.8 are 2, so that about 13 are now
// below 0.5 beside the other wallets' claims on them.
//
// The test holds each bin in both directions: it fails on a shortfall on
// seed 1 (claims given P >= 0.95 measurably below 95% right, a bin
// over-confident by more than its Wilson interval and 0.05, or
// under-confident: below its Wilson interval and more than 0.05 below
// its fraction right) unless it is stated, and on a stated one that is
// met (statedShortfalls: the four bins below 0.5, and spread's scripts
// [0.5, 0.8)).
package walletcapture
