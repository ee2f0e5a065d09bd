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
// which already kept standard error to JSON, is held to it too; its
// warnings are JSON lines {"warning": ...} there, which its statistics
// count ("warning_count") and do not repeat.
func TestStatsOnStandardErrorAloneAreJSON(t *testing.T) {
	node := peertest.StartBtcd(t)
	node.Generate(t, 3)
	for _, tc := range []struct {
		name    string
		args    []string
		warning string // a warning the object must carry
		// lines: the warning is a line {"warning": ...} of its own, and
		// the object counts it.
		lines bool
	}{
		{"privacy universe", []string{"privacy", "universe", "--peer", node.P2PAddr, "--network", "regtest", "--out", "-", "--json"},
			"the universe rests on one peer", false},
		{"privacy capture", []string{"privacy", "capture", "--listen", "127.0.0.1:0", "--upstream", node.P2PAddr, "--network", "regtest",
			"--out", "-", "--json", "--duration", "200ms"}, "nothing captured", true},
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
			var lastValue json.RawMessage
			var lines []string // the warnings of lines {"warning": ...}
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
				lastValue = v
				var w struct {
					Warning *string `json:"warning"`
				}
				if json.Unmarshal(v, &w) == nil && w.Warning != nil {
					lines = append(lines, *w.Warning)
				}
				if bytes.Contains(v, []byte(`"warnings"`)) {
					if err := json.Unmarshal(v, &last); err != nil {
						t.Fatal(err)
					}
				}
			}
			if tc.lines {
				var st captureStatsJSON
				if err := json.Unmarshal(lastValue, &st); err != nil {
					t.Fatal(err)
				}
				if len(lines) != 1 || !strings.Contains(lines[0], tc.warning) || st.WarningCount != 1 || len(st.Warnings) != 0 {
					t.Errorf("warning lines %q, statistics' warning_count %d, warnings %q: want one line saying %q, counted once: %q",
						lines, st.WarningCount, st.Warnings, tc.warning, stderr)
				}
				return
			}
			if values == 0 || len(last.Warnings) == 0 || !strings.Contains(last.Warnings[0], tc.warning) {
				t.Errorf("statistics' warnings %q in %d JSON values, want one saying %q: %q", last.Warnings, values, tc.warning, stderr)
			}
		})
	}
}
