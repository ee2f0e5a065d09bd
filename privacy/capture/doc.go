// Package capture records what light clients ask a node for, and reads
// the records back grouped by connection.
//
// A Relay listens for clients as if it were a full node and relays every
// message, both ways, to an upstream node, which it makes appear to offer
// NODE_BLOOM (BIP 111) so that BIP 37 clients load their filter. It
// appends one JSON Record per line for each filterload, filteradd and
// filterclear a client sends, its version message (for the user agent),
// the blocks it asks for with getdata and its BIP 157 filter ranges
// (getcfilters, getcfheaders). Every frame is checked (magic, command,
// length, checksum) before anything is decoded, payloads grow only with the
// bytes that arrive, and the messages are decoded with btcd's wire
// decoders; a misbehaving client loses its own connection only, while a
// record the output does not take ends the relay with an OutError. Each
// record names its connection by the client's address and a session
// identifier unique across relay runs.
//
// Read reads a capture file back, refusing anything malformed with
// ErrBadRecord, and keeps reading the older record forms. Sessions replays
// the filter records of each connection into its filters (a filteradd
// grows the current filter, as does a filterload of it grown; a
// filterclear ends it); FetchSessions gathers
// each connection's block requests and filter ranges.
package capture
