package main

import (
	"errors"
	"fmt"
	"strings"

	"github.com/btcsuite/btcd/chaincfg"

	"github.com/spvfilter/spvfilter/peer"
	"github.com/spvfilter/spvfilter/peer/client"
)

// errEchoes is the failure of a command whose every node sent back the
// messages it was sent: a TCP echo service, or a mirror, and no node.
var errEchoes = errors.New("no node: every node given sends back what it is sent")

// echoWords says that a node answered the version message with this
// client's own, its nonce included: what a TCP echo service does, and no
// node of params' network.
func echoWords(params *chaincfg.Params) string {
	return fmt.Sprintf("it sends back what it is sent (its version message is this client's own, user agent %s): an echo service, no %s node (is the port right? %s nodes listen on port %s by default)",
		peer.UserAgent, params.Name, params.Name, params.DefaultPort)
}

// isEcho reports whether the peer of st sent back this client's own
// version message: its handshake failed with peer.ErrEcho (the nonce of
// that very connection). A node's user agent is its own word, and a node
// may take ours: that alone names no echo. (The one thing it would tell
// beyond the nonce, two of this client's connections joined to each
// other, each getting the other's version, stalls at the first request
// and is named as such after --timeout.)
func isEcho(st client.PeerStatus) bool {
	return errors.Is(st.Err, peer.ErrEcho)
}

// dropEchoes removes from c every peer that sent back this client's own
// version message (see echoWords), which would otherwise be asked and
// waited for until it is dropped as too slow, or read as a node that
// lacks a service. It returns a warning naming each, by the flag that
// gave it (from), and fails when no other peer is left, with the reason
// of each echo and of each other peer not used (one that could not be
// reached).
func dropEchoes(c *client.Client, params *chaincfg.Params, from nodeFlags) ([]string, error) {
	var echoes, unused []string
	others := 0
	for _, st := range c.Peers() {
		switch {
		case isEcho(st):
			echoes = append(echoes, st.Address)
		case st.Reason == "" && !st.Banned:
			others++
		default:
			unused = append(unused, from.named(fmt.Sprintf("peer %s: %s", st.Address, statusWords(st, params))))
		}
	}
	var warnings []string
	for _, addr := range echoes {
		if err := c.RemovePeer(addr); err != nil {
			return nil, fmt.Errorf("removing peer %s: %w", addr, err)
		}
		warnings = append(warnings, from.named(fmt.Sprintf("peer %s was not used: %s", addr, echoWords(params))))
	}
	if len(echoes) > 0 && others == 0 {
		var why []string
		for _, addr := range echoes {
			why = append(why, from.named(fmt.Sprintf("peer %s: %s", addr, echoWords(params))))
		}
		return nil, &restated{strings.Join(append(why, unused...), "; "), errEchoes}
	}
	return warnings, nil
}
