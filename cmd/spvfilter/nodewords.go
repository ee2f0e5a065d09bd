package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"regexp"
	"strconv"
	"strings"
	"syscall"

	"github.com/btcsuite/btcd/chaincfg"
	"github.com/btcsuite/btcd/wire"

	"github.com/spvfilter/spvfilter/peer"
	"github.com/spvfilter/spvfilter/peer/addrbook"
	"github.com/spvfilter/spvfilter/peer/client"
	"github.com/spvfilter/spvfilter/peer/store"
)

// nodeFlags names, for each node address a command was given, the flag
// it came from (--peer, --connect); a node found through the DNS seeds
// or learnt from another is in none.
type nodeFlags map[string]string

// named says, in text that names nodes by address ("peer addr", "node
// addr", or the address alone), the flag each given node came from, at
// its first mention: "--connect addr". An address the text names by its
// flag already is left as it is.
func (nf nodeFlags) named(text string) string {
	for addr, flag := range nf {
		i := firstMention(text, addr)
		if i < 0 || strings.HasSuffix(text[:i], "--peer ") || strings.HasSuffix(text[:i], "--connect ") {
			continue
		}
		before := text[:i]
		for _, word := range []string{"peer ", "node "} {
			before = strings.TrimSuffix(before, word)
		}
		text = before + flag + " " + text[i:]
	}
	return text
}

// firstMention returns where text first names the node at addr, an
// address of its own and not part of a longer one, or -1.
func firstMention(text, addr string) int {
	addrByte := func(c byte) bool {
		return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte("-_.:[]", c) >= 0
	}
	for from := 0; ; {
		i := strings.Index(text[from:], addr)
		if i < 0 {
			return -1
		}
		i += from
		end := i + len(addr)
		if (i == 0 || !addrByte(text[i-1])) && (end == len(text) || !addrByte(text[end]) || strings.IndexByte(".:", text[end]) >= 0 && (end+1 == len(text) || !addrByte(text[end+1]))) {
			return i
		}
		from = i + 1
	}
}

// namedAll is named for each of texts.
func (nf nodeFlags) namedAll(texts []string) []string {
	out := make([]string, len(texts))
	for i, t := range texts {
		out[i] = nf.named(t)
	}
	return out
}

// lockHolder names the process that holds a data directory, from the
// store.ErrLocked refusing it: "another spvfilter (process 1234, a scan,
// follow or peers on the same directory)".
func lockHolder(locked error) string {
	var le *store.LockedError
	if errors.As(locked, &le) && le.PID > 0 {
		return fmt.Sprintf("another spvfilter (process %d, a scan, follow or peers on the same directory)", le.PID)
	}
	return "another spvfilter (a scan, follow or peers on the same directory)"
}

// nodeFailureFrom says, in the tool's words, why the nodes of params
// failed a command: a node that could not be reached is named by the
// flag that gave it (from), with the reason (refused, not found, no
// answer) and what to check; the data directory another process holds
// is named as --datadir; on a network without DNS seeds, the search for
// more peers, which could not succeed, is left out; when no node was
// given and the DNS seeds gave none that answered, the text asks whether
// the machine is online and names --peer. The cause stays
// wrapped. nil stays nil.
func nodeFailureFrom(err error, params *chaincfg.Params, datadir string, from nodeFlags) error {
	if err == nil {
		return nil
	}
	if errors.Is(err, store.ErrLocked) {
		return &restated{fmt.Sprintf("--datadir %s: in use by %s: wait for it to end, or give another --datadir", datadir, lockHolder(err)), err}
	}
	if errors.Is(err, store.ErrWrongNetwork) {
		return usageError{&restated{wrongStore(err, params, datadir), err}}
	}
	var pe *os.PathError
	if datadir != "" && errors.As(err, &pe) && errors.Is(pe.Err, fs.ErrPermission) {
		// A file of the data directory this user may not write.
		return usageError{&restated{fmt.Sprintf("--datadir %s: %s: %s: give a directory you can write in", datadir, pe.Path, fileProblem(pe.Err)), err}}
	}
	msg := err.Error()
	walkErrors(err, func(e error) {
		if pe, ok := e.(*peer.PeerError); ok {
			if why := peerFailure(pe, params); why != "" {
				msg = strings.Replace(msg, pe.Error(), why, 1)
			}
		}
		if se, ok := e.(*addrbook.SeedError); ok {
			msg = strings.Replace(msg, se.Error(), seedFailure(se), 1)
		}
	})
	if len(params.DNSSeeds) == 0 {
		if i := strings.Index(msg, "; finding peers: "); i >= 0 {
			msg = msg[:i]
		}
	}
	msg = seedsNotFound(msg)
	msg = strings.Replace(msg, "client: connect: "+client.ErrNoPeers.Error(), "no node could be reached", 1)
	if len(from) == 0 && len(params.DNSSeeds) > 0 && strings.HasPrefix(msg, "no node could be reached; finding peers: ") {
		// No node was given and the DNS seeds gave none that answered:
		// the machine may be offline, or the seeds down.
		msg += " (is this machine online? a node of your own can be given with --peer HOST:PORT)"
	}
	return &restated{say(from.named(peerWords(msg, params, false)), err), err}
}

