// Package pool keeps the peers of a light client, in the shape of btcd's
// connection manager beside its address manager (package addrbook) and
// its ban list (package banlist): it dials its members and redials them
// with a backoff, keeps the target count through discovery (the address
// book, DNS seeds, gossip), refuses the banned, and asks many members at
// once within a grace and a budget per operation (Each, Budget).
package pool
