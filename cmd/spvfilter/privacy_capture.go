package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"os"
	"strings"
	"syscall"
	"time"

	"github.com/btcsuite/btcd/chaincfg"
	"github.com/spf13/cobra"

	"github.com/spvfilter/spvfilter/privacy/capture"
)

// privacyNetwork returns the parameters of a --network name.
func privacyNetwork(name string) (*chaincfg.Params, error) { return lookupNetwork(name) }

// printStats prints a command's statistics as JSON: on standard output, or
// on standard error when standard output carries the command's data (--out
// -), so that the data stays parseable.
func printStats(a *app, dataOnStdout bool, v any) error {
	if !dataOnStdout {
		return a.printJSON(v)
	}
	enc := json.NewEncoder(a.stderr)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

type captureFlags struct {
	listen, upstream, network, out string
	maxClients                     int
	duration, handshake, idle      time.Duration
}

func newPrivacyCaptureCommand(a *app) *cobra.Command {
	var f captureFlags
	c := &cobra.Command{
		Use:   "capture --listen HOST:PORT --upstream HOST:PORT --network NET --out FILE",
		Short: "Relay light clients to a full node and record the filters they send and the blocks they ask for",
		Long: `capture listens for light clients as if it were a full node and relays
every message, both ways, to the upstream node. It makes the node appear to
offer NODE_BLOOM (BIP 111), so that BIP 37 clients load their filter, and
appends each filterload, filteradd and filterclear a client sends (and its
version message, for the user agent) with the time and the client's address
to --out as JSON lines, which "privacy analyze --capture" reads directly.
Of BIP 157 clients it appends the filter ranges (getcfheaders,
getcfilters) and the blocks (getdata) they ask for, which "privacy fetches
--capture" reads; one capture may hold both kinds of client.
Each record names the connection: the client's address and port, and a
session id unique to the connection; a filterload record carries the
message's payload as "filterload", the hex "bloom inspect" reads. Before it
listens, capture checks that the upstream node answers a version message
(within --handshake-timeout) with its own, and fails naming it otherwise
(an echo service, which sends back what it is sent, too).
The upstream node must itself serve BIP 37 (btcd does by default; Bitcoin
Core needs peerbloomfilters=1), or it will drop clients that load a filter,
and BIP 157 for clients that ask for filters (btcd does unless
--nocfilters; Bitcoin Core needs blockfilterindex=1 and peerblockfilters=1).

A client that sends garbage, a message of another network, an oversized or
truncated message, or hangs up, loses its own connection only; the relay
keeps serving the others. A client must send its version message within
--handshake-timeout, and a connection that passes no message either way for
--idle-timeout is dropped; its slot among --max-clients is freed. When every
slot is taken, a new client takes the slot of the oldest client that has not
yet sent its version, so silent connections cannot lock real clients out.
It runs for --duration, or with --duration 0 (the default) until
interrupted (Ctrl-C), as the line saying where it listens repeats; then it
prints what it recorded on standard output, as text or with --json as an
object (with --out -, on standard error, so that standard output holds
only the capture lines). One that recorded nothing says so in a warning on standard error
(with --json a line {"warning": "..."} there, counted in the statistics'
"warning_count", their "warnings" left empty): no client connected (a
client pointed at the node itself, at another port, or of another
network), or those that did sent nothing to record. An --out file that holds anything but capture
records (the labels of privacy simulate, a report) is refused. --out may be
a named pipe (mkfifo) whose reader is already running: the records stream
into it as they come; a pipe that no process reads is refused at once,
naming --out, not waited on. A device is refused (/dev/zero keeps
nothing, /dev/full takes nothing), except /dev/null, which keeps none on
purpose, and a terminal. A record --out does not take (a full disk, a
pipe whose reader has gone) ends the capture with status 1, naming --out.`,
		Example: `  spvfilter privacy capture --listen 127.0.0.1:18555 --upstream 127.0.0.1:18444 --network regtest --out capture.jsonl
  spvfilter privacy analyze --capture capture.jsonl --universe universe.txt
  spvfilter privacy fetches --capture capture.jsonl --index universe.idx`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runCapture(cmd.Context(), a, &f) },
	}
	fl := c.Flags()
	fl.StringVar(&f.listen, "listen", "", "address clients connect to, `HOST:PORT`: 127.0.0.1:PORT for this machine only, :PORT for every interface, port 0 for any free one")
	fl.StringVar(&f.upstream, "upstream", "", "full node to relay to (`HOST:PORT`)")
	fl.StringVar(&f.network, "network", "mainnet", networkNames())
	fl.StringVar(&f.out, "out", "", "capture `FILE`, appended to, or a named pipe a reader holds open (- for standard output; --json statistics then go to standard error)")
	fl.IntVar(&f.maxClients, "max-clients", capture.DefaultMaxClients, "`N` clients served at once (0: the default)")
	wantValues(fl, fmt.Sprintf("want a whole number, at least 0 (0 for the default %d)", capture.DefaultMaxClients), "max-clients")
	fl.DurationVar(&f.duration, "duration", 0, "stop after `DURATION`, such as 30m (default: 0, which runs until interrupted with Ctrl-C)")
	fl.DurationVar(&f.handshake, "handshake-timeout", capture.DefaultHandshakeTimeout, "drop a client that has not sent its version message `DURATION` after connecting")
	fl.DurationVar(&f.idle, "idle-timeout", capture.DefaultIdleTimeout, "drop a connection with no message in either direction for `DURATION`")
	exampleValue(fl, "duration", "30m")
	for _, name := range []string{"listen", "upstream", "out"} {
		_ = c.MarkFlagRequired(name)
	}
	return c
}

