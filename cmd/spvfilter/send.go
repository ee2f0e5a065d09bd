package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/btcsuite/btcd/chaincfg"
	"github.com/btcsuite/btcd/wire"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/spvfilter/spvfilter/peer"
	"github.com/spvfilter/spvfilter/peer/client"
)

// sendFlags holds the flags of "send".
type sendFlags struct {
	peerFlags
	network string
	timeout time.Duration
}

// sendLong is the help of send: how a transaction's acceptance is proven by
// a peer other than the one given it, the waits, the output, and what to do
// on each outcome.
const sendLong = `send gives a signed transaction (hex, as getrawtransaction prints it) to
the peers so that its acceptance is known from a peer other than the one
that took it: a peer's own word proves nothing, since a peer that echoes
what it is given says the same.

How. First it opens a second connection to each peer that asks the peer
to announce the transactions entering its mempool: a node announces a
transaction once it took it, and never to the connection it got it
from. An announcement counts once the peer serves the transaction when
asked for it; one announced and then not served (notfound, or another
transaction in its place) is named and not believed. Another transaction
in its place is a proven lie: that peer is banned, as is one that floods
the second connection. A peer is given the transaction once its second
connection is open, or two seconds after the send began (through
--proxy, half of --timeout if longer: Tor is slow to connect): one that
never answers there delays the send no longer. Likewise a peer asked
whether it holds the transaction that does not answer within that
bound counts as not holding it, and its connection is dropped ("no
answer whether it holds the transaction"): a silent peer delays the
send by that much, not by --timeout.

Then it gives the transaction to one peer at a time, in random order
(announces it, serves it when asked, then looks for it in that peer's
mempool or waits for that peer's announcement on the second connection:
Bitcoin Core serves no transaction of its mempool to a peer it has not
announced it to, and sends no reject message), and asks the peers it was
not given to whether they hold it, or waits for them to announce it, for
up to --timeout. The first that does proves it propagated ("propagated":
true), and the other peers are given it at once: a node that is not btcd
is then waited for no longer than a second left to it to ask for it,
even in its own turn ("not confirmed, not needed"), so the send ends
once the btcd nodes answered. Peers that hold it already count as seeing
it, so sending twice is harmless.

Waits. Bitcoin Core announces a transaction to an inbound connection
about 5 seconds after it took it, on average (a random delay), serves
none it has not announced and sends no reject: a node that is not btcd,
given the transaction and silent on it, is waited for until 30 seconds
after it was given it (--timeout if longer: a Core node that took it is
heard 99.75% of the time), unless a peer not given it proves it
propagated first. A btcd node that asked for it and then dropped it
without a reject message (an orphan, a spent output) is named as soon as
it answered a request sent after it, not after --timeout. When no peer
has taken it after two seconds, the last 144 blocks are searched by
their compact filters: a transaction already mined is reported with its
block ("mined").

Output. It prints the txid, then the peers that announced it, how long
after the send began and on whose word: "announced by 127.0.0.1:8333
after 4.2s (given it: on its own word)" for a peer it was given to,
"(not given it: it propagated)" for one that got it through the network
("announced_after_seconds", "given" and "seen" with --json). Warnings go
to standard error (with --json, in "warnings" alone).

Outcomes, and what to do:
  exit 0, no warning: it propagated; run send again later if it is not
    mined (send does not rebroadcast; sending twice is harmless).
  exit 0, "acceptance ... is unconfirmed" or "rests on one peer":
    only the peer(s) it was given to, or one peer alone, say they hold
    it ("propagated" is false, or "propagation_rests_on" names that
    peer): a peer that echoes transactions, or two addresses of one
    party, would look the same; give more peers, run by others (--peer).
  exit 0, "not confirmed, not needed": a node that is not btcd was not
    waited for once another peer proved propagation; nothing to do.
  exit 0, "already mined at height N": nothing was to be sent.
  exit 1, "rejected it as ...": the node's reason says what to fix (a
    fee too low, a non-standard or invalid transaction); "... neither an
    input script nor a witness: is the transaction signed?" after it
    names inputs left empty, as createrawtransaction leaves them: sign
    the transaction first.
  exit 1, "asked for it, then rejected it without a reject message":
    btcd keeps an orphan or refuses a spent output: send the
    transactions it spends first, or check the inputs.
  exit 1, "did not ask for it and does not hold it": the node refused it
    before; its log says why.
  exit 1, "no peer confirmed": the nodes are not btcd and gave no
    verdict (Core does not say when it refuses): the transaction may
    still be in their mempools; run send again later, or give a btcd
    peer, which says when it refuses.
  exit 1, "announced it and then ...: the announcement is not
    believed", "disconnected": that peer is named (and banned for a
    proven lie); give other peers.
  exit 130, "send interrupted: TXID was given to ... before it ended"
    (Ctrl-C): those peers may relay it, so it may reach the network;
    "was given to no peer": none was told of it.

A transaction to try it with, on regtest and with no wallet (btcd has
none): let the node mine to 2ND8PB9RrfCaAcjfjP1Y6nAgFd9zWHYX4DN, the P2SH
address of the script OP_TRUE (51), which anyone spends by pushing that
script (input script 0151), with no key; regtest only, since anyone can
take such coins. After 101 blocks the first coinbase is mature: btcctl
builds a transaction spending it with an empty input script, sed puts
0151 in its place, and send broadcasts it. With btcd, btcctl and
spvfilter built into bin/ and regtest/rpc.conf holding
"regtest=1 rpcuser=u rpcpass=p notls=1", one setting a line (README.md,
"A transaction for send on regtest", has the whole recipe, run by the
tests as written):

  ANYONE=2ND8PB9RrfCaAcjfjP1Y6nAgFd9zWHYX4DN
  bin/btcd -C regtest/rpc.conf --datadir=regtest --logdir=regtest --listen=127.0.0.1:18444 --rpclisten=127.0.0.1:18334 --miningaddr=$ANYONE > regtest/btcd.out 2>&1 &
  until bin/btcctl -C regtest/rpc.conf -s 127.0.0.1:18334 getblockcount >/dev/null 2>&1; do kill -0 $! || break; sleep 1; done
  bin/btcctl -C regtest/rpc.conf -s 127.0.0.1:18334 generate 101 >/dev/null
  coinbase=$(bin/spvfilter scan --connect 127.0.0.1:18444 --network regtest --watch $ANYONE --to 1 2>/dev/null | head -1 | cut -d' ' -f1)
  raw=$(bin/btcctl -C regtest/rpc.conf -s 127.0.0.1:18334 createrawtransaction "[{\"txid\":\"$coinbase\",\"vout\":0}]" "{\"$ANYONE\":49.999}")
  echo "$raw" | sed 's/^\(.\{82\}\)00/\1020151/' > regtest/tx.hex
  bin/spvfilter send --connect 127.0.0.1:18444 --network regtest @regtest/tx.hex

A transaction signed by a wallet (btcwallet's signrawtransaction, Bitcoin
Core's signrawtransactionwithwallet) is sent the same way.`

