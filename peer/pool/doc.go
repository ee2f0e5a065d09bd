// Package pool keeps the peers of a light client, in the shape of btcd's
// connection manager beside its address manager (package addrbook) and
// its ban list (package banlist): it dials its members and redials them
// with a backoff, keeps the target count through discovery (the address
// book, DNS seeds, gossip), refuses the banned, and asks many members at
// once within a grace and a budget per operation (Each, Budget). A member
// cut off as too slow is not banned (being slow proves nothing) but sits
// out its redial backoff, short the first time and doubling while it
// stays slow; its slowness counts toward forgetting a member found by
// discovery only once it is still slow after a sit-out of the minute,
// where dials that failed and connections that did not last forget it
// after three (see maxFailures). A member found by discovery that it forgets
// leaves the record of its address for the pool's life: found again, it
// comes back with it (see record).
package pool