// runCapture checks the flags and the upstream node, opens --out, and
// relays until interrupted or --duration ends; then it prints the relay's
// statistics.
func runCapture(ctx context.Context, a *app, f *captureFlags) error {
	params, err := privacyNetwork(f.network)
	if err != nil {
		return err
	}
	if err := f.check(); err != nil {
		return err
	}
	if ctx == nil {
		ctx = context.Background()
	}
	// A relay in front of a node that does not answer would accept
	// clients and record nothing: check it first, before creating --out.
	if err := capture.CheckUpstream(ctx, f.upstream, params.Net, f.handshake); err != nil {
		return upstreamFailure(f.upstream, params, f.handshake, err)
	}
	out, err := openCaptureOut(a, f.out)
	if err != nil {
		return err
	}
	defer out.close()
	r, err := capture.NewRelay(capture.RelayConfig{
		Listen: f.listen, Upstream: f.upstream, Net: params.Net, Out: out.w, Log: a.logWriter(), MaxClients: f.maxClients,
		HandshakeTimeout: f.handshake, IdleTimeout: f.idle,
	})
	if err != nil {
		// Nothing was recorded: leave no empty file behind.
		out.removeCreated()
		// The address was checked with the flags: what fails now is the
		// machine (a port in use, a permission), not the input.
		return &restated{fmt.Sprintf("--listen %s: %s", f.listen, listenProblem(err)), err}
	}
	listening, start := r.Addr().String(), time.Now()
	if err := f.serve(ctx, a, r, params.Name); err != nil {
		// A record --out does not take (a full disk, a pipe whose
		// reader has gone) ends the relay.
		var oe *capture.OutError
		if errors.As(err, &oe) {
			return &restated{fmt.Sprintf("--out %s: a record could not be written: %s: the capture stopped there, %s written before",
				f.out, unnamedFileProblem(oe.Err), plural(oe.Written, "record")), err}
		}
		return err
	}
	st := r.Stats()
	return a.printCaptureStats(f.out == "-", st, captureWarnings(st, listening, params.Name, time.Since(start)))
}

// captureWarnings says, when a relay that listened on listen for ran
// recorded nothing, why that probably is: no client connected (the
// client was pointed at another address, port or network), or those that
// did sent nothing to record.
func captureWarnings(st capture.RelayStats, listen, network string, ran time.Duration) []string {
	if st.Records > 0 {
		return nil
	}
	ran = ran.Round(100 * time.Millisecond)
	if st.Clients == 0 {
		return []string{fmt.Sprintf("nothing captured: no client connected to --listen %s in %s; point the light client at %s "+
			"(its peer or connect setting), not at the node itself, on --network %s: a client given another address or port, "+
			"or one of another network (a port of its own), connects elsewhere", listen, ran, listen, network)}
	}
	return []string{fmt.Sprintf("nothing captured: %s connected in %s but none sent a message to record "+
		"(%d closed for bad messages, as a client of another network than --network %s sends; "+
		"%d without a version message in time; %d idle): a client that loads no BIP 37 filter and fetches no block sends none",
		plural(st.Clients, "client"), ran, st.Rejected, network, st.HandshakeTimeouts, st.IdleTimeouts)}
}

