// Package addrbook remembers the nodes a light client may dial: what its
// peers gossip (addr, addrv2), what the network's DNS seeds answer
// (Seed), and what the client learnt dialling them (Book.Attempt,
// Book.Connected, Book.Good), kept on disk in the network's directory of
// a data directory. Book.Pick chooses the next address to dial as btcd's
// connection manager does: outside the network groups in use, the
// addresses that failed after those that did not.
//
// On public networks the book is btcd's address manager (package
// addrmgr of btcd v0.24.2) over its peers.json, checked before the
// manager reads it, since the manager deletes a file it cannot use
// without a word; on regtest and simnet, whose nodes live on loopback,
// it is a bounded list in peers-local.json. Book describes both, and
// their bounds.
package addrbook