// sendExample shows send to one node and to two, with --json.
const sendExample = `  spvfilter send --connect 127.0.0.1:18444 --network regtest 0200000001…
  spvfilter send --connect 127.0.0.1:18444 --connect 127.0.0.1:18445 --network regtest @tx.hex --json`

func newSendCommand(a *app) *cobra.Command {
	var f sendFlags
	cmd := &cobra.Command{
		Use:     "send [--peer HOST:PORT [--peer HOST:PORT ...] | --connect HOST:PORT [--connect HOST:PORT ...]] [--network NET] TX_HEX|@FILE|-",
		Short:   "Broadcast a signed transaction to the nodes",
		Long:    sendLong,
		Example: sendExample,
		Args:    oneArg("TX_HEX", "the signed transaction, as hex, @FILE or - (standard input)"),
		RunE:    func(cmd *cobra.Command, args []string) error { return runSend(a, &f, args) },
	}
	f.register(cmd.Flags())
	return cmd
}

// register defines send's flags on fl, bound to f.
func (f *sendFlags) register(fl *pflag.FlagSet) {
	f.peerFlags.register(fl)
	fl.StringVar(&f.network, "network", "mainnet", networkNames())
	fl.DurationVar(&f.timeout, "timeout", peer.DefaultTimeout, "longest wait `DURATION` for each node to ask for the transaction and to hold it (for the announcement of a node that is not btcd, 30s at least)")
}

