// Package btcwallet is to hold a chain backend for btcsuite/btcwallet
// v0.16.10 (its chain.Interface) over spvfilter's light-client service. It
// is a module of its own, so that btcwallet, neutrino and their
// dependencies stay out of spvfilter's go.mod.
//
// For now it holds the proof the backend will have to pass, run on
// btcwallet's own compact-filter backend, chain.NeutrinoClient over
// lightninglabs/neutrino v0.16.0: an end-to-end test of a real
// wallet.Wallet against btcd regtest nodes (a P2WPKH payment, a spend with
// SendOutputs, a reorganization, a restart, a restore from the seed with
// a birthday), with the backend as a parameter and every chain
// notification the wallet receives recorded and checked; and an opt-in
// benchmark of restores over a long chain of realistic filters. What
// follows is what btcwallet expects of a backend, read from its source
// (chain/interface.go, chain/neutrino.go, wallet/chainntfns.go,
// wallet/wallet.go, wallet/rescan.go, wallet/createtx.go) and observed in
// the test, and what spvfilter's service has to offer for each part: the
// plan of the adapter.
//
// # How btcwallet drives a backend
//
// The application starts the backend (Start) and hands it to
// Wallet.SynchronizeRPC, which starts the goroutine reading Notifications.
// The first notification must be ClientConnected: on it the wallet checks
// its birthday block (found by a binary search over GetBestBlock,
// GetBlockHash and GetBlockHeader for a block within two hours of its
// birthday, which btcwallet keeps 48 hours earlier than it was given),
// then syncs: on networks other than regtest and simnet it first polls
// IsCurrent every second; if the wallet was opened with a recovery window
// it recovers its addresses with FilterBlocks from the birthday block to
// GetBestBlock; it walks down from its tip comparing its block hashes
// with GetBlockHash and rolls back what changed; it calls NotifyBlocks,
// then Rescan from its tip with all its active addresses and unspent
// outputs. Rescan returns at once; the rescan's notifications do the rest
// and its RescanFinished marks the wallet synced (Wallet.ChainSynced).
// The same rescan then follows new blocks. NotifyReceived adds the
// addresses the wallet creates later (new addresses, change, imports);
// SendRawTransaction publishes its transactions, also again after every
// RescanFinished (resendUnminedTxs).
//
// Wallet.SynchronizeRPC tells the birthday only to btcwallet's own
// backend types (SetStartTime on a *chain.NeutrinoClient): another
// backend must be given the birthday by the application. Wallet.Stop
// calls Stop on the backend and forgets it, so Wallet.WaitForShutdown
// no longer waits for it: the application calls WaitForShutdown.
//
// # Notifications
//
// handleChainNotifications acts on seven types, the last two as pointers
// only (a RescanProgress or RescanFinished value is silently ignored):
//
//   - ClientConnected: start the sync above.
//   - FilteredBlockConnected: add the block's relevant transactions to the
//     store, in one database transaction. It does not move the wallet's
//     tip.
//   - BlockConnected: move the wallet's tip (SetSyncedTo). Once the
//     birthday block is set, the hash of the height below must already be
//     recorded: blocks must come in height order. While the wallet is not
//     synced, a block it cannot attach is ignored.
//   - BlockDisconnected: ignored unless the wallet is synced; if it is the
//     block the wallet recorded at that height, the tip moves to the
//     height below (GetBlockHeader of that block's recorded hash) and
//     every transaction at that height or above is unconfirmed.
//   - RelevantTx: add one transaction, mined or not.
//   - *RescanProgress: record the hashes of every height up to it
//     (GetBlockHash and GetBlockHeader each) and log.
//   - *RescanFinished: the same, then mark the wallet synced and
//     rebroadcast its unmined transactions.
//
// chain.NeutrinoClient produces them in this order, as the test records
// (heights of its run: the chain's tip at 719 when the wallet starts):
//
//	connect: ClientConnected, FilteredBlockConnected@401(0 tx), RescanProgress@401, BlockConnected@401,
//	         [FilteredBlockConnected, BlockConnected] 402..718, FilteredBlockConnected@719(0 tx), RescanFinished@719, BlockConnected@719
//	receive: FilteredBlockConnected@720(1 tx), BlockConnected@720
//	spend:   FilteredBlockConnected@721(1 tx), BlockConnected@721
//	reorg:   BlockDisconnected@721, FilteredBlockConnected@721(1 tx), BlockConnected@721, [FilteredBlockConnected, BlockConnected] 722
//	reopen:  ClientConnected, FilteredBlockConnected@723(0 tx), RescanProgress@723, BlockConnected@723, RescanFinished@723
//	restore: ClientConnected, RescanFinished@723
//
// Each block gives a FilteredBlockConnected (with its relevant
// transactions, often none) then a BlockConnected. RescanProgress comes
// once, after the first block at or past the birthday, and every 10,000
// heights before it. RescanFinished comes once per Rescan, when the last
// filtered block is the service's best block and the service is current,
// before that block's BlockConnected; at once if Rescan starts at the
// best block (the restore above, whose transactions came from
// FilterBlocks). A reorganization gives a BlockDisconnected for each
// block from the old tip down, then the new blocks. NeutrinoClient never
// sends RelevantTx: it does not follow the mempool, so the wallet learns
// of a payment when it is mined.
//
// Deeper reorganizations need care: in btcwallet v0.16.10,
// disconnectBlock records the wallet's new tip with an empty hash (the
// hash it looks up is stored in the notification's copy, not in the new
// tip), so the next BlockDisconnected, one height lower, no longer
// matches the wallet's record and is skipped: that block's transactions
// stay confirmed in a block that is gone, the new branch's transactions
// are added to the same height, and CalculateBalance then fails ("t:
// short read (expected 8 bytes, read 0)"). With neutrino's order this
// happened in each of 7 runs of this test with a two-block
// reorganization; the one run that passed (slowed by debug logging) did
// because neutrino had already forgotten the stale header, so that the
// first disconnection failed in GetBlockHeader and the wallet acted on
// the second. The test therefore reorganizes one block only. The adapter
// should announce a reorganization by a BlockDisconnected for the lowest
// disconnected block first (the wallet then unconfirms everything above
// it in one step, and ignores the higher ones), then the new blocks; a
// test of a deeper reorganization comes with it.
//
// # The 18 methods of chain.Interface
//
// Start() error: called by the application, not by the wallet. Neutrino:
// starts the ChainService and queues ClientConnected. Needs: the service
// started (syncing headers and filter headers in the background) and a
// subscription opened; ClientConnected first on the channel.
//
// Stop(): called by Wallet.Stop. Must end the rescan and close the
// notification channel; the service itself may be shared and go on.
// (NeutrinoClient.Stop leaves its rescan goroutine running, as its source
// notes.)
//
// WaitForShutdown(): waits for the goroutines Stop ended.
//
// GetBestBlock() (*chainhash.Hash, int32, error): birthday search, end of
// the recovery, confirmations (Wallet.FetchOutpointInfo). Needs: best
// block (hash, height) of the verified header chain.
//
// GetBlock(*chainhash.Hash) (*wire.MsgBlock, error): not called by package
// wallet; used by NeutrinoClient's FilterBlocks and by applications (lnd).
// Needs: block by hash, verified against its header (merkle root,
// witness commitment).
//
// GetBlockHash(int64) (*chainhash.Hash, error): every height of a catch-up
// (RescanProgress, RescanFinished), of the recovery and of the birthday
// search; the walk down at each sync. Needs: hash at a height of the best
// chain, from the header store.
//
// GetBlockHeader(*chainhash.Hash) (*wire.BlockHeader, error): the same
// callers, and BlockDisconnected handling, which asks for the header
// below the disconnected block by the hash the wallet recorded. Needs:
// header by hash, recent stale headers included.
//
// IsCurrent() bool: polled every second before the first sync on
// networks other than regtest and simnet, and before a recovery when
// BackEnd is "neutrino". Needs: "synced": headers and filter headers at
// the tips the peers announce, the tip recent.
//
// FilterBlocks(*FilterBlocksRequest) (*FilterBlocksResponse, error): the
// recovery only (a wallet opened with a recovery window, as a restore
// is). Batches of up to 2,000 blocks (hash, height, time), the external
// and internal addresses of the look-ahead window, the watched outpoints;
// the answer is for the first block with a match (BatchIndex, the
// addresses and outpoints found, the relevant transactions), nil if none;
// the wallet widens its window and asks again from the next block.
// Neutrino: for each block, its filter (retried up to 50 times 100 ms
// apart), matched against the scripts of the addresses and of the watched
// outpoints' addresses, the block fetched on a match and searched with
// chain.BlockFilterer, which also builds the answer. Needs: filter by
// block hash, verified against the filter-header chain, fetched in
// batches; spvfilter's matcher; block by hash, verified; the answer built
// with chain.BlockFilterer so that it is btcwallet's own.
//
// BlockStamp() (*waddrmgr.BlockStamp, error): the height and hash a new
// transaction is built at (createtx.go). Neutrino: the last BlockConnected
// the wallet has taken from the channel, so it never runs ahead of the
// wallet; an error after Stop. Needs: nothing of the service; the adapter
// keeps it.
//
// SendRawTransaction(*wire.MsgTx, bool) (*chainhash.Hash, error): see
// below. The wallet always passes false.
//
// Rescan(startHash, addrs, outpoints) error: from the wallet's tip with
// its addresses and unspent outputs; a new Rescan replaces the running
// one; it returns at once. Needs: a rescan from a block hash with scripts
// and outpoints, reporting each later block (hash, height, header time)
// with its relevant transactions in block order (spends of outputs it
// finds along the way included), saying when it reaches the tip of a
// current service, then following new blocks and reorganizations with
// connect and disconnect events carrying the header; updatable while it
// runs.
//
// NotifyReceived([]btcutil.Address) error: adds addresses to the running
// rescan from the next block on (neutrino: Update without a rewind); with
// no rescan running, starts one following from the tip. Needs: "add
// scripts to a following rescan", applied before it returns, so that no
// block slips between.
//
// NotifyBlocks() error: before Rescan in every sync; makes sure blocks are
// followed (neutrino: a rescan without addresses if none runs).
//
// Notifications() <-chan interface{}: called on every turn of the
// wallet's loop, so always the same channel; closed after Stop. Neutrino
// puts an unbounded queue between its rescan and the wallet.
//
// BackEnd() string: "neutrino" makes the wallet wait for IsCurrent before
// a recovery even on regtest and simnet; btcwallet has no other use for
// it.
//
// TestMempoolAccept([]*wire.MsgTx, float64): not called by btcwallet
// v0.16.10. lnd calls it and skips its check when the error is
// chain.ErrUnimplemented, which NeutrinoClient returns. The peer-to-peer
// protocol has no such query: the adapter returns chain.ErrUnimplemented.
//
// MapRPCErr(error) error: not called by package wallet; used by the
// backends' SendRawTransaction and by lnd. NeutrinoClient matches the
// error's text against chain.BtcdErrMap and then chain.BtcdErrMapPre2402
// (substrings, case and dashes ignored), else wraps chain.ErrUndefined.
//
// # Errors of SendRawTransaction
//
// publishTransaction (wallet.go) recognises, with errors.Is:
//
//   - chain.ErrTxAlreadyInMempool ("txn already in mempool"): success.
//   - chain.ErrTxAlreadyKnown ("txn already known") and
//     chain.ErrTxAlreadyConfirmed ("Transaction already in block chain"):
//     success, and the wallet drops its unmined record of the
//     transaction.
//
// Any other error makes the wallet delete the transaction from its store
// and return the error; after a RescanFinished (resendUnminedTxs) the
// transaction is dropped the same way. So an error must mean that the
// network refused the transaction: a broadcast no peer answered is not an
// error (neutrino returns nil then and keeps rebroadcasting at each
// block). The wallet's ErrInMempool, ErrAlreadyConfirmed, ErrMempoolFee
// and ErrDoubleSpend types are never returned by v0.16.10.
//
// The btcd reject reasons chain.BtcdErrMap maps (btcd v0.24.2 wording)
// include "already have transaction in mempool" (ErrTxAlreadyInMempool),
// "transaction already exists in blockchain" (ErrTxAlreadyConfirmed),
// "database contains entry for spent tx output" (ErrTxAlreadyKnown),
// "output already spent in mempool" (ErrMempoolConflict), "orphan
// transaction" (ErrMissingInputs), "fees which is under the required
// amount" (ErrMempoolMinFeeNotMet); older btcd says "already have
// transaction" and "transaction already exists". Over the peer-to-peer
// protocol btcd does not even ask for a transaction it has in its mempool
// or whose first two outputs are unspent in its chain (haveInventory), so
// these rejects are rare; Bitcoin Core sends no reject messages at all
// since version 0.20. The adapter maps spvfilter's typed reject errors
// (already in the mempool, already in the chain, double spend, fee,
// non-standard, invalid) onto these values and keeps the reject's code
// and reason in the error.
//
// # What the service must offer
//
//   - best block: hash, height, header time, of the verified header chain;
//     hash by height and header by hash, recent stale headers included;
//   - "current": headers and filter headers synced to what the peers
//     announce;
//   - block by hash, verified against its header;
//   - filter by block hash, verified against the agreed filter-header
//     chain, in batches of up to 2,000 blocks;
//   - follow new blocks with connect and disconnect events carrying the
//     header, in height order, a reorganization as its disconnections
//     then the new blocks;
//   - a rescan from a block hash with scripts and outpoints, updatable
//     (add scripts) while it follows, reporting relevant transactions per
//     block and when it has reached the tip;
//   - broadcast of witness transactions with typed reject errors, "no
//     answer" not being one;
//   - subscriptions started and stopped without stopping the service.
package btcwallet
