package banlist

// HostKey returns the key a ban of addr is kept under (a host name or IP
// address, with or without a port): the host alone, but host:port for a
// loopback address (nodes on this machine are told apart by their
// ports), in one form however addr is written. A record of a peer's
// conduct kept by HostKey follows the host across its ports, as its ban
// does. An addr that names no host is its own key.
func HostKey(addr string) string {
	h, err := normalizeHost(addr)
	if err != nil {
		return addr
	}
	return h
}