// storeMeta finds, in store.ErrWrongNetwork's text, the file that names
// a store's network and format, and what it says.
var storeMeta = regexp.MustCompile(`: (\S+) says ("(?:[^"\\]|\\.)*"), want `)

// wrongStore says that --datadir holds a store of another network or
// format (store.ErrWrongNetwork): which file says so and what it says,
// without the text it should hold.
func wrongStore(err error, params *chaincfg.Params, datadir string) string {
	if m := storeMeta.FindStringSubmatch(err.Error()); m != nil {
		return fmt.Sprintf("--datadir %s: %s says %s, not that it keeps spvfilter's %s chain: the directory holds another network's or another version's data, or is damaged; give another --datadir",
			datadir, m[1], m[2], params.Name)
	}
	return fmt.Sprintf("--datadir %s: the chain saved there does not begin at %s's genesis block: give another --datadir", datadir, params.Name)
}

// Failures to reach a peer as package peer prints them, which the client
// passes on as text in a peer's reason and its warnings: a dial that
// failed, and an answer to the version message that is no message of the
// network (a service that is no node, a node of another network), and
// no answer to it or a hang-up.
var (
	dialText      = regexp.MustCompile(`peer (\S+): connect: peer disconnected: dial tcp(?: \S+)?: (.+?)(\.)?$`)
	handshakeText = regexp.MustCompile(`peer (\S+): version handshake: protocol violation: message for network\b.*$`)
	undecodable   = regexp.MustCompile(`peer (\S+): version handshake: protocol violation: undecodable (?:"(\S+)" )?message\b.*$`)
	lookupText    = regexp.MustCompile(`lookup (\S+?)(?: on \S+)?: no such host$`)
	silentText    = regexp.MustCompile(`peer (\S+): version handshake: peer stalled: .*within (\S+)$`)
	hungUpText    = regexp.MustCompile(`peer (\S+): version handshake: peer disconnected: connection closed during the handshake \(is the node on \S+\?\)$`)
	servicesBtcd  = regexp.MustCompile(`\(services ((?:SF[A-Za-z0-9]+|0x[0-9a-f]+)(?:\|(?:SF[A-Za-z0-9]+|0x[0-9a-f]+))*)\)`)
)

