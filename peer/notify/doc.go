// Package notify tells of confirmations, spends and blocks over a light
// client (peer/client), with the semantics of lnd's chain notifier
// (chainntnfs.ChainNotifier), so that a Lightning node can run on the
// client.
//
// # Registrations
//
// RegisterConfirmations tells when a transaction (by txid and an output
// script it pays, or by the script alone) has reached numConfs
// confirmations: Updates says how many are left at each block, Confirmed
// carries the block, the transaction and its position once they are
// reached. If that block leaves the chain, NegativeConf carries the depth
// of the reorganization and the registration waits again; the
// confirmation in another block (or the same one, back on the chain) is
// told again. Done says the block is ReorgSafety deep: the registration
// is over.
//
// RegisterSpend tells when an outpoint (or any output paying a script)
// is spent in a block: Spend carries the spending transaction, the input
// that spends, the block and its height; Reorg says that block left the
// chain, and the spend is then told again where it is mined anew; Done
// says the spend is ReorgSafety deep.
//
// RegisterBlockEpochs tells of every block connected to the chain: from
// the caller's best block on (the blocks it missed first, from the fork
// if its best block left the chain), or from the tip. A reorganization
// below the first block told does not close the channel (lnd would read
// it as the notifier's end): the new chain's blocks are told from the
// fork.
//
// A height hint is the lowest height the event can be at: what happened
// at or above it before the registration is found (a BIP 157 scan of the
// range, GetUtxo for an outpoint's spend), what happens later as it comes.
// Every notification is sent at most once per chain: a block that leaves
// the chain and comes back is a new chain.
//
// # How
//
// One following rescan of the client (client.Rescan) runs from ReorgSafety
// blocks below the peers' tip (Start waits for the client's headers), so
// that every block a notification may still rest on is one it reported; a
// registration adds its script or outpoint to the rescan's watch list
// (Update) and returns at once; a worker then scans the history below
// what the rescan scans from then on. A step of the rescan that fails (a
// peer that stalls, none left) is followed, after a backoff doubling up
// to ten seconds, by a new rescan from the last block reported with the
// same watch list (the blocks reported that left the chain meanwhile told
// disconnected first); Err says why until a block is reported again, and
// only Stop ends the registrations. The rescan's events drive each
// registration's state; what the history finds joins it, a block found
// twice counting once. Everything rests on the client's verification: a
// peer that lies about a filter is caught and banned as in any scan, and
// a block whose filter rests on one peer (the only one in use, or the only
// one whose chain holds it) names it in the notification (OnePeer),
// found by the rescan or by a history scan. A history scan that rested on
// one peer while others that serve filters were set aside (dropped,
// unreachable) is scanned again, with the backoff, for up to two
// minutes; one whose result still rests on one peer is kept, and scanned
// again once a peer serving filters that it neither rested on nor was
// scanned again for holds its blocks (a peer added, or one set aside
// back): the client then compares the two peers' filter headers and bans
// the one a block proves false. A liar left alone, for a moment or from
// the start, would otherwise hide for good what its filters leave out.
// A history scan done is scanned again, from the lowest height given up,
// when the client gives up filter headers it covered and verifies them
// anew (client.Client.Revised): a peer's late word differed from those
// the scan rested on, and may prove them false, colluders that agreed
// included. The revisions are coalesced: a history is scanned again for
// them at most once every five seconds, from the lowest height they gave
// up, however many come (peers that have the client revise again and
// again do not have every history scanned again for each).
//
// lnd asks for a script alone with a zero txid or the zero outpoint: both
// mean nil here.
//
// # Bounds
//
// Each registration delivers its notifications in order from a goroutine
// of its own, so the rescan never waits for a reader; at most
// maxPending notifications wait for a reader (updates of confirmations
// left coalesce to the newest first), and none longer than
// Options.MaxReaderWait, beyond which the registration is cancelled with a
// log line, and its event's Err returns a *StallError naming it and since
// when its reader held it up. Stalls lists what is held up under way:
// readers, history scans (what each waits for, or its last failure), and
// the rescan when it fails or has not reported blocks the client's chain
// holds. At most four history scans run at once, the
// others queued; a registration's ends with it. The items of
// registrations over leave the rescan's watch list once they are more than
// 64 and than the live ones (a new rescan from the last block reported
// takes the live ones): the list is bounded by the live registrations,
// which are bounded by the caller.
package notify
