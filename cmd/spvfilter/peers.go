package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/btcsuite/btcd/wire"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"github.com/spvfilter/spvfilter/peer"
	"github.com/spvfilter/spvfilter/peer/client"
)

// peersFlags holds the flags of "peers".
type peersFlags struct {
	peerFlags
	network string
	datadir string
	timeout time.Duration
}

func newPeersCommand(a *app) *cobra.Command {
	var f peersFlags
	cmd := &cobra.Command{
		Use:   "peers [--network NET] [--datadir DIR] [--peer HOST:PORT... | --connect HOST:PORT...]",
		Short: "Connect as a light client and list the peers, the address book and the bans",
		Long: `peers connects to the network as scan does: to the --peer nodes and to peers
found in the address book of --datadir, in the network's DNS seeds and in
what peers gossip (eight in all, spread over network groups), or to the
--connect nodes alone. It lists the peers it reached (their user agent,
services and tip), the addresses the book knows, and the bans in force
(peers caught lying or flooding are banned for a day, kept in --datadir).

Exit status: 0 done, 2 bad input, 1 failure (no peer reached).`,
		Example: `  spvfilter peers --network testnet4 --json
  spvfilter peers --network regtest --connect 127.0.0.1:18444 --datadir ./state`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runPeers(a, &f, cmd.Flags()) },
	}
	fl := cmd.Flags()
	f.peerFlags.register(fl)
	fl.StringVar(&f.network, "network", "mainnet", networkNames())
	fl.StringVar(&f.datadir, "datadir", "", "directory of the chain state, address book and bans (default: as scan's)")
	fl.DurationVar(&f.timeout, "timeout", peer.DefaultTimeout, "longest wait for a node's handshake")
	return cmd
}

// peersJSON is the output of peers --json.
type peersOutput struct {
	Network  string         `json:"network"`
	Peers    []scanPeerJSON `json:"peers"`
	Known    []knownJSON    `json:"known"`
	Bans     []banJSON      `json:"bans"`
	Warnings []string       `json:"warnings"`
}

// knownJSON is an address of the book.
type knownJSON struct {
	Address     string `json:"address"`
	Services    string `json:"services"`
	LastSeen    string `json:"last_seen,omitempty"`
	LastAttempt string `json:"last_attempt,omitempty"`
	LastSuccess string `json:"last_success,omitempty"`
	Attempts    int    `json:"attempt_count"`
	Tried       bool   `json:"tried"`
}

// banJSON is a ban in force.
type banJSON struct {
	Host   string `json:"host"`
	Reason string `json:"reason"`
	Since  string `json:"since"`
	Until  string `json:"until"`
}

// runPeers connects to the flags' network and prints the peers, the
// address book and the bans; fl says whether --datadir was given.
func runPeers(a *app, f *peersFlags, fl *pflag.FlagSet) error {
	params, err := lookupNetwork(f.network)
	if err != nil {
		return err
	}
	if f.timeout <= 0 {
		return badInput("--timeout %v: must be positive", f.timeout)
	}
	cfg, err := f.peerFlags.config(params, wire.SFNodeCF|wire.SFNodeWitness)
	if err != nil {
		return err
	}
	cfg.Timeout, cfg.DataDir = f.timeout, f.datadir
	if !fl.Changed("datadir") {
		cfg.DataDir = defaultDataDir(params)
	}
	if err := makeDataDir(cfg.DataDir); err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	c, err := client.Connect(ctx, cfg)
	if ctx.Err() != nil && errors.Is(err, context.Canceled) {
		return errors.New("peers interrupted")
	}
	if err != nil {
		return nodeFailure(err, params, cfg.DataDir)
	}
	defer c.Close()
	if _, err := c.SyncHeaders(ctx); err != nil {
		return nodeFailure(err, params, cfg.DataDir)
	}
	out := peersOutput{Network: params.Name, Peers: peersJSON(c.Peers()), Known: []knownJSON{}, Bans: []banJSON{}, Warnings: []string{}}
	known, err := c.KnownAddresses()
	if err != nil {
		out.Warnings = append(out.Warnings, err.Error())
	}
	for _, k := range known {
		out.Known = append(out.Known, knownJSON{Address: k.Addr, Services: k.Services.String(), LastSeen: stamp(k.LastSeen),
			LastAttempt: stamp(k.LastAttempt), LastSuccess: stamp(k.LastSuccess), Attempts: k.Attempts, Tried: k.Tried})
	}
	for _, b := range c.Bans() {
		out.Bans = append(out.Bans, banJSON{Host: b.Host, Reason: b.Reason, Since: stamp(b.Since), Until: stamp(b.Until)})
	}
	a.warn(out.Warnings)
	if a.json {
		return a.printJSON(out)
	}
	w := a.stdout
	for _, p := range out.Peers {
		state := p.tipText()
		switch {
		case p.Banned:
			state = "banned: " + p.Reason
		case p.Reason != "":
			state = p.Reason
		}
		fmt.Fprintf(w, "peer %s (%s): %s\n", p.Address, p.UserAgent, state)
	}
	fmt.Fprintf(w, "%d known address(es)\n", len(out.Known))
	for _, b := range out.Bans {
		fmt.Fprintf(w, "banned %s until %s: %s\n", b.Host, b.Until, b.Reason)
	}
	return nil
}

// stamp formats t for output, "" for the zero time.
func stamp(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(time.RFC3339)
}
