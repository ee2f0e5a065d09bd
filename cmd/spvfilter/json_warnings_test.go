package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/btcsuite/btcd/wire"

	"github.com/spvfilter/spvfilter/peer/peertest"
)

// TestJSONWarningsInTheResultAlone: with --json, the commands whose
// result is one JSON object on standard output put their warnings in its
// "warnings" and write no text on standard error, so that
// `cmd --json 2>&1 | jq .` reads them; without --json the same warnings
// are text lines on standard error. Before, privacy analyze, model,
// model advise, evaluate and fetches wrote each warning (and analyze's
// and fetches' "--intersect joins ..." line) as text on standard error
// under --json too, and later bloom, gcs, merkleblock, peers and send.
func TestJSONWarningsInTheResultAlone(t *testing.T) {
	in := newRowFiles(t)
	universe := filepath.Join(in.sim, "universe.txt")
	v := gcsVectorAt(t, 49291)
	reversed, err := chainhash.NewHashFromStr(v.BlockHash)
	if err != nil {
		t.Fatal(err)
	}
	slices.Reverse(reversed[:])
	absent := strings.Repeat("11", 32)
	// A data directory whose regtest address book is garbage: peers
	// lists it with a warning, with no node.
	datadir := t.TempDir()
	if err := os.Mkdir(filepath.Join(datadir, "regtest"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(datadir, "regtest", "peers-local.json"), []byte("garbage"), 0o600); err != nil {
		t.Fatal(err)
	}
	// A node and a second address of it that says it saw what was sent:
	// send's propagation then rests on one peer's word, a warning.
	node := peertest.StartBtcd(t, peertest.WithArgs("--nobanning"))
	node.Generate(t, 102)
	second := peertest.NewLiar(t, node.P2PAddr, node.Params.Net, nil)
	sendArgs := func(t *testing.T) []string {
		tx := node.BuildCoinbaseSpend(t, wire.NewTxOut(1_000_000, peertest.NewKey("alice").PkScript()))
		return []string{"send", "--peer", node.P2PAddr, "--peer", second.Addr, "--network", "regtest", "--timeout", "5s", txHexOf(t, tx)}
	}
	for _, tc := range []struct {
		name string
		args []string
		// warns: the run has warnings; said: a line the run without
		// --json writes on standard error that --json keeps off it.
		warns bool
		said  string
		// argsFor, when set, gives the arguments of each run (a send
		// needs a transaction of its own).
		argsFor func(t *testing.T) []string
	}{
		// Before, these wrote their warnings as text on standard error
		// under --json too.
		{name: "bloom new capped by the size limit", args: []string{"bloom", "new", "--elements", "100000", "--fprate", "0.01"}, warns: true, said: "false-positive rate will be about 0.293"},
		{name: "bloom match of a 0-byte filter", args: []string{"bloom", "match", "--filter", "00000000000000000000", "00"}, warns: true, said: "warning: 0-byte filter"},
		{name: "bloom inspect of a 0-byte filter", args: []string{"bloom", "inspect", "--filter", "00000000000000000000"}, warns: true, said: "warning: 0-byte filter"},
		{name: "gcs build --no-prevouts", args: []string{"gcs", "build", "--block", v.Block, "--no-prevouts"}, warns: true, said: "warning: --no-prevouts"},
		{name: "gcs match of a reversed block hash", args: []string{"gcs", "match", "--filter", v.Filter, "--block-hash", reversed.String(), "00"}, warns: true, said: "ends in zeros"},
		{name: "merkleblock build of a txid not in the block", args: []string{"merkleblock", "build", "--block", vectorBlockHex(t, block13b8a), "--txid", absent}, warns: true, said: "warning: --txid " + absent},
		{name: "peers of a damaged address book", args: []string{"peers", "--network", "regtest", "--datadir", datadir}, warns: true, said: "is damaged (not JSON"},
		{name: "send resting on one peer", argsFor: sendArgs, warns: true, said: "propagation rests on one peer's word"},

		{"analyze --link", []string{"privacy", "analyze", "--capture", in.capture, "--universe", universe, "--link"}, true, "warning: link: session sim7-", nil},
		{"analyze --intersect", []string{"privacy", "analyze", "--capture", in.capture, "--universe", universe, "--intersect"}, true, "--intersect joins", nil},
		{"model of a filter that matches everything", []string{"privacy", "model", "--universe-size", "10000000000000000000", "--fprate", "0.5"}, true, "warning: Bitcoin Core sizes this filter", nil},
		{"model --sweep", []string{"privacy", "model", "--sweep", "fprate=0.5..0.6:0.1"}, true, "warning: ", nil},
		{"model advise, a target out of reach", []string{"privacy", "model", "--addresses", "100", "--universe-size", "1000", "--target-p-h-1", "0.01"}, true, "warning: with 1 filter no filter Bitcoin Core builds", nil},
		{"evaluate", []string{"privacy", "evaluate", "--labels", in.labels, "--report", in.report}, false, "", nil},
		{"fetches --intersect", []string{"privacy", "fetches", "--capture", in.fetchCapture, "--index", in.index, "--intersect"}, true, "--intersect joins", nil},
		{"fetches --collude", []string{"privacy", "fetches", "--capture", in.fetchCapture, "--index", in.index, "--collude"}, true, "--collude joins", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args := func() []string {
				if tc.argsFor != nil {
					return tc.argsFor(t)
				}
				return slices.Clone(tc.args)
			}
			_, text, status := runCLI(t, "", args()...)
			if status != exitOK || !strings.Contains(text, tc.said) {
				t.Fatalf("without --json: status %d, stderr %q, want it to say %q", status, text, tc.said)
			}
			stdout, stderr, status := runCLI(t, "", append(args(), "--json")...)
			if status != exitOK || stderr != "" {
				t.Fatalf("--json: status %d, standard error %q: want no text there", status, stderr)
			}
			var out struct {
				Warnings *[]string `json:"warnings"`
			}
			dec := json.NewDecoder(strings.NewReader(stdout))
			if err := dec.Decode(&out); err != nil || dec.More() || out.Warnings == nil {
				t.Fatalf("standard output is not one JSON object with its warnings (%v): %.300s", err, stdout)
			}
			if tc.warns != (len(*out.Warnings) > 0) {
				t.Errorf("warnings %q, want some: %v", *out.Warnings, tc.warns)
			}
			// Each warning said as text is in the JSON (of a run of its
			// own arguments, which name another transaction: as many).
			said := 0
			for line := range strings.Lines(text) {
				w, ok := strings.CutPrefix(strings.TrimSuffix(line, "\n"), "spvfilter: warning: ")
				if ok {
					said++
				}
				if ok && tc.argsFor == nil && !slices.Contains(*out.Warnings, w) {
					t.Errorf("warning %q said as text, not in the JSON's %q", w, *out.Warnings)
				}
			}
			if tc.argsFor != nil && said != len(*out.Warnings) {
				t.Errorf("%d warnings said as text, %d in the JSON's %q", said, len(*out.Warnings), *out.Warnings)
			}
		})
	}
}

// TestUniverseJSONWarningsInTheResultAlone: privacy universe --json with
// --out FILE puts its warning (the universe rests on one peer) in the
// statistics on standard output alone. Before, it was also a text line
// on standard error.
func TestUniverseJSONWarningsInTheResultAlone(t *testing.T) {
	node := peertest.StartBtcd(t)
	node.Generate(t, 3)
	out := filepath.Join(t.TempDir(), "universe.txt")
	stdout, stderr, status := runCLI(t, "", "privacy", "universe", "--peer", node.P2PAddr, "--network", "regtest", "--out", out, "--json")
	if status != exitOK || stderr != "" {
		t.Fatalf("status %d, standard error %q: want 0 and no text there", status, stderr)
	}
	var st struct{ Warnings []string }
	decodeJSON(t, stdout, &st)
	if len(st.Warnings) != 1 || !strings.Contains(st.Warnings[0], "rests on one peer, --peer "+node.P2PAddr) {
		t.Errorf("warnings %q, want the one-peer warning", st.Warnings)
	}
}
