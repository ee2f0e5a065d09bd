package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/btcsuite/btcd/chaincfg"
	"github.com/btcsuite/btcd/wire"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"github.com/spvfilter/spvfilter/peer"
	"github.com/spvfilter/spvfilter/peer/addrbook"
	"github.com/spvfilter/spvfilter/peer/banlist"
	"github.com/spvfilter/spvfilter/peer/client"
	"github.com/spvfilter/spvfilter/peer/store"
)

// peersFlags holds the flags of "peers".
type peersFlags struct {
	peerFlags
	network string
	datadir string
	timeout time.Duration
	unban   []string
}

func newPeersCommand(a *app) *cobra.Command {
	var f peersFlags
	cmd := &cobra.Command{
		Use:   "peers [--network NET] [--datadir DIR] [--peer HOST:PORT [--peer HOST:PORT ...] | --connect HOST:PORT [--connect HOST:PORT ...]] [--unban HOST[:PORT] [--unban HOST[:PORT] ...]]",
		Short: "List the peers, the address book and the bans, connecting as a light client or not",
		Long: `peers connects to the network as scan does: to the --peer nodes and to peers
found in the address book of --datadir, in the network's DNS seeds and in
what peers gossip (eight in all, spread over network groups), or to the
--connect nodes alone. It lists the peers it reached (their user agent,
services and tip), the addresses the book knows, and the bans in force
(peers proven to lie, flood or break the protocol are banned for a day,
kept in --datadir; a ban says whether it rests on such a proof). A
--datadir given must exist (create it to start one); the default one is
created as needed.

With --datadir and no --peer or --connect it connects to nobody: it lists
the address book and the bans kept in the directory as they are, and
writes nothing there (a damaged file is named in a warning and left for
the next scan or follow to set aside). It does so while a scan, follow or
peers holds the directory too, naming that process in a warning.

--unban lifts a node's ban in the data directory first (repeatable) and
lists the node as unbanned; one the directory holds no ban of is named in
a warning. A node you give with --peer or --connect is used anyway when
its ban rests on no proof, and named in a warning when it does.

Exit status: 0 done, 2 bad input, 1 failure (no peer reached, the data
directory in use by another process when connecting or with --unban, a
file of it that cannot be read).`,
		Example: `  spvfilter peers --network testnet4 --json
  mkdir -p state && spvfilter peers --network regtest --connect 127.0.0.1:18444 --datadir state
  spvfilter peers --network regtest --datadir state --unban 127.0.0.1:18445`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runPeers(a, &f, cmd.Flags()) },
	}
	fl := cmd.Flags()
	f.peerFlags.register(fl)
	fl.StringVar(&f.network, "network", "mainnet", networkNames())
	fl.StringVar(&f.datadir, "datadir", "", "directory of the chain state, address book and bans: a network's in `DIR`/NETWORK, such as DIR/regtest (give DIR, not DIR/regtest); one given must exist, so that a mistyped path is refused rather than started anew (default: as scan's, created as needed)")
	fl.DurationVar(&f.timeout, "timeout", peer.DefaultTimeout, "longest wait `DURATION` for a node's handshake")
	fl.StringArrayVar(&f.unban, "unban", nil, "a banned node `HOST[:PORT]`, HOST or HOST:PORT as the listing shows its ban, whose ban to lift in the data directory (repeatable; default: none lifted)")
	return cmd
}

// peersJSON is the output of peers --json.
type peersOutput struct {
	Network string         `json:"network"`
	Peers   []scanPeerJSON `json:"peers"`
	// Connected is false when the data directory was read without
	// connecting to any peer.
	Connected bool        `json:"connected"`
	Known     []knownJSON `json:"known"`
	Bans      []banJSON   `json:"bans"`
	Unbanned  []string    `json:"unbanned"`
	Warnings  []string    `json:"warnings"`
}

