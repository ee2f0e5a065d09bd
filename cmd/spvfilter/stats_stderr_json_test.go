package main

import (
	"bytes"
	"encoding/json"
	"io"
	"strings"
	"testing"

	"github.com/spvfilter/spvfilter/peer/peertest"
)

// TestStatsOnStandardErrorAloneAreJSON: with --json and --out -, the data
// go to standard output and the statistics, warnings inside, to standard
// error, which then holds that one JSON object and nothing else, so that
// `2>&1 >/dev/null | jq` reads it. Before, privacy universe also wrote
// its warning as a text line ahead of the object ("spvfilter: warning:
// the universe rests on one peer ..."), and jq stopped on it. capture,
// which already kept standard error to the object, is held to it too.
func TestStatsOnStandardErrorAloneAreJSON(t *testing.T) {
	node := peertest.StartBtcd(t)
	node.Generate(t, 3)
	for _, tc := range []struct {
		name    string
		args    []string
		warning string // a warning the object must carry
	}{
		{"privacy universe", []string{"privacy", "universe", "--peer", node.P2PAddr, "--network", "regtest", "--out", "-", "--json"},
			"the universe rests on one peer"},
		{"privacy capture", []string{"privacy", "capture", "--listen", "127.0.0.1:0", "--upstream", node.P2PAddr, "--network", "regtest",
			"--out", "-", "--json", "--duration", "200ms"}, "nothing captured"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, stderr, status := runCLI(t, "", tc.args...)
			if status != exitOK {
				t.Fatalf("status %d: %s", status, stderr)
			}
			// The capture says where it listens, one JSON line, before
			// the statistics: every value on standard error must be JSON.
			dec := json.NewDecoder(strings.NewReader(stderr))
			var last struct{ Warnings []string }
			values := 0
			for {
				var v json.RawMessage
				err := dec.Decode(&v)
				if err == io.EOF {
					break
				}
				if err != nil {
					t.Fatalf("standard error is not JSON alone (%v): %q", err, stderr)
				}
				values++
				if bytes.Contains(v, []byte(`"warnings"`)) {
					if err := json.Unmarshal(v, &last); err != nil {
						t.Fatal(err)
					}
				}
			}
			if values == 0 || len(last.Warnings) == 0 || !strings.Contains(last.Warnings[0], tc.warning) {
				t.Errorf("statistics' warnings %q in %d JSON values, want one saying %q: %q", last.Warnings, values, tc.warning, stderr)
			}
		})
	}
}