// sendWords says in the tool's words why each peer did not take the
// transaction: a rejection with the node's reason, one without a word
// (asked for, and not in the node's mempool), and a node that never
// asked for it, which a node does for a transaction it rejected before.
// The cause stays wrapped.
func sendWords(err error) error {
	msg := err.Error()
	var nc *client.NoneConfirmedError
	if errors.As(err, &nc) {
		words := make([]string, len(nc.Peers))
		for i, e := range nc.Peers {
			words[i] = sendWords(e).Error()
		}
		msg = strings.Replace(msg, nc.Error(), fmt.Sprintf("no peer confirmed transaction %v: %s; it may still be in their mempools: run send again later (sending twice is harmless), or give a btcd peer, which says when it refuses",
			nc.Txid, strings.Join(words, "; ")), 1)
	}
	walkErrors(err, func(e error) {
		if ne, ok := e.(*client.NotConfirmedError); ok {
			msg = strings.Replace(msg, ne.Error(), notConfirmedWords(ne), 1)
			return
		}
		var pe *peer.PeerError
		if !errors.As(e, &pe) || pe != e {
			return
		}
		var re *peer.RejectError
		var de *peer.DroppedError
		var fe *peer.FalseAnnounceError
		switch {
		case errors.As(pe.Err, &fe):
			msg = strings.Replace(msg, pe.Error(), fmt.Sprintf("peer %s announced it and then %s when asked for it: the announcement is not believed", pe.Peer, falseWhat(fe)), 1)
		case errors.As(pe.Err, &re):
			msg = strings.Replace(msg, pe.Error(), fmt.Sprintf("peer %s rejected it as %v: %s", pe.Peer, re.Kind, re.Reason), 1)
		case errors.As(pe.Err, &de):
			msg = strings.Replace(msg, pe.Error(), fmt.Sprintf("peer %s asked for it, then rejected it without a reject message: %s, as btcd does with a transaction that spends outputs it does not know (kept as an orphan: send the transactions it spends first) or that are spent already (the node's log says why)", pe.Peer, droppedWhen(de)), 1)
		case errors.Is(pe.Err, peer.ErrStalled) && pe.Op == "inv tx":
			msg = strings.Replace(msg, pe.Error(), fmt.Sprintf("peer %s did not ask for it and does not hold it: a node does not ask again for a transaction it has rejected (was it sent before, and refused? the node's log says why)", pe.Peer), 1)
		}
	})
	msg = strings.Replace(msg, "client: no peer took transaction ", "no peer took transaction ", 1)
	return &restated{msg, err}
}

// unsignedWords adds to err, a send that failed, that the inputs of tx
// with neither an input script nor a witness look unsigned, when some
// have: createrawtransaction's output sent as it is was refused in the
// node's script-engine words ("index 0 is invalid for stack size 0"),
// which do not say the transaction was never signed. Such an input is
// valid only if the output it spends needs nothing (OP_TRUE), so the
// words are a question, and a send that succeeded is not warned.
func unsignedWords(err error, tx *wire.MsgTx) error {
	var empty []string
	for i, in := range tx.TxIn {
		if len(in.SignatureScript) == 0 && len(in.Witness) == 0 {
			empty = append(empty, strconv.Itoa(i))
		}
	}
	if len(empty) == 0 {
		return err
	}
	which := "input " + empty[0] + " has"
	if len(empty) > 1 {
		which = "inputs " + strings.Join(empty, ", ") + " have"
	}
	if len(empty) == len(tx.TxIn) && len(empty) > 1 {
		which = "its " + strconv.Itoa(len(empty)) + " inputs have"
	}
	return &restated{fmt.Sprintf("%s; %s neither an input script nor a witness: is the transaction signed? (createrawtransaction builds it unsigned: sign it first, with btcwallet's signrawtransaction or Bitcoin Core's signrawtransactionwithwallet)", err.Error(), which), err}
}

