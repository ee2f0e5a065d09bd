// Package btcwallet is a chain backend for btcsuite/btcwallet v0.16.10:
// Backend implements its chain.Interface over spvfilter's light-client
// service (package peer/client), in place of btcwallet's neutrino backend.
// It is a module of its own, so that btcwallet, neutrino and their
// dependencies stay out of spvfilter's go.mod.
//
// The application connects a client to its peers and starts its service
// (client.Connect, Client.Start), gives it to New, starts the backend and
// hands it to the wallet (Wallet.SynchronizeRPC); see the Example. One
// client may serve several backends; a backend serves one life of a
// wallet, from Start to Stop, and leaves the client running. A wallet
// reads most filters once: the client's filter cache costs a restore
// about a tenth more CPU and memory (the README's benchmark), and
// client.Config.FilterCacheBytes below zero turns it off.
//
// # How btcwallet drives a backend
//
// What follows was read from btcwallet's source (chain/interface.go,
// chain/neutrino.go, wallet/chainntfns.go, wallet/wallet.go,
// wallet/rescan.go, wallet/createtx.go) and is checked by this package's
// tests.
//
// The wallet reads Notifications from the moment it is given the backend.
// On ClientConnected it checks its birthday block (a binary search over
// GetBestBlock, GetBlockHash and GetBlockHeader for a block within two
// hours of its birthday, which btcwallet keeps 48 hours earlier than it
// was given), then syncs: on networks other than regtest and simnet it
// first polls IsCurrent every second; a wallet opened with a recovery
// window recovers its addresses with FilterBlocks from its birthday block
// to GetBestBlock; it walks down from its tip comparing its block hashes
// with GetBlockHash and rolls back what changed; it calls NotifyBlocks,
// then Rescan from its tip with its addresses and unspent outputs. Rescan
// returns at once; the rescan's notifications do the rest, and its
// RescanFinished marks the wallet synced (Wallet.ChainSynced) and makes it
// send its unmined transactions again. NotifyReceived adds the addresses
// the wallet creates later (new addresses, change, imports);
// SendRawTransaction publishes its transactions; BlockStamp gives the
// height new transactions are built at.
//
// The wallet tells its birthday only to btcwallet's own backend types;
// this backend does not need it: the wallet's Rescan starts from the
// wallet's tip, which is at or after its birthday block. Wallet.Stop
// calls Stop and forgets the backend, so the application waits for it
// (WaitForShutdown).
//
// # Notifications
//
// Start queues ClientConnected. A Rescan then reports, for each block
// after its start, a FilteredBlockConnected with the block's relevant
// transactions (the wallet adds them to its store, in one database
// transaction) and a BlockConnected (the wallet moves its tip there:
// blocks come in height order); a RescanProgress after its first block
// and every 2,000 blocks while it catches up; once the rescan reaches the
// tip of the peers, one RescanFinished; then it follows new blocks the
// same way. A wallet already at the tip gets RescanFinished at once.
// NotifyBlocks and NotifyReceived without a running rescan start one that
// follows the chain from the best block, without RescanProgress or
// RescanFinished, as btcwallet's neutrino backend does.
//
// The backend never sends RelevantTx: it sees transactions in blocks only
// (it does not follow the peers' mempools), and the wallet records the
// transactions it publishes itself, before SendRawTransaction. A payment
// to the wallet appears when it is mined.
//
// Notifications wait for the wallet in a queue of Config.QueueSize; when
// it is full, the rescan pauses (the wallet is never made to wait). A
// notification that was queued reaches the wallet in order, even after
// the rescan that produced it was replaced.
//
// # Reorganizations
//
// The client reports a reorganization as the disconnections of the blocks
// that left the chain, from the old tip down, then the new blocks. The
// backend passes the disconnections on lowest first, then connects again
// the block below them (the fork), then the new blocks. btcwallet v0.16.10
// needs this order. On a BlockDisconnected for the block it recorded at
// that height, disconnectBlock rolls back the transactions at that height
// and above and moves the wallet's tip to the height below, but records
// that tip with an empty hash: it looks up the hash below, stores it in
// the notification's copy and records the new tip without it. From the
// tip down, the next BlockDisconnected, one height lower, then no longer
// matches the wallet's record and is ignored: the transactions of that
// block stay confirmed in a block that is gone, the new branch's copies
// are added beside them, and the balance counts them twice
// (TestDeepReorganization shows it with the order of btcwallet's neutrino
// backend, which follows neutrino's). Lowest first, the first
// disconnection rolls everything back in one step and the others are
// above the wallet's new tip, so it ignores them. The BlockConnected of
// the fork block after them records its hash in place of the empty one,
// so that the wallet's block hashes stay the chain's (with the neutrino
// backend the wallet keeps an empty hash at the fork height, and a later
// reorganization reaching it would fail in GetBlockHeader).
//
// btcwallet ignores BlockDisconnected until its first RescanFinished, and
// the client's rescan knows nothing below the block it started from. A
// reorganization that comes before the rescan's RescanFinished, or that
// reaches below the blocks the rescan remembers (the block it started
// from, the wallet's tip, or 2,016 blocks down), ends the rescan with a
// ClientConnected after the disconnections: the wallet syncs again, walks
// down from its tip to the first block hash still in the chain, rolls
// back what is above it and calls Rescan from there.
//
// # Calls
//
// GetBestBlock, GetBlockHash, GetBlockHeader and IsCurrent answer from the
// client's verified header chain at once; GetBlockHeader also knows the
// last 2,016 blocks reported connected, after they leave the chain. GetBlock
// asks a peer for the block and checks it against its header.
//
// FilterBlocks (the recovery of a restored wallet, in batches of up to
// 2,000 blocks) scans its blocks with compact filters, as
// Client.ScanBIP157 does: filters downloaded from every peer in parallel,
// each checked against the filter headers the peers agree on, disputes
// settled by the block, matching blocks downloaded and searched with
// spvfilter's own matcher. The answer, for the first block holding a
// payment to the request's addresses or a spend of its outpoints, is built
// by btcwallet's own chain.BlockFilterer over the transactions the scan
// found in that block, in block order, so that it is the answer
// btcwallet's neutrino backend would give, without downloading the block
// again.
//
// Rescan replaces the running rescan; it watches the script of every
// address and every outpoint with the script its address pays (compact
// filters hold scripts). It resumes, after a failure of the client's
// rescan (no peer left, say), from the last block reported that is still
// in the chain, with backoff, reporting the blocks above it disconnected.
// NotifyReceived adds scripts to the running rescan and returns once the
// rescan has them: a step under way when it is called ends first, so that
// every block not yet scanned is scanned with them. It never waits for
// the wallet: btcwallet calls it inside a database transaction
// (SendOutputs, for the change address), while the wallet's own
// notification handler may be waiting for that database; a rescan waiting
// for the wallet to take a notification takes the scripts before its
// next step, and NotifyReceived returns then.
//
// SendRawTransaction succeeds once a peer holds the transaction
// (Client.SendTransaction); a transaction already in the last 144 blocks is
// chain.ErrTxAlreadyConfirmed, on which the wallet drops its unmined
// record; when no peer took it, a peer's reject is mapped by MapRPCErr
// (chain.ErrTxAlreadyInMempool and chain.ErrTxAlreadyConfirmed, which the
// wallet takes as success; chain.ErrMempoolConflict, chain.ErrInsufficientFee
// and the rest of btcd's reasons, as btcwallet maps btcd's RPC errors),
// and a failure without a reject (peers that stalled or left) wraps
// chain.ErrUndefined. A transaction sent is sent again at each new block
// (at most 1,000 kept), so that a peer that lost it or connected since
// gets it, until a block holds it or another spend of one of its inputs,
// or a peer refuses it for a reason other than holding it already. On
// the errors it does not take as success the wallet deletes the transaction from its store, as it does when a btcd
// or bitcoind backend cannot be reached; if the transaction reached the network all the same,
// the rescan finds it in its block. TestMempoolAccept returns
// chain.ErrUnimplemented, as btcwallet's neutrino backend does: the
// peer-to-peer protocol has no such query, and lnd skips its check on
// this error.
//
// BackEnd returns "spvfilter". btcwallet compares it with "neutrino" only,
// to wait for IsCurrent before a recovery on regtest and simnet: an
// application there starts the wallet once the client is current.
package btcwallet