// knownJSON is an address of the book.
type knownJSON struct {
	Address string `json:"address"`
	// Services are the services it advertised, by their BIP names.
	Services []string `json:"services"`
	// The times of the book, null when it holds none.
	LastSeen    *string `json:"last_seen"`
	LastAttempt *string `json:"last_attempt"`
	LastSuccess *string `json:"last_success"`
	// FailedAttempts counts the failed attempts since the last success.
	FailedAttempts int `json:"failed_attempt_count"`
	// Served: the address served the client well once (the book's tried
	// addresses).
	Served bool `json:"served"`
}

// banJSON is a ban in force.
type banJSON struct {
	Host   string `json:"host"`
	Reason string `json:"reason"`
	Since  string `json:"since"`
	Until  string `json:"until"`
	// Proof: the ban rests on a proof the client checked itself.
	Proof bool `json:"proof"`
}

// runPeers prints the peers, the address book and the bans: connecting
// to the flags' network, or, with --datadir and no peer given, reading
// the data directory alone; fl says whether --datadir was given. The bans
// of --unban are lifted first.
func runPeers(a *app, f *peersFlags, fl *pflag.FlagSet) error {
	params, err := lookupNetwork(f.network)
	if err != nil {
		return err
	}
	if f.timeout <= 0 {
		return notPositive("--timeout", f.timeout)
	}
	for _, addr := range f.unban {
		if err := checkUnban(addr); err != nil {
			return err
		}
	}
	datadir := f.datadir
	if !fl.Changed("datadir") {
		datadir = defaultDataDir(params)
	}
	if fl.Changed("datadir") {
		if err := needDataDir(datadir); err != nil {
			return err
		}
		if err := notNetworkDir(datadir, params); err != nil {
			return err
		}
	}
	offline := fl.Changed("datadir") && datadir != "" && len(f.peers) == 0 && len(f.connect) == 0
	if len(f.unban) > 0 && datadir == "" {
		return badInput("--unban needs a data directory: give --datadir (%s keeps none by default)", params.Name)
	}
	out := peersOutput{Network: params.Name, Peers: []scanPeerJSON{}, Known: []knownJSON{}, Bans: []banJSON{},
		Unbanned: []string{}, Warnings: []string{}}
	if offline {
		err = out.readDataDir(datadir, params, f)
	} else {
		err = out.connect(a, datadir, params, f)
	}
	if err != nil {
		return err
	}
	return a.printPeers(&out)
}

// readDataDir fills out from the data directory datadir alone, without
// connecting, after lifting the bans of --unban.
func (out *peersOutput) readDataDir(datadir string, params *chaincfg.Params, f *peersFlags) error {
	if err := checkDir("--datadir", datadir); err != nil {
		return err
	}
	// Bans that cannot be read are neither listed as none nor
	// replaced by --unban.
	if err := banlist.Check(filepath.Join(datadir, params.Name)); err != nil {
		return failureWords("--datadir "+datadir, err)
	}
	if err := out.unbanAll(datadir, params, f); err != nil {
		return err
	}
	stored, err := readStored(datadir, params, f)
	if errors.Is(err, store.ErrLocked) && len(f.unban) == 0 {
		// A scan, follow or peers holds the directory: its files
		// are replaced whole, never written in place, so they are
		// read as they stand.
		stored, err = readHeld(datadir, params, err)
	}
	if err != nil {
		return err
	}
	out.Warnings = append(out.Warnings, datadirNamed(datadir, stored.Notes)...)
	if others := networksHeld(datadir, params); len(others) > 0 {
		out.Warnings = append(out.Warnings, fmt.Sprintf("--datadir %s holds the state of %s: give --network %s to list it",
			datadir, strings.Join(others, ", "), others[0]))
	}
	out.addKnown(stored.Known)
	out.addBans(stored.Bans)
	return nil
}