// peerWords says, in text that ends with a failure to reach a peer, the
// failure in the tool's words, as unreachable says it for an error. When
// named, the text names the peer already ("peer X was not used: ...",
// its reason): the peer is not named twice.
func peerWords(text string, params *chaincfg.Params, named bool) string {
	text = servicesBtcd.ReplaceAllStringFunc(text, func(m string) string {
		return "(services " + servicesText(servicesBtcd.FindStringSubmatch(m)[1]) + ")"
	})
	name := func(addr string) string {
		if named {
			return ""
		}
		return "peer " + addr + ": "
	}
	if m := handshakeText.FindStringSubmatchIndex(text); m != nil {
		addr := text[m[2]:m[3]]
		return text[:m[0]] + fmt.Sprintf("%sit answers with what is no %s message: no %s node listens there (another service, or a node of another network?)",
			name(addr), params.Name, params.Name)
	}
	if m := undecodable.FindStringSubmatchIndex(text); m != nil {
		command := ""
		if m[4] >= 0 {
			command = text[m[4]:m[5]]
		}
		return text[:m[0]] + name(text[m[2]:m[3]]) + undecodableWords(params, command)
	}
	if m := silentText.FindStringSubmatchIndex(text); m != nil {
		return text[:m[0]] + name(text[m[2]:m[3]]) + silentWords(params, text[m[4]:m[5]])
	}
	if m := hungUpText.FindStringSubmatchIndex(text); m != nil {
		return text[:m[0]] + name(text[m[2]:m[3]]) + hungUpWords(params)
	}
	m := dialText.FindStringSubmatchIndex(text)
	if m == nil {
		return text
	}
	addr, cause := text[m[2]:m[3]], text[m[4]:m[5]]
	hint := fmt.Sprintf("is a %s node listening on %s?", params.Name, addr)
	switch {
	case strings.HasSuffix(cause, "connection refused"):
		cause = "connection refused: nothing listens there"
	case lookupText.MatchString(cause):
		cause = "host " + lookupText.FindStringSubmatch(cause)[1] + " not found"
		hint = "is the host name right?"
	case strings.HasSuffix(cause, "i/o timeout"):
		cause = "no answer in time"
	case strings.HasSuffix(cause, "no route to host"), strings.HasSuffix(cause, "network is unreachable"):
		cause = "no route to the host"
	}
	return text[:m[0]] + fmt.Sprintf("%s%s (%s)", name(addr), cause, hint)
}

// statusWords says why a peer is not used, in the tool's words: its
// failure to connect as peerFailure says it (the peer not named again,
// as its status names it), any other reason as the client gives it; ""
// for a peer in use. A reason its error does not say (a redial's
// failure, where the error kept is the first one) is said as peerWords
// says a failure in text.
func statusWords(st client.PeerStatus, params *chaincfg.Params) string {
	var pe *peer.PeerError
	if !errors.As(st.Err, &pe) {
		return peerWords(st.Reason, params, true)
	}
	why := peerFailure(pe, params)
	if why == "" || !strings.Contains(st.Reason, pe.Error()) {
		return peerWords(st.Reason, params, true)
	}
	return strings.Replace(st.Reason, pe.Error(), strings.TrimPrefix(why, "peer "+pe.Peer+": "), 1)
}

// peerFailure says, in the tool's words, why a node could not be reached
// or is no node of params' network, or "" for another failure.
func peerFailure(pe *peer.PeerError, params *chaincfg.Params) string {
	switch pe.Op {
	case peer.OpConnect:
		return unreachable(pe, params)
	case peer.OpHandshake:
		var ne *peer.NetworkError
		var de *peer.DecodeError
		switch {
		case errors.Is(pe, peer.ErrEcho):
			return fmt.Sprintf("peer %s: %s", pe.Peer, echoWords(params))
		case errors.As(pe, &ne):
			return fmt.Sprintf("peer %s: %s", pe.Peer, otherNetwork(ne.Got, params))
		case errors.As(pe, &de):
			return fmt.Sprintf("peer %s: %s", pe.Peer, undecodableWords(params, de.Command))
		case errors.Is(pe, peer.ErrStalled):
			within := ""
			var te *peer.TimeoutError
			if errors.As(pe, &te) {
				within = te.Within.String()
			}
			return fmt.Sprintf("peer %s: %s", pe.Peer, silentWords(params, within))
		case errors.Is(pe, peer.ErrDisconnected):
			return fmt.Sprintf("peer %s: %s", pe.Peer, hungUpWords(params))
		}
	}
	return ""
}