// notConfirmedWords says that a peer that gives no verdict of its own
// (Bitcoin Core) neither showed nor announced the transaction: it is not
// confirmed, which is not to say it refused it.
//
// A peer waited for no longer once another proved the transaction
// propagated is said to be so: nothing is wrong with the send. What
// became of its announcement is said as the client says it
// (NotConfirmedError.Announcement).
func notConfirmedWords(e *client.NotConfirmedError) string {
	how := e.Announcement()
	if e.Proven {
		return fmt.Sprintf("peer %s: not confirmed, not needed: it was given the transaction and %s within %v, when another peer proved it propagated and it was waited for no longer (Core announces on average every 5 s)", e.Peer, how, e.Waited.Round(100*time.Millisecond))
	}
	return fmt.Sprintf("peer %s: not confirmed (Core announces on average every 5 s; it does not say when it refuses): it was given the transaction and %s within %v", e.Peer, how, e.Waited.Round(100*time.Millisecond))
}

// bannedWords says that the peer was banned for what it did, if it was
// (a proven lie, a flood), to follow its failure.
func bannedWords(p client.PeerStatus) string {
	if !p.Banned {
		return ""
	}
	return "; banned for it"
}

// falseWhat says what a node that announced a transaction served
// when asked for it.
func falseWhat(e *peer.FalseAnnounceError) string {
	if e.Served != nil {
		return fmt.Sprintf("served another transaction, %v,", *e.Served)
	}
	return "answered that it does not have it (notfound)"
}

// announcedWords names the peers that announced the transaction, when,
// and on whose word, in the order of their addresses: "127.0.0.1:18444
// after 4.2s (given it: on its own word)" for a peer the transaction was
// given to, which says it took it and proves nothing more (a peer that
// echoes the transaction says the same); "... (not given it: it
// propagated)" for one that got it through the network.
func announcedWords(res *client.SendResult) string {
	var parts []string
	for _, addr := range slices.Sorted(maps.Keys(res.Announced)) {
		whose := "given it: on its own word"
		if slices.Contains(res.Seen, addr) {
			whose = "not given it: it propagated"
		}
		parts = append(parts, fmt.Sprintf("%s after %v (%s)", addr, res.Announced[addr].Round(time.Millisecond), whose))
	}
	return strings.Join(parts, ", ")
}

// droppedWhen says how the node's verdict on a dropped transaction is
// known: it had processed it (a longer --timeout would change nothing),
// or it neither showed it in its mempool nor announced it within
// --timeout (which does not prove it lacks it).
func droppedWhen(e *peer.DroppedError) string {
	if e.Processed {
		return "it was not in its mempool once the node had processed it (its answer to a later request came after it; a longer --timeout would not change this)"
	}
	return fmt.Sprintf("it was neither seen in its mempool nor announced within %v (--timeout)", e.Waited)
}

// sendPeerJSON is one peer's answer in --json output.
type sendPeerJSON struct {
	Address string `json:"address"`
	// Given: the transaction was given to this peer.
	Given bool `json:"given"`
	// Accepted: the peer says it holds the transaction.
	Accepted bool `json:"accepted"`
	// Seen: the peer held it without being given it.
	Seen bool `json:"seen"`
	// AnnouncedAfterSeconds is how long after the send began the peer
	// announced the transaction to a second connection of the tool's
	// (announcement checked: the peer served the transaction), null
	// when it did not during the send.
	AnnouncedAfterSeconds *float64 `json:"announced_after_seconds"`
	// Error says why the peer did not take the transaction, null when it
	// did.
	Error *string `json:"error"`
}

