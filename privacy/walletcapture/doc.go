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
// Two chains are built, about 35 s each: "spread", each payment in a block
// of its round at random (a round is 7 blocks), and "together", all of a
// round's payments in one block, so that the wallets' blocks are mostly
// the same blocks. Measured (said / fraction right [Wilson interval] n):
//
//	spread, scripts: [0, 0.5) 0.055 / 0.156 [0.135, 0.181] n=940;
//	  [0.8, 0.95) 0.912 / 1.000 [0.924, 1.000] n=47; none at P >= 0.95
//	spread, groups:  [0, 0.5) 0.006 / 0.220 [0.177, 0.270] n=300;
//	  [0.5, 0.8) 0.502, the one wrong; [0.8, 0.95) 0.917 / 1.000
//	  [0.927, 1.000] n=49; none at P >= 0.95
//	together, scripts: [0.5, 0.8) 0.644 / 1.000 [0.439, 1.000] n=3;
//	  [0.8, 0.95) 0.940, the one right; none at P >= 0.95
//	together, groups: [0, 0.5) 0.072 / 0.243 [0.205, 0.284] n=449;
//	  [0.5, 0.8) 0.536 / 0.400 [0.118, 0.769] n=5; [0.8, 0.95) 0.940 /
//	  1.000 [0.439, 1.000] n=3; P >= 0.95: 1 of 1 right
//
// On the together chain the sessions of the wallets fetch mostly the
// same blocks, and each session's downloads explain the other wallets'
// payments in them (their receive addresses, change and payees) as well
// as its own: before package leak's coFetched gave each such claim its
// share of the claims the sessions of other addresses make on it, the
// groups given P >= 0.95 were 10 of 16 right [0.386, 0.815], those given
// [0.8, 0.95) 0.940 said, 9 of 14 right, and scripts [0.8, 0.95) 0.866
// said, 1 of 3 right; every wrong one another wallet's payment. The
// shares are honest but cost the right claims too: of the 19 right
// groups given 0.8 or more there, 4 still are, and the right groups
// given 0.5 to 0.8 are 2, so that about 13 are now below 0.5 beside the
// other wallets' claims on them (the groups [0, 0.5) are
// under-confident on both chains, as before). On the spread chain
// nothing is given 0.95 or more, so that target is not measured there.
// The test fails on a shortfall of these targets unless it is stated,
// and on a stated one that is met (statedShortfalls, none now).
package walletcapture
