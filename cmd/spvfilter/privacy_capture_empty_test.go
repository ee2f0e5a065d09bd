package main

import (
	"encoding/json"
	"net"
	"strings"
	"testing"
)

// TestPrivacyCaptureNothingWarns: a capture that ends having recorded
// nothing says so loudly, on standard error (with --json a JSON line
// {"warning": ...} there, which the statistics count),
// naming the likely cause: no client connected (the client pointed at
// another address, port or network), or clients connected and sent
// nothing worth a record. Before, it printed "0 clients, 0 records
// written, ..." and exit status 0, which a newcomer whose client dialled
// the node directly reads as a capture that worked.
func TestPrivacyCaptureNothingWarns(t *testing.T) {
	up := startVersionAnswerer(t)
	rows := []struct {
		name    string
		json    bool
		connect bool     // a client connects and never sends its version
		want    []string // in the warning
	}{
		{name: "no client, text", want: []string{"nothing captured", "no client connected to --listen 127.0.0.1:", "--network regtest", "port"}},
		{name: "no client, json", json: true, want: []string{"nothing captured", "no client connected to --listen 127.0.0.1:"}},
		{name: "a silent client, text", connect: true, want: []string{"nothing captured", "1 client connected", "1 without a version message in time"}},
		{name: "a silent client, json", json: true, connect: true, want: []string{"nothing captured", "1 client connected"}},
	}
	for _, r := range rows {
		t.Run(r.name, func(t *testing.T) {
			relayAddr := freeLoopbackAddr(t)
			args := []string{"privacy", "capture", "--listen", relayAddr, "--upstream", up, "--network", "regtest",
				"--out", t.TempDir() + "/c.jsonl", "--duration", "1200ms", "--handshake-timeout", "200ms"}
			if r.json {
				args = append(args, "--json")
			}
			done := make(chan [2]string, 1)
			go func() {
				stdout, stderr, status := runCLI(t, "", args...)
				if status != exitOK {
					t.Errorf("status %d, want 0: %s", status, stderr)
				}
				done <- [2]string{stdout, stderr}
			}()
			if r.connect {
				dialRelay(t, relayAddr)
			}
			res := <-done
			stdout, stderr := res[0], res[1]
			var warning string
			for _, line := range strings.Split(stderr, "\n") {
				if strings.HasPrefix(line, "spvfilter: warning: ") {
					warning = line
				}
			}
			if r.json {
				// The warning is said once, a JSON line on standard
				// error; the statistics count it.
				var st captureStatsJSON
				if err := json.Unmarshal([]byte(stdout), &st); err != nil {
					t.Fatalf("stdout %q: %v", stdout, err)
				}
				lines := warningLines(t, stderr)
				if len(lines) != 1 || st.WarningCount != 1 || len(st.Warnings) != 0 {
					t.Fatalf("warning lines %q, statistics' warning_count %d and warnings %q: want one line, counted, not said again", lines, st.WarningCount, st.Warnings)
				}
				warning = lines[0]
			}
			for _, w := range r.want {
				if !strings.Contains(warning, w) {
					t.Errorf("warning %q lacks %q (stderr %q)", warning, w, stderr)
				}
			}
		})
	}
}

// freeLoopbackAddr returns a HOST:PORT free on 127.0.0.1.
func freeLoopbackAddr(t *testing.T) string {
	t.Helper()
	return net.JoinHostPort("127.0.0.1", freeLoopbackPort(t))
}

// warningLines returns the warnings of the JSON lines {"warning": ...}
// on stderr, failing on a line that is not JSON.
func warningLines(t *testing.T, stderr string) []string {
	t.Helper()
	var ws []string
	for line := range strings.Lines(stderr) {
		var v struct {
			Warning *string `json:"warning"`
		}
		if err := json.Unmarshal([]byte(line), &v); err != nil {
			t.Fatalf("standard error line %q is not JSON: %v", line, err)
		}
		if v.Warning != nil {
			ws = append(ws, *v.Warning)
		}
	}
	return ws
}
