package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/btcsuite/btcd/wire"
	"github.com/spf13/cobra"

	"github.com/spvfilter/spvfilter/peer"
	"github.com/spvfilter/spvfilter/peer/client"
)

func init() { registerCommand(newSendCommand) }

type sendFlags struct {
	peers   []string
	network string
	timeout time.Duration
}

func newSendCommand(a *app) *cobra.Command {
	var fl sendFlags
	cmd := &cobra.Command{
		Use:   "send --peer HOST:PORT [--peer HOST:PORT...] --network NET TX_HEX|@FILE|-",
		Short: "Broadcast a signed transaction to the nodes",
		Long: `send announces a signed transaction (hex, as getrawtransaction prints it) to
every --peer at once (inv), serves it to those that ask (getdata, tx), and
checks that each holds it in its mempool afterwards (getdata tx). It prints
the txid and exits 0 as soon as the broadcast is settled and at least one
peer holds the transaction; a peer that already had it counts, so sending
twice is harmless. It exits 1, naming every peer and what it did (rejected
it, never asked for it within --timeout, disconnected), when none does.

send does not rebroadcast: run it again until the transaction is mined.`,
		Example: `  spvfilter send --peer 127.0.0.1:18444 --network regtest 0200000001…
  spvfilter send --peer 127.0.0.1:18444 --peer 127.0.0.1:18445 --network regtest @tx.hex --json`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return a.runSend(&fl, args[0])
		},
	}
	f := cmd.Flags()
	f.StringArrayVar(&fl.peers, "peer", nil, "a node's HOST:PORT (repeatable)")
	f.StringVar(&fl.network, "network", "mainnet", networkNames())
	f.DurationVar(&fl.timeout, "timeout", peer.DefaultTimeout, "longest wait for each node to ask for the transaction and to hold it")
	_ = cmd.MarkFlagRequired("peer")
	return cmd
}

// sendPeerJSON is one peer's answer in --json output.
type sendPeerJSON struct {
	Address  string `json:"address"`
	Accepted bool   `json:"accepted"`
	Error    string `json:"error,omitempty"`
}

func (a *app) runSend(fl *sendFlags, arg string) error {
	params, err := lookupNetwork(fl.network)
	if err != nil {
		return err
	}
	if fl.timeout <= 0 {
		return badInput("--timeout %v: must be positive", fl.timeout)
	}
	raw, err := a.readHexArg("transaction", arg)
	if err != nil {
		return err
	}
	var tx wire.MsgTx
	r := bytes.NewReader(raw)
	if err := tx.Deserialize(r); err != nil {
		return badInput("transaction: %d bytes do not hold a whole transaction: %v", len(raw), err)
	}
	if r.Len() != 0 {
		return badInput("transaction: %d bytes after the end of the transaction", r.Len())
	}
	if len(tx.TxIn) == 0 || len(tx.TxOut) == 0 {
		return badInput("transaction: %d inputs and %d outputs: not a transaction a node relays", len(tx.TxIn), len(tx.TxOut))
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	c, err := client.Connect(ctx, client.Config{Peers: fl.peers, Params: params, Timeout: fl.timeout})
	if err != nil {
		return err
	}
	defer c.Close()
	res, err := c.SendTransaction(ctx, &tx)
	if ctx.Err() != nil && errors.Is(err, context.Canceled) {
		return errors.New("send interrupted")
	}
	if err != nil {
		return fmt.Errorf("send: %w", err)
	}
	var warnings []string
	for _, p := range c.Peers() {
		if e, ok := res.Failed[p.Address]; ok {
			warnings = append(warnings, fmt.Sprintf("peer %s did not take the transaction: %v", p.Address, e))
		} else if p.Reason != "" {
			warnings = append(warnings, fmt.Sprintf("peer %s: %s", p.Address, p.Reason))
		}
	}
	a.warn(warnings)
	if !a.json {
		_, err := fmt.Fprintln(a.stdout, res.Txid)
		return err
	}
	out := struct {
		Txid     string         `json:"txid"`
		Peers    []sendPeerJSON `json:"peers"`
		Warnings []string       `json:"warnings"`
	}{Txid: res.Txid.String(), Peers: []sendPeerJSON{}, Warnings: orEmpty(warnings)}
	for _, p := range c.Peers() {
		j := sendPeerJSON{Address: p.Address}
		if e, ok := res.Failed[p.Address]; ok {
			j.Error = e.Error()
		} else if p.Reason != "" {
			j.Error = p.Reason
		} else {
			j.Accepted = true
		}
		out.Peers = append(out.Peers, j)
	}
	return a.printJSON(out)
}
