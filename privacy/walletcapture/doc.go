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
//	spread, scripts: [0, 0.5) 0.055 / 0.153 [0.131, 0.177] n=936;
//	  [0.8, 0.95) 0.912 / 0.981 [0.899, 0.997] n=52; none at P >= 0.95
//	spread, groups:  [0, 0.5) 0.001 / 0.212 [0.169, 0.262] n=297;
//	  [0.8, 0.95) 0.918 / 0.981 [0.901, 0.997] n=53; none at P >= 0.95
//	together, scripts: [0.5, 0.8) 0.625 / 0.467 [0.248, 0.699] n=15;
//	  [0.8, 0.95) 0.866 / 0.333 [0.061, 0.792] n=3; none at P >= 0.95
//	together, groups: [0.8, 0.95) 0.940 / 0.643 [0.388, 0.837] n=14;
//	  P >= 0.95: 10 of 16 right (0.625) [0.386, 0.815]
//
// On the spread chain nothing is given 0.95 or more, so that target is
// not measured there; the bins said are below what was right (the
// groups' [0, 0.5) far below). On the together chain the groups given
// P >= 0.95 are measurably below 95% right, a target not met that the
// test states with its figures (statedShortfalls; a shortfall not stated
// fails the test, and so does a stated one that is met): each
// wrong one is another wallet's payment (its receive address, its change
// and its payee) riding in blocks the session fetched for its own
// wallet, although every session is warned that the capture's wallets
// look like they pay each other.
package walletcapture