// seedsNotFound names the DNS seeds that were not found, in text that
// names each once as seedFailure says it, in one clause: "DNS seeds a
// and b not found".
func seedsNotFound(msg string) string {
	head, tail, ok := strings.Cut(msg, "; finding peers: ")
	if !ok {
		return msg
	}
	var missing, rest []string
	for _, part := range strings.Split(tail, "; ") {
		if seed, found := strings.CutPrefix(part, "DNS seed "); found && strings.HasSuffix(seed, " not found") && !strings.Contains(seed, ":") {
			missing = append(missing, strings.TrimSuffix(seed, " not found"))
			continue
		}
		rest = append(rest, part)
	}
	if len(missing) < 2 {
		return msg
	}
	names := strings.Join(missing[:len(missing)-1], ", ") + " and " + missing[len(missing)-1]
	return head + "; finding peers: " + strings.Join(append([]string{"DNS seeds " + names + " not found"}, rest...), "; ")
}

// seedFailure says why a DNS seed gave no peers, without the resolver's
// address Go names.
func seedFailure(se *addrbook.SeedError) string {
	var dns *net.DNSError
	switch {
	case errors.As(se, &dns) && dns.IsNotFound:
		return fmt.Sprintf("DNS seed %s not found", se.Seed)
	case errors.As(se, &dns) && dns.IsTimeout:
		return fmt.Sprintf("DNS seed %s: no answer in time", se.Seed)
	case errors.As(se, &dns):
		return fmt.Sprintf("DNS seed %s: cannot be looked up: %s", se.Seed, dns.Err)
	}
	return se.Error()
}

// silentWords says that a node gave no answer to the version message
// within the time given ("" when unknown).
func silentWords(params *chaincfg.Params, within string) string {
	when := "in time"
	if within != "" {
		when = "within " + within
	}
	return fmt.Sprintf("no answer to the version message %s: no %s node answers there (another service, such as a node's RPC port? %s nodes listen on port %s by default)",
		when, params.Name, params.Name, params.DefaultPort)
}

// undecodableWords says that a node answered the version message with a
// message, of the command given ("" when unknown), that does not decode.
func undecodableWords(params *chaincfg.Params, command string) string {
	what := "a message"
	if command != "" {
		what = fmt.Sprintf("a %q message", command)
	}
	return fmt.Sprintf("it answers the version message with %s that does not decode: no working %s node listens there (another service, or a node of another network?)",
		what, params.Name)
}

// hungUpWords says that a node closed the connection on the version
// message.
func hungUpWords(params *chaincfg.Params) string {
	return fmt.Sprintf("it hung up on the version message: a node of another network does, as does one that bans this address (is --network %s right?)", params.Name)
}

// otherNetwork says that a node answers with messages of another network
// (of magic got) than params': one the tool knows by name, or none.
func otherNetwork(got wire.BitcoinNet, params *chaincfg.Params) string {
	for _, other := range []*chaincfg.Params{&chaincfg.MainNetParams, &chaincfg.TestNet3Params, &chaincfg.RegressionNetParams, &chaincfg.SimNetParams, &chaincfg.SigNetParams} {
		if other.Net == got && other.Net != params.Net {
			return fmt.Sprintf("it answers with what is no %s message: it is a %s node, no %s node listens there (is --network %s right?)",
				params.Name, other.Name, params.Name, params.Name)
		}
	}
	return fmt.Sprintf("it answers with what is no %s message: no %s node listens there (another service, or a node of another network?)",
		params.Name, params.Name)
}

// unreachable says why a node could not be reached, or "" when the
// connection was made and failed later.
func unreachable(pe *peer.PeerError, params *chaincfg.Params) string {
	var px *peer.ProxyError
	if errors.As(pe, &px) && px.Target != "" {
		return fmt.Sprintf("peer %s: the --proxy at %s did not connect to it: %s (is %s a socks5:// proxy, such as Tor? can it reach %s?)",
			pe.Peer, px.Proxy, proxyReason(px.Err), px.Proxy, px.Target)
	}
	var oe *net.OpError
	if !errors.Is(pe, peer.ErrDisconnected) || !errors.As(pe, &oe) || oe.Op != "dial" {
		return ""
	}
	reason := dialReason(oe)
	if px != nil {
		return fmt.Sprintf("peer %s: the --proxy is unreachable: %s (is the proxy at %s, such as Tor, running?)", pe.Peer, reason, px.Proxy)
	}
	hint := fmt.Sprintf("is a %s node listening on %s?", params.Name, pe.Peer)
	var dns *net.DNSError
	if errors.As(oe, &dns) {
		hint = "is the host name right?"
	}
	return fmt.Sprintf("peer %s: %s (%s)", pe.Peer, reason, hint)
}

