// Package pool keeps the peers of a light client, in the shape of btcd's
// connection manager beside its address manager (package addrbook): the
// hosts it refuses (BanList), kept in the data directory.
package pool