// connect fills out from the flags' peers, connected to with the data
// directory datadir ("" for none), after lifting the bans of --unban.
func (out *peersOutput) connect(a *app, datadir string, params *chaincfg.Params, f *peersFlags) error {
	cfg, err := f.peerFlags.config(params, wire.SFNodeCF|wire.SFNodeWitness)
	if err != nil {
		return err
	}
	cfg.Timeout, cfg.DataDir = f.timeout, datadir
	if err := makeDataDir(cfg.DataDir); err != nil {
		return err
	}
	if len(f.unban) > 0 {
		// Before connecting, so that the node is used if given.
		if err := out.unbanAll(cfg.DataDir, params, f); err != nil {
			return err
		}
	}
	ctx, stop := a.signalContext(context.Background())
	defer stop()
	onHeaders, headersDone := a.headerBar()
	cfg.OnHeaders = onHeaders
	c, err := client.Connect(ctx, cfg)
	if err != nil {
		headersDone()
		if err := interruptedBy(ctx, err, "peers"); isInterrupted(err) {
			return err
		}
		return nodeFailureFrom(err, params, cfg.DataDir, f.nodes())
	}
	defer c.Close()
	echoes, err := dropEchoes(c, params, f.nodes())
	if err != nil {
		headersDone()
		return err
	}
	out.Warnings = append(out.Warnings, echoes...)
	_, err = c.SyncHeaders(ctx)
	headersDone()
	if err != nil {
		return nodeFailureFrom(err, params, cfg.DataDir, f.nodes())
	}
	out.Connected, out.Peers = true, peersJSON(c.Peers(), params)
	for _, p := range out.Peers {
		if p.Banned {
			out.Warnings = append(out.Warnings, f.nodes().named(fmt.Sprintf("peer %s is banned: %s", p.Address, p.why())))
		}
	}
	known, err := c.KnownAddresses()
	if err != nil {
		out.Warnings = append(out.Warnings, err.Error())
	}
	out.addKnown(known)
	out.addBans(c.Bans())
	return nil
}

// checkUnban checks an --unban value: a host as the listing shows a ban
// (bans are by host), with or without a port, but with its port for a
// node of this machine, whose ports tell its nodes apart.
func checkUnban(addr string) error {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		host, port = strings.TrimSuffix(strings.TrimPrefix(addr, "["), "]"), ""
	}
	if host == "" || err == nil && port == "" {
		return badInput("--unban %q: want a host as the listing shows its ban, HOST or HOST:PORT", addr)
	}
	if n, perr := strconv.ParseUint(port, 10, 16); port != "" && (perr != nil || n == 0) {
		return badInput("--unban %q: port %q is not a number from 1 to 65535; want a host as the listing shows its ban, HOST or HOST:PORT", addr, port)
	}
	ip, ipErr := netip.ParseAddr(host)
	switch {
	case ipErr == nil && ip.Unmap().IsLoopback() && port == "":
		return badInput("--unban %q: a node of this machine is banned with its port: give %s as the listing shows it", addr, net.JoinHostPort(host, "PORT"))
	case ipErr != nil && !validHostName(host):
		return badInput("--unban %q: want a host as the listing shows its ban, HOST or HOST:PORT", addr)
	}
	return nil
}

// unbanAll lifts, one at a time, the bans of the --unban addresses kept
// in the data directory, putting in out.Unbanned each whose ban it
// lifted, and warns, naming the flag, of each that had none.
func (out *peersOutput) unbanAll(datadir string, params *chaincfg.Params, f *peersFlags) error {
	if len(f.unban) == 0 {
		return nil
	}
	stored, err := readStored(datadir, params, f)
	if err != nil {
		return err
	}
	bans := len(stored.Bans)
	for _, addr := range f.unban {
		if bans == 0 {
			out.Warnings = append(out.Warnings, fmt.Sprintf("--unban %s: no ban of it in --datadir %s to lift", addr, datadir))
			continue
		}
		after, err := readStored(datadir, params, f, addr)
		if err != nil {
			return err
		}
		if len(after.Bans) == bans {
			out.Warnings = append(out.Warnings, fmt.Sprintf("--unban %s: no ban of it in --datadir %s to lift", addr, datadir))
			continue
		}
		out.Unbanned, bans = append(out.Unbanned, addr), len(after.Bans)
	}
	return nil
}

