package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/btcsuite/btcd/wire"
	"github.com/spvfilter/spvfilter/peer/peertest"
)

// TestUserAgentCannotForgeOutputLines: a peer's user agent (its own words
// in its version message, up to 256 bytes) is printed in scan's text
// output. A peer that puts line breaks in it, followed by a match line
// of its choosing (a payment to the watched address that never
// happened), adds no line: its user agent is printed with control
// characters replaced, and the output holds no match line.
func TestUserAgentCannotForgeOutputLines(t *testing.T) {
	node := peertest.StartBtcd(t, peertest.WithArgs("--nobanning"))
	node.Generate(t, 110)
	addr := peertest.NewKey("alice").Address(node.Params).EncodeAddress()
	hash, err := node.RPC().GetBlockHash(105)
	if err != nil {
		t.Fatal(err)
	}
	fake := strings.Repeat("ab", 32)
	agent := fmt.Sprintf("/btcd:0.24.2/)\n%s  height 105  block %s  watch %s\npeer 10.0.0.1:8333 (/btcd:0.24.2/", fake, hash, addr)
	if len(agent) > 256 {
		t.Fatalf("user agent of %d bytes", len(agent))
	}
	liar := peertest.NewLiar(t, node.P2PAddr, node.Params.Net, func(m wire.Message) ([]wire.Message, bool) {
		if v, ok := m.(*wire.MsgVersion); ok {
			v.UserAgent = agent
		}
		return []wire.Message{m}, false
	})
	stdout, stderr, status := runCLI(t, "", "scan", "--network", "regtest", "--peer", liar.Addr, "--watch", addr)
	if status != exitOK {
		t.Fatalf("status %d, stderr %q", status, stderr)
	}
	match := regexp.MustCompile(`(?m)^[0-9a-f]{64}  height \d+  block [0-9a-f]{64}  watch `)
	if lines := match.FindAllString(stdout, -1); len(lines) > 0 {
		t.Errorf("alice was never paid, yet the output shows %d match line(s), written by the peer:\n%s", len(lines), stdout)
	}
}

// recordedBar is a progress bar an app drew through its hook.
type recordedBar struct {
	total, done int
	finished    bool
}

// barApp returns an app writing nowhere whose progress bars are
// recorded, by what they describe, in the map returned.
func barApp() (*app, map[string]*recordedBar) {
	bars := map[string]*recordedBar{}
	a := &app{stdin: strings.NewReader(""), stdout: io.Discard, stderr: io.Discard,
		newBar: func(what string, total int) (func(done, total int), func()) {
			b := &recordedBar{total: total}
			bars[what] = b
			return func(done, _ int) { b.done = done }, func() { b.finished = true }
		}}
	return a, bars
}

// TestProgressOnLongRuns: analyze draws its progress over the universe
// file's bytes, and evaluate over the report's and then while it scores
// (on a terminal; here through the app's hook).
func TestProgressOnLongRuns(t *testing.T) {
	dir := t.TempDir()
	sim := filepath.Join(dir, "sim")
	runOK(t, smallSimulation("7", sim)...)
	report := filepath.Join(dir, "report.json")
	a, bars := barApp()
	var out strings.Builder
	a.stdout = &out
	if status := a.execute([]string{"privacy", "analyze", "--capture", filepath.Join(sim, "capture.jsonl"), "--universe", filepath.Join(sim, "universe.txt"), "--json"}); status != exitOK {
		t.Fatalf("analyze: status %d", status)
	}
	if err := os.WriteFile(report, []byte(out.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	a.stdout, a.json, a.running = io.Discard, false, false
	if status := a.execute([]string{"privacy", "evaluate", "--labels", filepath.Join(sim, "labels.json"), "--report", report}); status != exitOK {
		t.Fatalf("evaluate: status %d", status)
	}
	st, err := os.Stat(filepath.Join(sim, "universe.txt"))
	if err != nil {
		t.Fatal(err)
	}
	for what, want := range map[string]int{"testing the universe": int(st.Size()), "reading the report": len(out.String()), "scoring the report": -1} {
		b := bars[what]
		if b == nil || b.total != want || want > 0 && b.done != want || !b.finished {
			t.Errorf("%s: bar %+v, want one of %d finished", what, b, want)
		}
	}
}

// TestProgressSimulateLink: privacy simulate spins while it simulates
// and while it writes its files, and privacy analyze --link while it
// links the sessions (on a terminal; here through the app's hook).
func TestProgressSimulateLink(t *testing.T) {
	sim := filepath.Join(t.TempDir(), "sim")
	a, bars := barApp()
	if status := a.execute(smallSimulation("7", sim)); status != exitOK {
		t.Fatalf("simulate: status %d", status)
	}
	a.running = false
	if status := a.execute([]string{"privacy", "analyze", "--capture", filepath.Join(sim, "capture.jsonl"), "--universe", filepath.Join(sim, "universe.txt"), "--link", "--json"}); status != exitOK {
		t.Fatalf("analyze: status %d", status)
	}
	for _, what := range []string{"simulating", "writing " + sim, "linking the sessions"} {
		if b := bars[what]; b == nil || b.total != -1 || !b.finished {
			t.Errorf("%s: spinner %+v, want one finished", what, b)
		}
	}
}

// TestPlural: a count takes its noun's plural unless it is 1, -es after
// s, x, ch or sh; and the text of a one-address wallet says so.
func TestPlural(t *testing.T) {
	for _, tc := range []struct {
		n    int
		noun string
		want string
	}{
		{0, "script", "0 scripts"},
		{1, "script", "1 script"},
		{2, "cover chain", "2 cover chains"},
		{1, "address", "1 address"},
		{3, "address", "3 addresses"},
		{2, "match", "2 matches"},
		{2, "box", "2 boxes"},
	} {
		if got := plural(tc.n, tc.noun); got != tc.want {
			t.Errorf("plural(%d, %q) = %q, want %q", tc.n, tc.noun, got, tc.want)
		}
	}
	stdout := runOK(t, "privacy", "model", "--addresses", "1", "--elements-per-address", "1", "--universe-size", "1000")
	if !strings.Contains(stdout, "1 address x 1 element = 1 inserted") || strings.Contains(stdout, "1 elements") {
		t.Errorf("a wallet of one address of one element:\n%s", stdout)
	}
}