// check refuses, as bad input, the flags out of their range and an --out
// that cannot be written: whatever the node does, before the network.
func (f *captureFlags) check() error {
	switch {
	case f.maxClients < 0:
		return badRange("--max-clients", f.maxClients, "")
	case f.duration < 0:
		return badRange("--duration", f.duration, "a duration, at least 0 (0 runs until interrupted with Ctrl-C)")
	case f.handshake <= 0:
		return notPositive("--handshake-timeout", f.handshake)
	case f.idle <= 0:
		return notPositive("--idle-timeout", f.idle)
	}
	if err := checkOutputFile("--out", f.out); err != nil {
		return err
	}
	if err := refuseDeviceButNull("--out", f.out, "the records written there could not be read back with privacy analyze --capture or privacy fetches --capture "+
		"(give a file, a named pipe whose reader is running, - for standard output, or /dev/null to keep none)"); err != nil {
		return err
	}
	return checkCaptureOut(f.out)
}

// serve runs the relay r until SIGINT or SIGTERM, or until --duration
// ends, after saying where it listens.
func (f *captureFlags) serve(ctx context.Context, a *app, r *capture.Relay, network string) error {
	ctx, stop := a.signalContext(ctx)
	defer stop()
	if f.duration > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, f.duration)
		defer cancel()
	}
	a.printListening(r.Addr().String(), f.upstream, network, f.out, f.duration)
	return r.Serve(ctx)
}

// captureOut is where the relay appends its records: --out opened for
// appending, or standard output for -.
type captureOut struct {
	w    io.Writer
	file *os.File // nil for standard output
	// created is --out when this run created it, else "".
	created string
}

// openCaptureOut opens path, --out, for appending, creating it if needed;
// - is standard output.
func openCaptureOut(a *app, path string) (*captureOut, error) {
	if path == "-" {
		return &captureOut{w: a.stdout}, nil
	}
	out := &captureOut{}
	if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
		out.created = path
	}
	if st, err := os.Stat(path); err == nil && st.Mode()&fs.ModeNamedPipe != 0 {
		file, err := openPipe("--out", path)
		if err != nil {
			return nil, err
		}
		return &captureOut{w: file, file: file}, nil
	}
	file, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return nil, badInputWords("--out", err)
	}
	out.w, out.file = file, file
	return out, nil
}

// close closes the file, if one was opened.
func (o *captureOut) close() {
	if o.file != nil {
		o.file.Close()
	}
}

// removeCreated removes --out if this run created it.
func (o *captureOut) removeCreated() {
	if o.created != "" {
		os.Remove(o.created)
	}
}

// printCaptureStats prints the relay's statistics st and its warnings:
// the result, on standard output, unless the records go there
// (dataOnStdout, --out -). With --json each warning is a JSON line of its
// own on standard error, as a capture's other events are, and the
// statistics count them.
func (a *app) printCaptureStats(dataOnStdout bool, st capture.RelayStats, warnings []string) error {
	if a.json {
		// Standard error holds JSON lines: each warning is one, said
		// there once; the statistics count them ("warning_count") and
		// do not say them again.
		a.warnAlone(warnings)
		js := newCaptureStatsJSON(st)
		js.WarningCount = len(warnings)
		return printStats(a, dataOnStdout, js)
	}
	a.warn(warnings)
	w, prefix := a.stdout, ""
	if dataOnStdout {
		w, prefix = a.stderr, "spvfilter: "
	}
	_, err := fmt.Fprintf(w, "%s%s, %s written, %s closed for bad messages, %d without a version in time, %d idle, %d evicted\n",
		prefix, plural(st.Clients, "client"), plural(st.Records, "record"), plural(st.Rejected, "connection"), st.HandshakeTimeouts, st.IdleTimeouts, st.Evicted)
	return err
}

