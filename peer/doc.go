// Package peer is one connection to a Bitcoin node over the peer-to-peer
// protocol, with btcd's wire types.
//
// Dial connects (directly, or through a SOCKS5 proxy such as Tor's: see
// SOCKS5 and Config.Dial) and completes the version handshake, in which
// the client advertises NODE_WITNESS (Config.Services) and negotiates
// addrv2 (BIP 155) with nodes that speak it. The requests a light client
// makes are methods of Peer, each checked as far as one answer allows:
//
//   - SyncHeaders extends a chain.Chain with the node's headers (every
//     header checked by the chain's rules) and checks the height the node
//     announced;
//   - GetCFCheckpt, GetCFHeaders and GetCFilters get BIP 157 filter-header
//     checkpoints, filter hashes and filters, of the type, count and blocks
//     asked for;
//   - GetBlocks gets witness blocks, each matching its hash, merkle root and
//     witness commitment;
//   - LoadFilter, AddToFilter, ClearFilter and GetFilteredBlocks speak BIP
//     37: every merkle block must prove its matches and be followed by them;
//   - Announce, HasTx and Broadcast offer a transaction and check that the
//     node holds it;
//   - GetAddr asks for the addresses of other nodes.
//
// Config.Timeout bounds the handshake and the whole answer to each request,
// however the node paces it; nothing else cuts a request short. It also
// bounds how long any message may take to come whole once its header
// came, so that a node cannot hold a buffer of ours by holding back a
// payload; between messages, a connection may idle. A node that
// lies, stalls, floods or disconnects is reported with a *PeerError naming
// it and wrapping one of the sentinel errors. A request ended by its
// context, a timeout or a lie drops the connection, since a late answer
// would be taken for the next request's: dial again to go on (one ended
// by its context before anything of it was written, while it waited for
// another request to give up the connection say, or while its first
// message waited in the write queue, keeps it and returns the context's
// error: nothing can come late; see HasTxWithin). A request under a
// context of FinishBegun's is not ended by it once it sent anything: it
// runs to its answer or its deadline, the connection kept if answered.
// Latency
// keeps a moving average of the node's answer times.
//
// A request for compact filters, their headers or their checkpoints, for
// filtered blocks, or for addresses is followed by a ping, its barrier. A
// node handles one peer's messages in order and queues all it sends for
// one before it handles the next (btcd and Core alike), so the barrier's
// pong comes after all the node will send of the answer: for filtered
// blocks and addresses, whose answer has no fixed length, it marks its
// end. A pong before the answer is whole means that no
// more of it will come: btcd says nothing when asked for the filters or
// filter headers up to a block that is no longer on its chain, which an
// honest reorganization between two requests leaves, and to every such
// request while it is not synced; waiting would cost the whole timeout. Such a request fails at once with an
// *UnansweredError, which wraps ErrStalled, and drops the connection, as
// a timeout does. The pong that follows a whole answer comes after the
// request ended: the last few barriers' pongs are dropped then, not
// charged as unsolicited. A node may send its pong early to end a
// request: that is no more than not answering, which it can always do.
//
// # Reading and writing
//
// One goroutine reads the connection. It answers pings and getdata itself
// and offers every other message to the request in flight, whose filter
// it runs itself, so that a message taken costs one hand-off; everything
// else is unsolicited and handled at once: announcements (inv, headers)
// go to Config.OnAnnounce, addresses (addr, addrv2) to
// Config.OnAddresses, rejects to Broadcast, and the rest is dropped. The
// filters of a getcfilters are checked and handed to GetCFilters' callback
// by the read loop itself, as each is read, so that they cost no hand-off
// at all. Nothing is queued for later: a connection holds at most one
// decoded message beside its request's answer. Messages are refused from their header (an
// *OversizeError) above btcd's size limits, above Core's 4,000,000 bytes
// for every command, unknown ones too, and above tighter limits for some
// (reject 64 kB, alert 4 kB, cfcheckpt 1 MB).
//
// One goroutine writes. Requests queue their messages (at most 8 wait)
// and wait for them to be written within their deadline; a request that
// gives up withdraws a message the writer has not taken yet, which is
// then skipped, never sent (one already being written is sent whole,
// and its request drops the connection). A pong, and the
// transactions the node asks for (at most 64 waiting), are kept aside and
// written between them: a pong due replaces an older one, and a
// transaction asked for twice is sent once. A node that does not read
// blocks the writer, not the reader, and costs nothing more.
//
// # Budgets
//
// Unsolicited messages are charged to per-connection token buckets: a
// burst, then a rate. A node that overdraws one is disconnected with
// ErrFlooding naming the kind of message and its rate.
//
//	ping              20, then 1/s       btcd and Core ping every 2 minutes
//	inv entries       5,000, then 1,000/s  at most 1,000 per inv, every few seconds
//	notfound entries  1,000, then 100/s  only in answer to our getdata
//	addr addresses    2,000, then 10/s   one getaddr answer of 1,000; relays of 10
//	getdata entries   1,000, then 100/s  once for each transaction we offer
//	headers           100, then 1/s      one per new block, if at all
//	reject            100, then 10/s     one per rejected message of ours
//	tx, block, merkleblock, cfilter, cfheaders, cfcheckpt
//	                  100, then 10/s     only in answer to requests
//	other commands    100, then 1/s      sendheaders, feefilter, btcd's getheaders
//	unknown commands  100, then 1/s      wtxidrelay, sendcmpct and the like
//	all unsolicited   4 MB, then 1 MB/s
//
// Each is well above what an honest node sends, named beside it; what
// an answer to a request brings is not charged.
//
// # Transactions
//
// Broadcast offers a transaction (inv), serves it when the node asks
// (getdata: with its witness for MSG_WITNESS_TX, without for MSG_TX) and
// watches the node's mempool. A reject message for it ends Broadcast at
// once with a *RejectError, whose RejectKind tells an invalid transaction
// or a double spend from a low fee, a policy refusal or one the node has
// already. btcd keeps a transaction spending outputs it does not know, or
// spent in its chain, as an orphan, without a reject: Broadcast reports
// that drop (a *DroppedError, ErrRejected) as soon as btcd answers a
// request sent after the transaction, since it reads nothing else while
// it processes one.
//
// Bitcoin Core gives neither answer: it sends no reject, and serves a
// transaction of its mempool by getdata only to a connection it
// announced it to, never the one it got it from. Its acceptance is learnt
// from its announcement instead. A TxWatch is a second connection to the
// node, with the version message's relay flag set, opened before the
// transaction is given: a node announces (inv) the transactions its
// mempool takes to its peers, on a trickle (Core: about 5 s to an
// inbound peer, on average), and the watch, on seeing the txid, asks for
// the transaction. The watch counts as open once the node answered a
// ping sent after the handshake: btcd takes a peer in among those it
// relays to only once it read the handshake's verack, which may come
// after the handshake ended on this side (and even then a moment later,
// so a btcd node may still miss announcing to a watch opened just
// before; its mempool tells anyway). Served with that txid, the announcement is a
// Sighting, which BroadcastWatched counts as the node's acceptance, on
// the node's word alone: a node that echoes what it is given can
// announce and serve it just as well. Announced and then answered with
// notfound, or with another transaction, it is a *FalseAnnounceError and
// ends BroadcastWatched at once; another transaction served for the
// txid asked, on a connection that asked for nothing else, is a lie no
// honest node tells (the client bans for it), while notfound is not (the
// node may have dropped the transaction meanwhile, for a replacement).
// Not answered at all, the check waits the connection's timeout, or the
// bound CheckWithin sets from when its getdata was written: then it is
// an *UnservedAnnounceError (ErrStalled), the watch's connection closed
// and nothing proved; a broadcast to a node that is not btcd, which
// gives no other word, then ends at once with no verdict (a
// *NoVerdictError whose Unserved says so) rather than at the timeout.
// A watch keeps none of the other announcements, charged to the inv
// budget like any (a flood ends it with ErrFlooding), and reads what is
// served within the size limits above. A node that refuses the
// transaction announces nothing, and a node that is not btcd that neither
// shows it nor announces it within the timeout is a *NoVerdictError
// (ErrNoVerdict, not ErrRejected): nothing tells whether it took it.
// BroadcastUntil stops that wait early, once the caller has learnt what it
// needs elsewhere (another node proved the transaction propagated).
//
// Comparing several peers, settling their disputes and scanning is the
// client package's work; the header chain is package chain's.
package peer
