// Package client is a light client over several peers: it keeps one
// verified header chain for all of them, scans blocks with BIP 157 compact
// filters or BIP 37 Bloom filters, follows the chain as a service, answers
// the queries a wallet makes, and trusts no single peer.
//
// # The guarantee
//
// With at least one honest peer among those that answer, a BIP 157 scan
// finds every payment to and every revealed spend from the watched scripts
// in the range, or fails naming the peers it could not decide between.
// What rests on one peer is said: ScanResult.OnePeer and Event.OnePeer name
// the heights only one peer's chain reached and that peer, and a client of
// a single peer says so in every result's Warnings. Being ahead, fast or
// first buys a peer nothing: what a following rescan reported resting on
// one peer (named, or the only one live) it scans again once another peer
// holds those blocks, whether the first was banned, went away or is still
// there, and reports the matches it missed (EventMatch, then
// EventRechecked), nothing twice and nothing disconnected; so it does for
// the blocks it reported whose filter headers were verified anew to other
// values (a slower peer's word proved the first ones false), within the
// last 2,016 blocks it remembers (below, a warning names the heights it
// can no longer scan again); the filter headers a client's only peer
// stated are asked again then too. BIP 37 results rest on the node that filtered
// (its Bloom filter also tells that node which scripts are watched).
//
// # Verifying filter headers
//
// Filter headers are verified by height, not by tip. Each peer's tip is
// measured by what it serves (a locator and a search over its headers,
// not its version message), and every peer is asked about every height of
// the range its chain holds, its reach. Because each filter header commits
// to all those before it, two peers that agree at a height agree below it,
// so only the heights above the second-highest reach rest on one peer.
//
// The work runs segment by segment between the BIP 157 checkpoints (every
// 1,000 blocks). Checkpoints come from every peer up to its reach and are
// compared first, lowest disagreement first, since a false filter changes
// every checkpoint after it. A segment that ends at a checkpoint at least
// two peers agree on is taken from one of them and checked against it.
// A scan, which downloads the segment's filters anyway, takes their
// hashes instead, the filters of the segments ahead downloading while
// one is verified: filters that reach the agreed checkpoint from the
// agreed filter header before it are the ones it commits to, and a node
// looks up a segment's filter hashes at nearly the cost of small (1.4 KB)
// filters, so asking both would nearly double its work there (for
// filters of full blocks, about 20 KB, which it reads and sends at far
// more cost, the hashes add 3 to 7% to its CPU); filters that miss their
// server's own checkpoint prove it wrong: the segment's hashes are then
// asked, and the first filter off them is its server's word if it
// arrived as that server sent it (its payload checksum, unchecked as it
// was read, see peer.PayloadSum), else it is asked again, to tell damage
// on the way from a lie. A peer serves at most 8 MiB of filters
// unchecked over the fed segments not verified yet: a segment whose
// filters would pass that, at the size of the peer's last filters, has
// its hashes asked before them, and every filter of it is checked
// against its own as it is read, so that a server of false filters of
// the largest size is banned within about 8 MiB of them. A batch is asked
// in requests sized so (the first of a peer 32 filters), so that an
// honest node of large filters serves no filter the scan does not read;
// one whose filters grow far past its last ones has its batch cut where
// they pass 8 MiB, its connection dropped and dialled again. It
// does so only where asking for the hashes would cross-check nothing
// more: every peer stated that checkpoint or holds none of the
// segment, nothing of it is verified, stored or in conflict. Every peer
// whose reach ends inside a segment states its part of it,
// compared height by height. There one peer of those reaching highest
// states the hashes and every other only its word on the filter header
// at its own reach (a getcfheaders of one hash, with the header before
// it), which commits to the hashes below: a following client pays one
// short answer a peer for each new block. A word that differs has every
// peer state its part in full, settled as below, and a peer whose hashes
// do not lead to its own word contradicted itself. A peer asked from a
// height states the filter header before it too. Up to the chain's last
// checkpoint height the agreed checkpoints bind that header; above, the
// one verified may rest on the others alone (the peer was away, or a
// block behind), so a peer stating another is no liar for it: the heights
// from the last checkpoint are asked again of every peer and settled as
// below, and the peer's word is held against its own hashes then.
//
// Each disagreement is settled at the first height the sides dispute. The
// block is downloaded and each side's filter checked against it by
// gcs.CheckBasic, by consensus rules alone: its output scripts, the scripts
// its P2SH-wrapped segwit inputs spend (BIP 141 allows no other), the count
// of items. A filter the block proves false bans its peers, with the proof
// in the ban. What the block cannot decide is a Conflict: what other inputs
// show of the scripts they spend (P2PKH, P2SH, native segwit, P2TR script
// paths) holds only if the outputs they spend were of standard types, which
// consensus does not require (OP_DROP OP_TRUE spent with OP_1 pushed looks
// like a P2SH spend), so the conflict says which side the block favours if
// they were; P2PK, bare multisig and P2TR key-path spends show nothing.
// Nobody is banned for a conflict, however many peers agree (a majority
// buys no trust); the result names the sides; the block is scanned whole,
// so what it holds is found whichever side is right; and the peers of every
// side are still asked: each states its own filter headers from the segment
// where their checkpoints part, compared height by height, so a later lie
// is caught as any other. Near the tip each is asked for the new heights
// alone, from its own filter header where it was last compared, kept per
// peer (see ownheaders.go): a conflict costs no more a block than
// agreement, and a peer stating another header there contradicts itself,
// a proof that bans it. A side none of whose peers serves the filter it
// stated (a connection dropped, a stall) still stands: that proves
// nothing, so the block is a conflict, scanned whole, rather than won by
// the side that served; a peer failing so twice in a row is banned
// without proof. Beyond 64
// undecided blocks the verification fails with a *ConflictError; GetCFilter
// of a block in conflict does too, having no one filter to return.
//
// With a store (Config.DataDir), the stored filter headers are one more
// witness: compared wherever a peer holds those heights and settled by
// the block like a peer's word. A stored header the block proves false,
// or one the block cannot decide against the peers', is replaced by the
// peers' (they can be asked again; the store only holds what earlier
// peers said), with a warning naming the height, the latter reported as
// a Conflict and its block scanned whole. Filter headers that rest on a
// filter in conflict are not stored. The filters are then downloaded from
// all peers in parallel, each checked against the verified headers (a
// cached filter too), and matching blocks spread over the peers that hold
// them, no peer asked for more than its share (Config.FetchSpread, see
// spread.go), each checked against its header. What each peer was asked
// is kept in a ledger (ledger.go), across runs with a data directory.
//
// A peer slow to answer is compared while it answers within a grace after
// the first peer (twenty times the first answer's time, a quarter of the
// timeout, or a second, whichever is longest) and while what it has kept
// the scan waiting in all stays within its budget: twice the scan's own
// time, a quarter of the timeout at least (handshakes included), however
// fast and many the others, whose answers its own may be the only one to
// contradict (see pool.Each); then it is dropped for a minute with a
// warning naming its answer time, and a result that then rests on fewer
// peers says so. Bulk downloads go to the fastest peers,
// and a batch held too long is asked of a free peer too.
//
// # Scans, rescans and the service
//
// ScanBIP157 and ScanBIP37 scan a range once. NewRescan returns a Rescan
// that scans from a birthday and then follows the chain, reporting each
// block connected and, on a reorganization, each block disconnected from
// the lowest changed one, every event with its header; its watch list can
// grow while it runs (Update, UpdateWait, with a rewind). When no peer
// serves it, it waits for one to be dialled again, with a warning naming
// the peers once the wait outlasts the timeout; stopped then, it returns
// a *WaitError naming them, not nil.
//
// Start makes the client a service: it learns new blocks from the peers'
// announcements, syncs the announcer's headers (an announcement costs the
// other peers nothing; a peer that announces blocks it does not serve is
// banned) once the announcements settle (a quarter second without one, a
// second at most: blocks that come together are verified together, each
// peer asked once), keeps the filter headers verified up to the highest
// block a peer holds, redials lost peers with a backoff from half a second to a
// minute, and keeps Config.TargetPeers peers found from DNS seeds, addr
// gossip (btcd's addrmgr, persisted in the data directory) and
// Config.Peers, or Config.Peers alone with Config.ConnectOnly. Peers can be
// reached through a SOCKS5 proxy (Config.Proxy).
//
// # Bans
//
// Only a proof earns a ban: a block that proves a filter false, invalid
// headers, a flood, a protocol violation. Bans carry a reason, an expiry
// and whether they rest on a proof, and persist in the data directory
// (BanPeer, IsBanned, Unban, Bans). A peer of Config.Peers is the user's:
// banned with a proof, it is not used and every result's warnings name it
// and its ban; banned without one (by hand, or by a vote of an earlier
// version), it is used, with a warning.
//
// # Queries and broadcast
//
// BestBlock, IsCurrent, GetBlock (checked against its header), GetCFilter
// and FilterHeader (checked against the verified filter headers; a header
// only one peer stated returns a *OnePeerError) and GetUtxo (the
// outpoint's creation and spend, found through the filters) answer what a
// wallet asks. Called before the client is synced with its peers (right
// after Connect or Start), they wait until a header sync has ended with
// every live peer, within their context, or fail with a *SyncWaitError
// naming the peers waited on; a peer's own claim of its height counts for
// nothing. The client, its chain and its queries are safe for concurrent
// use, a following rescan included.
//
// SendTransaction gives a transaction, witness included, to one peer at a
// time and counts it propagated only once a peer it was not given to holds
// it or announces it (a peer that echoes back what it was given proves
// nothing); a transaction already mined is reported with its block, and a
// peer's reject comes back as a *peer.RejectError with its code and
// reason. Beside each peer it opens an announcement connection
// (peer.TxWatch) before the transaction is given: a node announces a
// transaction its mempool took, and Bitcoin Core, which sends no reject
// and serves no mempool transaction by getdata before it announced it,
// is known to have taken one this way only (SendResult.Announced; on the
// peer's own word when it was given the transaction). A peer is given it
// once its watch is open or two seconds after the send began, so a peer
// that never answers there costs no timeout. A false announcement (the
// transaction then not served) fails that peer at once, named; another
// transaction served for the txid asked, a proof of a lie, bans the peer,
// as does a flood on the watch. The watches close when the send ends.
//
// # Bounds
//
// Every peer has a bounded output queue and budgets for what it sends
// unasked (see package peer); a flooding peer is disconnected and banned.
// A BIP 37 node that forces filter reloads gets at most
// BIP37Options.MaxReloads fresh filters, then a warning names it.
package client