// listenProblem says why the relay cannot listen on an address that is
// well formed.
func listenProblem(err error) string {
	switch {
	case errors.Is(err, syscall.EADDRINUSE):
		return "the address is in use: another program listens there (give another port)"
	case errors.Is(err, syscall.EACCES):
		return "permission denied (a port below 1024 needs privileges)"
	case errors.Is(err, syscall.EADDRNOTAVAIL):
		return "no interface of this machine has that address: give 127.0.0.1 (this machine only), an address of one of its interfaces, or none (:PORT) for every interface"
	}
	var oe *net.OpError
	if errors.As(err, &oe) && oe.Err != nil {
		return words(oe.Err)
	}
	return words(err)
}

// captureStatsJSON is capture.RelayStats under the CLI's JSON keys: a
// count is <noun>_count, or <nouns>_<done> for what the relay did.
type captureStatsJSON struct {
	ClientCount           int64 `json:"client_count"`
	RecordsWritten        int64 `json:"records_written"`
	ConnectionsRejected   int64 `json:"connections_rejected"`
	HandshakeTimeoutCount int64 `json:"handshake_timeout_count"`
	IdleTimeoutCount      int64 `json:"idle_timeout_count"`
	ClientsEvicted        int64 `json:"clients_evicted"`
	// WarningCount is how many warnings the capture wrote on standard
	// error, a line {"warning": ...} each, before these statistics;
	// Warnings is empty: the lines say them, once.
	WarningCount int      `json:"warning_count"`
	Warnings     []string `json:"warnings"`
}

func newCaptureStatsJSON(st capture.RelayStats) captureStatsJSON {
	return captureStatsJSON{ClientCount: st.Clients, RecordsWritten: st.Records, ConnectionsRejected: st.Rejected,
		HandshakeTimeoutCount: st.HandshakeTimeouts, IdleTimeoutCount: st.IdleTimeouts, ClientsEvicted: st.Evicted, Warnings: []string{}}
}

// upstreamFailure says why the --upstream node at addr did not answer as
// a node of the network of params within the handshake time: as the tool
// says it for any node (a connection refused, a host not found, a service
// that is no node, a node of another network, one that hangs up or says
// nothing).
func upstreamFailure(addr string, params *chaincfg.Params, handshake time.Duration, err error) error {
	msg := strings.Replace(words(err), addr+": ", "", 1)
	var ue *capture.UpstreamError
	var oe *net.OpError
	if errors.As(err, &ue) {
		switch ue.Problem {
		case capture.UpstreamHungUp:
			return &restated{fmt.Sprintf("--upstream %s: %s", addr, hungUpWords(params)), err}
		case capture.UpstreamSilent:
			return &restated{fmt.Sprintf("--upstream %s: %s", addr, silentWords(params, handshake.String())), err}
		case capture.UpstreamOtherNetwork:
			return &restated{fmt.Sprintf("--upstream %s: %s", addr, otherNetwork(ue.Got, params)), err}
		case capture.UpstreamEcho:
			return &restated{fmt.Sprintf("--upstream %s: %s", addr, echoWords(params)), err}
		case capture.UpstreamNotANode:
			msg = "it answers with no version message: no " + params.Name + " node listens there"
		}
	}
	if errors.As(err, &oe) && oe.Op == "dial" {
		msg = dialReason(oe)
	}
	return &restated{fmt.Sprintf("--upstream %s: %s (is a %s node running at %s?)", addr, msg, params.Name, addr), err}
}

// printListening tells on standard error where the relay listens and
// until when, --duration or, for 0, until interrupted: a line of text, or
// with --json one JSON object ("until" the same words, "duration_seconds"
// null for no end).
func (a *app) printListening(listen, upstream, network, out string, duration time.Duration) {
	until := "until interrupted (Ctrl-C; --duration 0)"
	var seconds *float64
	if duration > 0 {
		until = fmt.Sprintf("for --duration %v, or until interrupted (Ctrl-C)", duration)
		s := duration.Seconds()
		seconds = &s
	}
	if !a.json {
		fmt.Fprintf(a.stderr, "spvfilter: listening on %s, relaying to %s (%s), recording to %s, %s\n", listen, upstream, network, out, until)
		return
	}
	b := plainJSON(struct {
		Listening       string   `json:"listening"`
		Upstream        string   `json:"upstream"`
		Network         string   `json:"network"`
		Out             string   `json:"out"`
		Until           string   `json:"until"`
		DurationSeconds *float64 `json:"duration_seconds"`
	}{listen, upstream, network, out, until, seconds})
	fmt.Fprintf(a.stderr, "%s\n", b)
}
