package main

import (
	"encoding/json"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/spvfilter/spvfilter/peer/peertest"
)

// TestJSONWarningsInTheResultAlone: with --json, the privacy commands
// whose result is one JSON object on standard output put their warnings
// in its "warnings" and write no text on standard error, so that
// `cmd --json 2>&1 | jq .` reads them; without --json the same warnings
// are text lines on standard error. Before, privacy analyze, model,
// model advise, evaluate and fetches wrote each warning (and analyze's
// and fetches' "--intersect joins ..." line) as text on standard error
// under --json too.
func TestJSONWarningsInTheResultAlone(t *testing.T) {
	in := newRowFiles(t)
	universe := filepath.Join(in.sim, "universe.txt")
	for _, tc := range []struct {
		name string
		args []string
		// warns: the run has warnings; said: a line the run without
		// --json writes on standard error that --json keeps off it.
		warns bool
		said  string
	}{
		{"analyze --link", []string{"privacy", "analyze", "--capture", in.capture, "--universe", universe, "--link"}, true, "warning: link: session sim7-"},
		{"analyze --intersect", []string{"privacy", "analyze", "--capture", in.capture, "--universe", universe, "--intersect"}, true, "--intersect joins"},
		{"model of a filter that matches everything", []string{"privacy", "model", "--universe-size", "10000000000000000000", "--fprate", "0.5"}, true, "warning: Bitcoin Core sizes this filter"},
		{"model --sweep", []string{"privacy", "model", "--sweep", "fprate=0.5..0.6:0.1"}, true, "warning: "},
		{"model advise, a target out of reach", []string{"privacy", "model", "--addresses", "100", "--universe-size", "1000", "--target-p-h-1", "0.01"}, true, "warning: with 1 filter no filter Bitcoin Core builds"},
		{"evaluate", []string{"privacy", "evaluate", "--labels", in.labels, "--report", in.report}, false, ""},
		{"fetches --intersect", []string{"privacy", "fetches", "--capture", in.fetchCapture, "--index", in.index, "--intersect"}, true, "--intersect joins"},
		{"fetches --collude", []string{"privacy", "fetches", "--capture", in.fetchCapture, "--index", in.index, "--collude"}, true, "--collude joins"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, text, status := runCLI(t, "", tc.args...)
			if status != exitOK || !strings.Contains(text, tc.said) {
				t.Fatalf("without --json: status %d, stderr %q, want it to say %q", status, text, tc.said)
			}
			stdout, stderr, status := runCLI(t, "", append(tc.args, "--json")...)
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
			// Each warning said as text is in the JSON.
			for line := range strings.Lines(text) {
				if w, ok := strings.CutPrefix(strings.TrimSuffix(line, "\n"), "spvfilter: warning: "); ok && !slices.Contains(*out.Warnings, w) {
					t.Errorf("warning %q said as text, not in the JSON's %q", w, *out.Warnings)
				}
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
