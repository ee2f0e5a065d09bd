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

	"github.com/spvfilter/spvfilter/bip37"
	"github.com/spvfilter/spvfilter/peer/peertest"
	"github.com/spvfilter/spvfilter/privacy/attack"
	"github.com/spvfilter/spvfilter/privacy/leak"
	"github.com/spvfilter/spvfilter/privacy/model"
	"github.com/spvfilter/spvfilter/privacy/universe"
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

// TestTextPlurals: the texts that count things say "1 block", "2
// blocks", never "1 blocks" nor "block(s)": a bloom warning, simulate's
// and universe's summaries, a bip37 scan's leak line and warnings, and
// the advice's verdict.
func TestTextPlurals(t *testing.T) {
	addr := "127.0.0.1:1"
	one := &bip37LeakJSON{WatchedScripts: 1, UniverseSize: 1000, UniverseFrom: "--universe-size",
		Filter: bip37FilterJSON{FPRate: 0.0001, FPRateFrom: "--fprate", Sizing: "core", Bytes: 1, HashFuncs: 1, Elements: 1},
		Peers:  []bip37PeerLeakJSON{{Address: &addr, BloomLeak: leak.BloomLeak{Filters: 1}, FilterAdds: 1, RevealedScripts: 1, Txs: 1}},
		Target: &bip37TargetJSON{Filters: 1, BlockTxs: 1, Measured: 1}}
	one.Collusion = one.Peers[0]
	two := &bip37LeakJSON{WatchedScripts: 2, UniverseSize: 1000, UniverseFrom: "--universe-size",
		Filter: bip37FilterJSON{Bytes: 2, HashFuncs: 2, Elements: 2},
		Peers:  []bip37PeerLeakJSON{{Address: &addr, BloomLeak: leak.BloomLeak{Filters: 1}, Txs: 1}, {Address: &addr, BloomLeak: leak.BloomLeak{Filters: 1}, Txs: 2}}}
	two.Collusion = bip37PeerLeakJSON{BloomLeak: leak.BloomLeak{Filters: 2}, FilterAdds: 2, RevealedScripts: 2}
	plan := &bip37Plan{rate: 0.0001}
	text := func(f func(w io.Writer)) string {
		var b strings.Builder
		f(&b)
		return b.String()
	}
	advice := &model.Advice{Params: model.AdviceParams{Model: model.Params{Sizing: "core"}, TargetPHAll: 0.5, BlockTxs: 1}}
	row := model.AdviceRow{Filters: 1, Reachable: true, Sizing: model.Sizing{FilterBytes: 1, HashFuncs: 1}}
	_, degenerate := bloomDesign(1, 0.9, bip37.SizingBitcoinj)
	_, tooManyFuncs := bloomDesign(1, 1e-300, bip37.SizingCore)
	tests := []struct {
		name string
		text string
		want []string
	}{
		{"bloom, bitcoinj's floor", strings.Join(degenerate, "\n"), []string{"gives 1 byte and 5 hash functions where"}},
		{"bloom, a rate beyond 50 functions", strings.Join(tooManyFuncs, "\n"), []string{"once 1 element is in"}},
		{"simulate, one of each", text(func(w io.Writer) {
			printSimulate(w, &simulateOutput{UniverseSize: 1, AddressCount: 1, WalletCount: 1, SessionCount: 1, PaymentCount: 1,
				Fetch: &simulateFetchSummary{BlockCount: 1, CandidateCount: 1, ScriptCount: 1, WalletCount: 1, PayerChangeCount: 1, SessionCount: 1,
					FetchedBlockCount: 1, DecoyBlockCount: 1, CoverCount: 1, CoverMissingCount: 1, CoverBlockCount: 1}})
		}), []string{"1 candidate, 1 of them the address of 1 wallet", "1 session:", "1 payment between", "1 block, 1 script; 1 of them of 1 wallet, 1 script of payers' change",
			"1 block fetched: 1 decoy,", "covers: 1 script of others", "(1 chain the chain could not give), 1 block fetched"}},
		{"simulate, two of each", text(func(w io.Writer) {
			printSimulate(w, &simulateOutput{UniverseSize: 2, AddressCount: 2, WalletCount: 2, SessionCount: 2, PaymentCount: 2})
		}), []string{"2 candidates, 2 of them the addresses of 2 wallets", "2 sessions:", "2 payments between"}},
		{"universe, one of each", text(func(w io.Writer) {
			printUniverseStats(w, "", universe.Stats{Blocks: 1, Addresses: 1, PubKeys: 1, Scripts: 1, Lines: 1, Listed: 1, SpendsIndexed: 1}, 7, 7, "u.txt", "u.idx")
		}), []string{"1 block (7..7): 1 address, 1 public key (pairs; 1 address line taken over by a key's), 1 script: 1 line written to u.txt", "(1 spend attributed"}},
		{"universe, two of each", text(func(w io.Writer) {
			printUniverseStats(w, "", universe.Stats{Blocks: 2, Addresses: 2, PubKeys: 2, Scripts: 2, Lines: 2, Listed: 2}, 6, 7, "u.txt", "")
		}), []string{"2 blocks (6..7): 2 addresses, 2 public keys (pairs; 2 address lines taken over by a key's), 2 scripts: 2 lines written"}},
		{"bip37 leak, one of each", bip37LeakLine(one) + "\n" + strings.Join(plan.leakWarnings(one), "\n"), []string{
			"1 byte, 1 hash function, 1 element of the watch list", "holds 1 filter (", "names your 1 script with", "; 1 script named for certain",
			"chosen for up to 1 filter", "per block of 1 transaction against", "this scan received 1 false-positive transaction",
			"the scan's filter went to one peer, 127.0.0.1:1 (1 filter, never reloaded)",
			"1 outpoint of the wallet went out in clear (filteradd, for the --flags update rule): it names 1 of your 1 script to the peer with"}},
		{"bip37 leak, two of each", bip37LeakLine(two) + "\n" + strings.Join(plan.leakWarnings(two), "\n"), []string{
			"2 bytes, 2 hash functions, 2 elements of the watch list", "the 2 peers together hold 2 filters (", "names your 2 scripts with",
			"127.0.0.1:1: 1 filter, P_h(N) 0, 1 transaction sent", "127.0.0.1:1: 1 filter, P_h(N) 0, 2 transactions sent",
			"together they intersect 2 filters", "2 outpoints of the wallet went out in clear (filteradd, for the --flags update rule): they name 2 of your 2 scripts to the peers with"}},
		{"peers, one address known", text(func(w io.Writer) {
			(&app{stdout: w, stderr: io.Discard}).printPeers(&peersOutput{Connected: true, Known: []knownJSON{{}}})
		}), []string{"1 address of peers in the address book"}},
		{"peers, none known", text(func(w io.Writer) {
			(&app{stdout: w, stderr: io.Discard}).printPeers(&peersOutput{Connected: true})
		}), []string{"0 addresses of peers in the address book"}},
		{"analyze's universe, one of each", text(func(w io.Writer) {
			printUniverse(w, &attack.Report{UniverseSize: 1, Pairs: 1, MergedAddressLines: 1, Universe: &universe.Scan{LinesRead: 1, CandidatesTested: 1}})
		}), []string{"universe: 1 candidate (1 public key counted as their address, 1 address line merged", "1 candidate tested"}},
		{"advice", adviceVerdict(advice, row), []string{"With 1 filter, ", "1 byte with 1 hash function", "per block of 1 transaction."}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, w := range tt.want {
				if !strings.Contains(tt.text, w) {
					t.Errorf("%q not in\n%s", w, tt.text)
				}
			}
			if strings.Contains(tt.text, "(s)") {
				t.Errorf("a plural in brackets in\n%s", tt.text)
			}
		})
	}
}