// proxyReason says why a SOCKS5 proxy that was reached did not connect:
// its reply, or no answer in time.
func proxyReason(err error) string {
	var ne net.Error
	if errors.Is(err, os.ErrDeadlineExceeded) || errors.Is(err, context.DeadlineExceeded) || (errors.As(err, &ne) && ne.Timeout()) {
		return "no answer in time"
	}
	return err.Error()
}

// dialReason says why a connection could not be opened.
func dialReason(oe *net.OpError) string {
	var dns *net.DNSError
	switch {
	case errors.As(oe, &dns) && dns.IsNotFound:
		return fmt.Sprintf("host %s not found", dns.Name)
	case errors.As(oe, &dns):
		return fmt.Sprintf("cannot look up host %s: %s", dns.Name, dns.Err)
	case errors.Is(oe, syscall.ECONNREFUSED):
		return "connection refused: nothing listens there"
	case errors.Is(oe, syscall.EHOSTUNREACH), errors.Is(oe, syscall.ENETUNREACH):
		return "no route to the host"
	case errors.Is(oe, os.ErrDeadlineExceeded) || oe.Timeout():
		return "no answer in time"
	}
	if oe.Err != nil {
		return oe.Err.Error()
	}
	return oe.Error()
}

// serviceBits are the service flags by the names the BIPs and Bitcoin Core
// give them, the one vocabulary the tool shows them in, in bit order.
var serviceBits = []struct {
	flag wire.ServiceFlag
	name string
}{
	{wire.SFNodeNetwork, "NODE_NETWORK"},
	{wire.SFNodeGetUTXO, "NODE_GETUTXO"},
	{wire.SFNodeBloom, "NODE_BLOOM"},
	{wire.SFNodeWitness, "NODE_WITNESS"},
	{wire.SFNodeXthin, "NODE_XTHIN"},
	{wire.SFNodeCF, "NODE_COMPACT_FILTERS"},
	{wire.SFNodeNetworkLimited, "NODE_NETWORK_LIMITED"},
}

// serviceNames lists the services of f by their BIP names, an unnamed bit
// as "bit N".
func serviceNames(f wire.ServiceFlag) []string {
	out := []string{}
	for _, s := range serviceBits {
		if f&s.flag != 0 {
			out = append(out, s.name)
			f &^= s.flag
		}
	}
	for bit := 0; f != 0; bit++ {
		if f&(1<<bit) != 0 {
			out = append(out, fmt.Sprintf("bit %d", bit))
			f &^= 1 << bit
		}
	}
	return out
}

// servicesText says in BIP names the services btcd's ServiceFlag.String
// wrote (SFNodeNetwork|SFNodeBloom|0x20).
func servicesText(btcd string) string {
	var f wire.ServiceFlag
	var rest []string
	for _, part := range strings.Split(btcd, "|") {
		if part == "" {
			continue
		}
		known := false
		for _, s := range serviceBits {
			if part == s.flag.String() {
				f |= s.flag
				known = true
			}
		}
		if v, err := strconv.ParseUint(strings.TrimPrefix(part, "0x"), 16, 64); !known && strings.HasPrefix(part, "0x") && err == nil {
			f |= wire.ServiceFlag(v)
			known = true
		}
		if !known {
			rest = append(rest, part)
		}
	}
	names := append(serviceNames(f), rest...)
	if len(names) == 0 {
		return "none"
	}
	return strings.Join(names, ", ")
}
