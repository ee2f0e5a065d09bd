// Package neutrinocapture scores the block-download attack of package
// attack on a real BIP 157 client: lightninglabs/neutrino v0.16.0, the
// backend of lnd and btcwallet. It is a module of its own, so that
// neutrino and its dependencies stay out of spvfilter's go.mod.
//
// Its test builds a regtest chain on a real btcd, transaction by
// transaction (peertest.BuildLabelledChain, which main-module tests use
// too): background payments in every block (some spent later),
// and scripted wallets whose keys it knows, paid by payers that send
// their change to a new address each time and spend it in their next
// payment, and spending what they receive to payees while keeping
// change. Each wallet's sessions are neutrino ChainServices with fresh
// databases, connected only to a privacy/capture relay in front of btcd,
// rescanning from the wallet's birthday (neutrino's Rescan, watching the
// wallet's addresses). The relay's capture, the appearance index of the
// chain (written by package universe from the node's blocks, as "privacy
// universe --index" does) and labels made from the known keys are then
// what "privacy fetches" and "privacy evaluate" read, and the score is
// held to the targets of package simulate:
//
//	go test -run TestNeutrinoCapture -v
//
// TestNeutrinoCaptureVaried does the same on chains of wallets of 5 to
// 100 scripts that pay each other, reuse addresses and spend in later
// blocks, 16 wallets a seed (the default suite one seed; more with
// SPVFILTER_NEUTRINO_SEEDS=A-B), each wallet's client from a loopback
// address of its own and, again, every client from one address, and
// pools the seeds' claims per source:
//
//	SPVFILTER_NEUTRINO_SEEDS=201-208 go test -run TestNeutrinoCaptureVaried -v
//
// TestLeakAgainstCapture measures what a client's downloads reveal: one
// labelled wallet (peertest.WalletChain) scanned from its birth by the
// neutrino client and by spvfilter's, each through a relay of its own,
// and the attack and evaluation run on each capture. A client that
// fetches exactly its wallet's blocks must have the wallet's scripts of
// two or more appearances attributed at P >= 0.95 (see wantP for the
// short chain), and the table it logs is the one privacy/README.md
// quotes. spvfilter's scans, with one peer and with two, ask for the
// client's own leak report, which is held to the attack on their
// capture: per peer and colluding, never fewer watched scripts at
// P >= 0.95 or at P >= 0.5, nor a lower highest posterior. On a second
// chain, the same wallet beside other users' wallets, spvfilter scans
// without protection and with --privacy-target 0.5 (covers drawn as
// chains of the other users' scripts, session after session until they
// meet the target; a session short of them within its bound stops
// before fetching any of the wallet's blocks): the attack told the
// target gives no watched script
// above it at either peer or both colluding, and the client's report
// agrees. The chain has 2,000 blocks with the wallet's 20 scripts in
// 40; a short one of 450 blocks, the wallet's in 24, is run by hand:
//
//	SPVFILTER_WALLET_CHAIN=short go test -run TestLeakAgainstCapture -v
//
// TestLeakSmallAgainstCapture does the same for wallets of two scripts
// (a key paid once or twice, and its change) on a chain of 450 blocks
// with three other users' wallets, two peers each behind a relay:
// without protection both colluding peers give the wallet's group more
// than 0.5; with --privacy-target 0.5 no view gives a watched script
// nor its group more, and the client's report agrees.
package neutrinocapture
