package main

import (
	"errors"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/spvfilter/spvfilter/peer/peertest"
)

// TestFollowNoPeerLeft: scan --follow over one node. When the node goes
// away for good, a warning on standard error says within seconds that no
// peer is in use, naming it and why (before, nothing was said: a follow
// with no peer looked like one with no new block), and Ctrl-C then ends
// the follow as the help says, with exit 0 and the summary line, the wait
// among its warnings (before, exit 1 and "following rescan stopped ... after
// waiting"). With the node up, Ctrl-C ends it the same way and no such
// warning is given. With --json standard error holds JSON lines alone:
// the warning is a line {"warning": ...} (before, text, as without
// --json), and the summary's warnings are in the summary alone.
//
// The warning and the summary say why the node is not used in the tool's
// words, and the warning names the flag to follow with other nodes
// (before: "unreachable: peer ADDR: connect: peer disconnected: dial tcp
// ADDR: connect: connection refused", and no flag).
func TestFollowNoPeerLeft(t *testing.T) {
	const why = ": unreachable: connection refused: nothing listens there (is a regtest node listening on "
	const hint = "Ctrl-C ends it, and to follow with other nodes, run it again with one more --connect HOST:PORT each (repeatable)"
	libraryWords := []string{"dial tcp", "peer disconnected", "connect: connection refused", "client:"}
	rows := []struct {
		name     string
		stop     bool
		json     bool
		warning  string // in stderr, "" for none about peers
		why      string // after the node's address in the warning
		hint     string // in the warning: how to follow with other nodes
		summary  string // in the summary's warnings, "" for none about the wait
		waitTill time.Duration
	}{
		{name: "the node stopped", stop: true, warning: "no peer in use for 10s (--connect ", why: why, hint: hint,
			summary: "interrupted while waiting ", waitTill: 20 * time.Second},
		{name: "the node stopped, --json", stop: true, json: true, warning: "no peer in use for 10s (--connect ", why: why, hint: hint,
			summary: "interrupted while waiting ", waitTill: 20 * time.Second},
		{name: "the node up", waitTill: 12 * time.Second},
	}
	for _, r := range rows {
		t.Run(r.name, func(t *testing.T) {
			node := peertest.StartBtcd(t, peertest.WithArgs("--nobanning"))
			node.Generate(t, 3)
			addr := peertest.NewKey("alice").Address(node.Params).EncodeAddress()
			args := []string{"--connect", node.P2PAddr, "--network", "regtest", "--watch", addr, "--timeout", "5s"}
			if r.json {
				args = append(args, "--json")
			}
			p := startFollow(t, args...)
			if err := p.waitFor("tip 3", 30*time.Second, isEvent("tip", 3)); err != nil {
				t.Fatal(err)
			}
			if r.stop {
				if err := node.Stop(); err != nil {
					t.Fatal(err)
				}
			}
			deadline := time.Now().Add(r.waitTill)
			for time.Now().Before(deadline) && (r.warning == "" || !strings.Contains(p.stderr.String(), r.warning)) {
				time.Sleep(200 * time.Millisecond)
			}
			stderr := p.stderr.String()
			if r.warning != "" && !strings.Contains(stderr, r.warning+node.P2PAddr+r.why) {
				t.Errorf("%v after the node stopped, stderr %q lacks %q", r.waitTill, stderr, r.warning+node.P2PAddr+r.why)
			}
			if r.warning != "" && !strings.Contains(stderr, r.hint) {
				t.Errorf("stderr %q does not say how to follow with other nodes (%q)", stderr, r.hint)
			}
			for _, raw := range libraryWords {
				if strings.Contains(stderr, raw) {
					t.Errorf("stderr %q speaks the library's words %q", stderr, raw)
				}
			}
			if r.warning == "" && strings.Contains(stderr, "no peer in use") {
				t.Errorf("stderr %q warns of no peer with the node up", stderr)
			}
			err := p.interrupt(t)
			var ee *exec.ExitError
			if err != nil && !errors.As(err, &ee) {
				t.Fatal(err)
			}
			if err != nil {
				t.Errorf("exit %v after SIGINT, want 0; stderr %q", err, p.stderr.String())
			}
			if len(p.got) == 0 || p.got[len(p.got)-1]["event"] != "summary" {
				t.Fatalf("the last line is no summary: %v", p.got)
			}
			if r.json {
				lines := warningLines(t, p.stderr.String())
				if len(lines) != 1 || !strings.Contains(lines[0], r.warning+node.P2PAddr) {
					t.Errorf("warning lines %q: want the one that no peer is in use", lines)
				}
			}
			ws, _ := p.got[len(p.got)-1]["warnings"].([]any)
			found := false
			for _, w := range ws {
				found = found || strings.Contains(w.(string), "interrupted while waiting")
				if strings.Contains(w.(string), "interrupted while waiting") && !strings.Contains(w.(string), node.P2PAddr+r.why) {
					t.Errorf("the summary's warning %q lacks why the node is not used, %q", w, r.why)
				}
				for _, raw := range libraryWords {
					if strings.Contains(w.(string), raw) && strings.Contains(w.(string), "interrupted while waiting") {
						t.Errorf("the summary's warning %q speaks the library's words %q", w, raw)
					}
				}
			}
			if r.summary != "" && !found {
				t.Errorf("the summary's warnings %v lack %q", ws, r.summary)
			}
			if r.summary == "" && found {
				t.Errorf("the summary's warnings %v speak of a wait with the node up", ws)
			}
		})
	}
}