// readStored reads what the data directory keeps about peers, lifting
// the bans of unban first (client.ReadStoredPeers); a failure names
// --datadir.
func readStored(datadir string, params *chaincfg.Params, f *peersFlags, unban ...string) (*client.StoredPeers, error) {
	stored, err := client.ReadStoredPeers(datadir, params, unban...)
	if err != nil {
		return nil, nodeFailureFrom(fmt.Errorf("--datadir %s: %w", datadir, err), params, datadir, f.nodes())
	}
	return stored, nil
}

// readHeld reads, without its lock, what the data directory held by
// another process (locked, a store.ErrLocked) keeps about peers, with a
// note naming that process: the listing is of the files as they stand,
// which it may replace at any moment.
func readHeld(datadir string, params *chaincfg.Params, locked error) (*client.StoredPeers, error) {
	dir := filepath.Join(datadir, params.Name)
	bans, notes := banlist.Read(dir)
	known, bookNotes, err := addrbook.Read(params, dir)
	if err != nil {
		return nil, failureWords("--datadir "+datadir, err)
	}
	held := fmt.Sprintf("%s is in use by %s: listed as its files stand now, which that process may change at any moment", datadir, lockHolder(locked))
	return &client.StoredPeers{Known: known, Bans: bans, Notes: append(append([]string{held}, notes...), bookNotes...)}, nil
}

// networksHeld names the other networks whose state datadir holds when
// it holds none of params' network.
func networksHeld(datadir string, params *chaincfg.Params) []string {
	if _, err := os.Stat(filepath.Join(datadir, params.Name)); !errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	var held []string
	for _, n := range networkList() {
		if fi, err := os.Stat(filepath.Join(datadir, n)); err == nil && fi.IsDir() {
			held = append(held, n)
		}
	}
	return held
}

// datadirNamed names, in notes of the data directory dir, the flag that
// gave it: "--datadir dir holds ...", "--datadir dir: bans.json: ...".
func datadirNamed(dir string, notes []string) []string {
	out := make([]string, len(notes))
	for i, n := range notes {
		n = diskNoteWords(n)
		if strings.HasPrefix(n, dir+" ") {
			n = "--datadir " + n
		} else {
			n = "--datadir " + dir + ": " + n
		}
		out[i] = n
	}
	return out
}

// addKnown lists the addresses of the book.
func (out *peersOutput) addKnown(known []addrbook.Known) {
	for _, k := range known {
		out.Known = append(out.Known, knownJSON{Address: k.Addr, Services: serviceNames(k.Services), LastSeen: orNull(stamp(k.LastSeen)),
			LastAttempt: orNull(stamp(k.LastAttempt)), LastSuccess: orNull(stamp(k.LastSuccess)), FailedAttempts: k.Attempts, Served: k.Tried})
	}
}

// addBans lists the bans in force.
func (out *peersOutput) addBans(bans []banlist.Ban) {
	for _, b := range bans {
		out.Bans = append(out.Bans, banJSON{Host: b.Host, Reason: b.Reason, Since: stamp(b.Since), Until: stamp(b.Until), Proof: b.Proof})
	}
}

// printPeers prints what peers found, as JSON or as text.
func (a *app) printPeers(out *peersOutput) error {
	a.warnBesideResult(out.Warnings)
	if a.json {
		return a.printJSON(out)
	}
	w := a.stdout
	for _, addr := range out.Unbanned {
		fmt.Fprintf(w, "unbanned %s\n", addr)
	}
	if !out.Connected {
		fmt.Fprintf(w, "not connected: the address book and bans as the data directory keeps them\n")
	}
	for _, p := range out.Peers {
		state := p.tipText()
		switch {
		case p.Banned:
			state = "banned: " + p.why()
		case p.why() != "":
			state = p.why()
		}
		fmt.Fprintf(w, "%s: %s\n", p.named(), state)
	}
	fmt.Fprintf(w, "%s of peers in the address book\n", plural(len(out.Known), "address"))
	for _, b := range out.Bans {
		proof := "no proof"
		if b.Proof {
			proof = "proof"
		}
		fmt.Fprintf(w, "banned %s until %s (%s): %s\n", b.Host, b.Until, proof, b.Reason)
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
