// Package peer runs light-client sessions against a Bitcoin node over the
// peer-to-peer protocol, on top of btcd's peer and wire packages.
//
// Dial connects and completes the version handshake. SyncHeaders downloads
// the header chain with getheaders and checks its linkage and proof of work
// against the network parameters. Two scan modes then find the
// transactions of a watch list in a range of blocks:
//
//   - ScanBIP37 loads a BIP 37 Bloom filter (filterload), asks for filtered
//     blocks (getdata MSG_FILTERED_BLOCK), verifies every merkle proof
//     against the verified headers and mirrors the filter update rules
//     locally, so that later spends of matched outputs are found.
//   - ScanBIP157 downloads the basic compact-filter header chain (getcfcheckpt,
//     getcfheaders) and the filters (getcfilters), checks each filter
//     against its header, matches the watch list locally and fetches full
//     witness blocks only for the filters that match.
//
// Nothing the node sends is trusted: a filter that does not hash to its
// header, a merkle proof that does not lead to the header's merkle root,
// withheld transactions, silence or a dropped connection end the scan with
// a *PeerError naming the peer and what it did, wrapping one of the
// sentinel errors below.
//
// A Peer runs one operation at a time; concurrent calls are serialized.
// An operation ended by its context, by a timeout or by a lie drops the
// connection, since a late answer would be taken for the next request's:
// Dial again to continue.
package peer
