// Package peer is one connection to a Bitcoin node over the peer-to-peer
// protocol, with btcd's wire types.
//
// Dial connects and completes the version handshake. The requests a light
// client makes are methods of Peer, each checked as far as one answer
// allows:
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
//     node holds it.
//
// Config.Timeout bounds the handshake and the whole answer to each request,
// however the node paces it; nothing else cuts a request short. A node that
// lies, stalls or disconnects is reported with a *PeerError naming it and
// wrapping one of the sentinel errors. A request ended by its context, a
// timeout or a lie drops the connection, since a late answer would be
// taken for the next request's: dial again to go on.
//
// Comparing several peers, settling their disputes and scanning is the
// client package's work; the header chain is package chain's.
package peer