// sendJSON is the output of send --json.
type sendJSON struct {
	Txid       string `json:"txid"`
	Propagated bool   `json:"propagated"`
	// PropagationRestsOn is the one peer whose word "propagated" rests
	// on, null when none or several: it held the transaction without
	// being given it, and no other peer did (peers of one party, one
	// passing it to the other alone, would look the same).
	PropagationRestsOn *string        `json:"propagation_rests_on"`
	Mined              *minedJSON     `json:"mined"`
	Peers              []sendPeerJSON `json:"peers"`
	Warnings           []string       `json:"warnings"`
}

// minedJSON is where a transaction already in the chain was mined.
type minedJSON struct {
	Height    int32  `json:"height"`
	BlockHash string `json:"block_hash"`
}

// runSend broadcasts the transaction of args[0] to the flags' peers and
// prints what they did with it.
func runSend(a *app, f *sendFlags, args []string) error {
	params, err := lookupNetwork(f.network)
	if err != nil {
		return err
	}
	if f.timeout <= 0 {
		return notPositive("--timeout", f.timeout)
	}
	// Any node that relays transactions will do.
	ccfg, err := f.peerFlags.config(params, wire.SFNodeNetwork)
	if err != nil {
		return err
	}
	tx, err := a.readSendTx(args[0])
	if err != nil {
		return err
	}
	ctx, stop := a.signalContext(context.Background())
	defer stop()
	ccfg.Timeout = f.timeout
	c, err := client.Connect(ctx, ccfg)
	if err != nil {
		if err := interruptedBy(ctx, err, "send"); isInterrupted(err) {
			return err
		}
		return nodeFailureFrom(err, params, "", f.nodes())
	}
	defer c.Close()
	echoes, err := dropEchoes(c, params, f.nodes())
	if err != nil {
		return err
	}
	res, err := c.SendTransaction(ctx, tx)
	if err := interruptedBy(ctx, err, "send"); isInterrupted(err) {
		return sendInterrupted(err, res, f.nodes())
	}
	if err != nil {
		return nodeFailureFrom(unsignedWords(sendWords(err), tx), params, "", f.nodes())
	}
	propagated, warnings := sendVerdict(res, c.Peers(), params)
	warnings = f.nodes().namedAll(append(echoes, warnings...))
	a.warnBesideResult(warnings)
	if !a.json {
		return printSent(a.stdout, res)
	}
	return a.printJSON(newSendJSON(res, c.Peers(), params, propagated, warnings))
}

// sendInterrupted says in err, the send's interruption, which peers
// were given the transaction before it ended (its inv written: they may
// relay it, and so may their peers), or that none was, when res says.
func sendInterrupted(err error, res *client.SendResult, nodes nodeFlags) error {
	var ie *interruptedError
	if !errors.As(err, &ie) || res == nil {
		return err
	}
	if len(res.Given) == 0 {
		ie.kept = fmt.Sprintf("%v was given to no peer", res.Txid)
		return err
	}
	ie.kept = nodes.named(fmt.Sprintf("%v was given to %s before it ended: they may relay it, so it may reach the network; sending it again is safe (a node takes a transaction once)",
		res.Txid, strings.Join(res.Given, ", ")))
	return err
}

// readSendTx reads the transaction of the TX_HEX argument arg, refusing
// one a node would not relay.
func (a *app) readSendTx(arg string) (*wire.MsgTx, error) {
	raw, err := a.readHexArg("TX_HEX", arg)
	if err != nil {
		return nil, err
	}
	tx, err := decodeTx("TX_HEX", raw)
	if err != nil {
		return nil, err
	}
	if len(tx.TxIn) == 0 || len(tx.TxOut) == 0 {
		return nil, badInput("TX_HEX: %s and %s: not a transaction a node relays", plural(len(tx.TxIn), "input"), plural(len(tx.TxOut), "output"))
	}
	return tx, nil
}

// sendVerdict is whether the send res propagated, as far as the peers
// show it, and the warnings of the send and of its peers.
func sendVerdict(res *client.SendResult, peers []client.PeerStatus, params *chaincfg.Params) (bool, []string) {
	warnings := slices.Clone(res.Warnings)
	// A peer that held the transaction before this send (an earlier
	// send gave it to it) counts for the client as having seen it; with
	// no other peer holding it, its word is all there is.
	propagated := res.Propagated()
	if holders := slices.Compact(slices.Sorted(slices.Values(append(slices.Clone(res.Accepted), res.Seen...)))); res.Mined == nil && len(holders) == 1 && len(res.Seen) > 0 {
		propagated = false
		warnings = append(warnings, fmt.Sprintf("acceptance of %v rests on one peer, %s: it says it holds the transaction (it had it before this send, from an earlier one or the network) and no other peer says so; a peer that echoes transactions back would look the same (give several peers)",
			res.Txid, holders[0]))
	}
	if res.SeenAlone != nil {
		// (--json also names the peer in "propagation_rests_on".)
		warnings = append(warnings, fmt.Sprintf("%v: %v (give peers of other parties to prove it)", res.Txid, res.SeenAlone))
	}
	for _, p := range peers {
		if e, ok := res.Failed[p.Address]; ok {
			warnings = append(warnings, sendWords(e).Error()+bannedWords(p))
		} else if e, ok := res.LeftOut[p.Address]; ok {
			warnings = append(warnings, leftOutWords(p.Address, e))
		} else if p.Reason != "" {
			warnings = append(warnings, fmt.Sprintf("peer %s: %s", p.Address, statusWords(p, params)))
		}
	}
	return propagated, warnings
}

// leftOutWords says that the peer at addr was not given the transaction,
// left out before the send began for err (see client.SendResult.LeftOut).
func leftOutWords(addr string, err error) string {
	return fmt.Sprintf("peer %s: not given the transaction: its connection had ended and it was not dialled again in time (%v); run send again to give it", addr, err)
}

// printSent prints the txid of the send res, and where it was mined or
// who announced it.
func printSent(w io.Writer, res *client.SendResult) error {
	if m := res.Mined; m != nil {
		_, err := fmt.Fprintf(w, "%s  already mined at height %d in block %s\n", res.Txid, m.Height, m.BlockHash)
		return err
	}
	if len(res.Announced) > 0 {
		_, err := fmt.Fprintf(w, "%s  announced by %s\n", res.Txid, announcedWords(res))
		return err
	}
	_, err := fmt.Fprintln(w, res.Txid)
	return err
}

// newSendJSON is the --json output of the send res to peers.
func newSendJSON(res *client.SendResult, peers []client.PeerStatus, params *chaincfg.Params, propagated bool, warnings []string) sendJSON {
	out := sendJSON{Txid: res.Txid.String(), Propagated: propagated, Peers: []sendPeerJSON{}, Warnings: orEmpty(warnings)}
	if res.SeenAlone != nil {
		out.PropagationRestsOn = &res.SeenAlone.Seen
	}
	if m := res.Mined; m != nil {
		out.Mined = &minedJSON{Height: m.Height, BlockHash: m.BlockHash.String()}
	}
	for _, p := range peers {
		j := sendPeerJSON{Address: p.Address, Given: slices.Contains(res.Given, p.Address),
			Accepted: slices.Contains(res.Accepted, p.Address), Seen: slices.Contains(res.Seen, p.Address)}
		if d, ok := res.Announced[p.Address]; ok {
			secs := d.Seconds()
			j.AnnouncedAfterSeconds = &secs
		}
		if e, ok := res.Failed[p.Address]; ok {
			j.Error = orNull(sendWords(e).Error() + bannedWords(p))
		} else if e, ok := res.LeftOut[p.Address]; ok {
			j.Error = orNull(leftOutWords(p.Address, e))
		} else if p.Reason != "" {
			j.Error = orNull(statusWords(p, params))
		}
		out.Peers = append(out.Peers, j)
	}
	return out
}
