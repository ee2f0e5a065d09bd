package main

import (
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/btcsuite/btcd/chaincfg"

	"github.com/btcsuite/btcd/btcutil"
	"github.com/btcsuite/btcd/wire"

	"github.com/spvfilter/spvfilter/peer/client"
	"github.com/spvfilter/spvfilter/peer/peertest"
)

type scanOutput struct {
	Matches []struct {
		Txid          string   `json:"txid"`
		Height        int32    `json:"height"`
		BlockHash     string   `json:"block_hash"`
		Watch         []string `json:"watch"`
		FalsePositive bool     `json:"false_positive"`
	} `json:"matches"`
	Peers []struct {
		Address   string `json:"address"`
		UserAgent string `json:"user_agent"`
		Banned    bool   `json:"banned"`
		Reason    string `json:"reason"`
	} `json:"peers"`
	Warnings  []string `json:"warnings"`
	Conflicts []struct {
		Height int32      `json:"height"`
		Sides  [][]string `json:"sides"`
	} `json:"conflicts"`
	BlocksScanned   int    `json:"blocks_scanned"`
	FiltersReceived int    `json:"filters_received"`
	MerkleBlocks    int    `json:"merkle_block_count"`
	BlocksFetched   int    `json:"blocks_fetched"`
	BytesReceived   uint64 `json:"bytes_received"`
	Leak            *struct {
		WatchedScripts int `json:"watched_script_count"`
		Peers          []struct {
			Address       string `json:"address"`
			BlocksFetched int    `json:"blocks_fetched"`
		} `json:"peers"`
		Collusion struct {
			Address       *string `json:"address"`
			BlocksFetched int     `json:"blocks_fetched"`
		} `json:"collusion"`
	} `json:"leak"`
	From int32 `json:"from"`
	To   int32 `json:"to"`
}

// scanChain is TestScanCommand's regtest chain: alice's address and
// carol's script (watched as hex, also from a file) funded at height 102,
// alice's coin spent to bob at 106, the tip at 108.
type scanChain struct {
	node                            *peertest.Node
	bob                             *peertest.Key
	fund, spend                     *wire.MsgTx
	aliceAddr, carolHex, scriptFile string
}

// scanChain's heights.
const (
	scanFundHeight  = 102
	scanSpendHeight = 106
)

func newScanChain(t *testing.T) *scanChain {
	node := peertest.StartBtcd(t, peertest.WithArgs("--nobanning"))
	node.Generate(t, 101)
	alice := peertest.NewKey("alice")
	c := &scanChain{node: node, bob: peertest.NewKey("bob"), aliceAddr: alice.Address(node.Params).EncodeAddress()}
	// A P2WPKH output script, watched as hex.
	carolScript := append([]byte{0x00, 0x14}, btcutil.Hash160([]byte("carol"))...)
	c.fund = node.SpendCoinbase(t, wire.NewTxOut(10_000_000, alice.PkScript()), wire.NewTxOut(5_000_000, carolScript))
	node.Confirm(t, c.fund)
	node.Generate(t, 3)
	c.spend = node.Spend(t, []peertest.Output{peertest.OutputOf(c.fund, 0, alice)}, wire.NewTxOut(10_000_000-peertest.Fee, c.bob.PkScript()))
	node.Confirm(t, c.spend)
	node.Generate(t, 2) // tip 108
	c.carolHex = hex.EncodeToString(carolScript)
	c.scriptFile = filepath.Join(t.TempDir(), "script.hex")
	if err := os.WriteFile(c.scriptFile, []byte(c.carolHex+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return c
}

// scanJSON runs scan --json on regtest and decodes its output, checking
// that standard error holds no text; it returns the warnings of the
// JSON, a line each.
func (c *scanChain) scanJSON(t *testing.T, args ...string) (scanOutput, string) {
	t.Helper()
	stdout, stderr, status := runCLI(t, "", append([]string{"scan", "--json", "--network", "regtest"}, args...)...)
	if status != exitOK || stderr != "" {
		t.Fatalf("status %d, standard error %q: want 0 and no text there", status, stderr)
	}
	var out scanOutput
	if err := json.Unmarshal([]byte(stdout), &out); err != nil {
		t.Fatal(err)
	}
	return out, strings.Join(out.Warnings, "\n")
}

// scanFound maps the transactions a scan found (false positives left
// out) to their watch items, joined by commas.
func scanFound(out scanOutput) map[string]string {
	m := map[string]string{}
	for _, x := range out.Matches {
		if !x.FalsePositive {
			m[x.Txid] = strings.Join(x.Watch, ",")
		}
	}
	return m
}

// TestScanCommand: scan against a real btcd, in both modes, in JSON and
// text, beside lying peers, with outpoints, a data directory kept, and
// the input it refuses (each part a function of its own on one chain).
func TestScanCommand(t *testing.T) {
	c := newScanChain(t)
	t.Run("matches", func(t *testing.T) { testScanMatches(t, c) })
	t.Run("text output", func(t *testing.T) { testScanText(t, c) })
	t.Run("liars", func(t *testing.T) { testScanLiars(t, c) })
	t.Run("outpoints", func(t *testing.T) { testScanOutpoints(t, c) })
	t.Run("a second scan with the same --datadir", func(t *testing.T) { testScanDatadirKept(t, c) })
	t.Run("bip37 warnings", func(t *testing.T) { testScanBIP37Warnings(t, c) })
	t.Run("bad input", func(t *testing.T) { testScanBadInput(t, c) })
}

// testScanMatches: the transactions each mode finds, and the summary and
// leak each reports, on the whole chain and on ranges.
func testScanMatches(t *testing.T, c *scanChain) {
	fundWant := []scanMatch{{c.fund.TxHash().String(), scanFundHeight, c.aliceAddr + "," + c.carolHex}}
	spendWant := scanMatch{c.spend.TxHash().String(), scanSpendHeight, c.aliceAddr}
	tests := []struct {
		name  string
		args  []string
		want  []scanMatch
		stdin string
	}{
		{"bip157 whole chain", []string{"--mode", "bip157", "--watch", c.aliceAddr, "--watch", c.carolHex}, append(fundWant, spendWant), ""},
		{"bip37 whole chain", []string{"--mode", "bip37", "--watch", c.aliceAddr, "--watch", "@" + c.scriptFile}, append(fundWant, spendWant), ""},
		{"bip37 from stdin", []string{"--mode", "bip37", "--watch", c.aliceAddr, "--watch", "-", "--from", "0", "--to", "108"}, append(fundWant, spendWant), c.carolHex},
		{"bip157 only the spend", []string{"--mode", "bip157", "--watch", c.aliceAddr, "--from", "106", "--to", "106"}, []scanMatch{spendWant}, ""},
		{"bip157 range ends before the spend", []string{"--mode", "bip157", "--watch", c.aliceAddr, "--from", "102", "--to", "105"}, []scanMatch{{c.fund.TxHash().String(), scanFundHeight, c.aliceAddr}}, ""},
		{"bip37 nothing", []string{"--mode", "bip37", "--watch", c.bob.Address(c.node.Params).EncodeAddress(), "--to", "105"}, nil, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			args := append([]string{"scan", "--json", "--peer", c.node.P2PAddr, "--network", "regtest"}, tt.args...)
			stdout, stderr, status := runCLI(t, tt.stdin, args...)
			if status != exitOK {
				t.Fatalf("status %d: %s", status, stderr)
			}
			if !strings.Contains(stdout, `"matches": [`) {
				t.Errorf("matches is not an array: %s", stdout)
			}
			var out scanOutput
			if err := json.Unmarshal([]byte(stdout), &out); err != nil {
				t.Fatal(err)
			}
			c.checkScan(t, out, stderr, tt.want, slices.Contains(tt.args, "bip157"))
		})
	}
}

// scanMatch is a transaction a scan found: its height and watch items.
type scanMatch struct {
	txid   string
	height int32
	watch  string
}

// checkScan checks a scan of the chain's one node: its warnings in its
// JSON alone (--json leaves standard error free of text), saying the
// result rests on one peer;
// the peer; the matches found (want); the summary; and the leak report.
func (c *scanChain) checkScan(t *testing.T, out scanOutput, stderr string, want []scanMatch, bip157 bool) {
	t.Helper()
	// No progress bar when stderr is not a terminal, and with --json
	// the warnings are in the JSON alone. One peer is always worth a
	// warning.
	if stderr != "" || !slices.ContainsFunc(out.Warnings, func(w string) bool {
		return strings.Contains(w, "rests on one peer")
	}) {
		t.Errorf("stderr %q, JSON warnings %q: want none on stderr, the JSON saying the result rests on one peer", stderr, out.Warnings)
	}
	if len(out.Peers) != 1 || out.Peers[0].Address != c.node.P2PAddr || out.Peers[0].Banned || !strings.Contains(out.Peers[0].UserAgent, "btcd") {
		t.Errorf("peers %+v", out.Peers)
	}
	var got []scanMatch
	for _, m := range out.Matches {
		if m.FalsePositive {
			continue
		}
		got = append(got, scanMatch{m.Txid, m.Height, strings.Join(m.Watch, ",")})
		if m.BlockHash == "" {
			t.Errorf("%s: no block hash", m.Txid)
		}
	}
	if len(got) != len(want) {
		t.Fatalf("matches %v, want %v", got, want)
	}
	for i := range got {
		if got[i] != want[i] {
			t.Errorf("match %d: %v, want %v", i, got[i], want[i])
		}
	}
	if out.BlocksScanned != int(out.To-out.From)+1 || out.BytesReceived == 0 {
		t.Errorf("summary: %+v", out)
	}
	switch l := out.Leak; {
	case !bip157 && (l == nil || len(l.Peers) != 1 || l.Peers[0].Address != c.node.P2PAddr || l.Collusion.Address != nil || l.WatchedScripts == 0):
		t.Errorf("bip37 leak %+v, want the model's for the filtering peer", l)
	case bip157 && (l == nil || len(l.Peers) != 1 || l.Peers[0].Address != c.node.P2PAddr || l.Collusion.Address != nil ||
		l.Peers[0].BlocksFetched != out.BlocksFetched || l.WatchedScripts == 0):
		t.Errorf("leak %+v, want the one peer's, which saw the %d blocks fetched", l, out.BlocksFetched)
	}
}

// testScanText: the text output names each match, the range scanned,
// the bytes and the leak.
func testScanText(t *testing.T, c *scanChain) {
	stdout, stderr, status := runCLI(t, "", "scan", "--peer", c.node.P2PAddr, "--network", "regtest",
		"--mode", "bip157", "--watch", c.aliceAddr)
	if status != exitOK {
		t.Fatalf("status %d: %s", status, stderr)
	}
	for _, s := range []string{c.spend.TxHash().String() + "  height 106", "watch " + c.aliceAddr, "scanned 109 blocks (0..108)", "filters received: 109", "bytes received: ",
		"leak: the peers together, seeing every block fetched, would attribute ", " of your 1 script at >= 0.95", "; one peer, " + c.node.P2PAddr + ", saw all "} {
		if !strings.Contains(stdout, s) {
			t.Errorf("output lacks %q:\n%s", s, stdout)
		}
	}
}

// testScanLiars: a liar whose filter hides a match beside an honest peer
// is banned and the match found; a liar whose filter leaves out what a
// spend spends is a conflict, nobody banned.
func testScanLiars(t *testing.T, c *scanChain) {
	t.Run("a consistent liar among two peers", func(t *testing.T) {
		liar := peertest.NewLiar(t, c.node.P2PAddr, c.node.Params.Net, peertest.ForgeFilter(t, c.node, scanFundHeight, peertest.EmptyFilter))
		honest := peertest.NewLiar(t, c.node.P2PAddr, c.node.Params.Net, nil)
		out, warned := c.scanJSON(t, "--peer", liar.Addr, "--peer", honest.Addr, "--watch", c.aliceAddr)
		if got := scanFound(out); got[c.fund.TxHash().String()] != c.aliceAddr || got[c.spend.TxHash().String()] != c.aliceAddr {
			t.Errorf("matches %v", got)
		}
		if len(out.Peers) != 2 || !out.Peers[0].Banned || out.Peers[0].Reason == "" || out.Peers[1].Banned {
			t.Errorf("peers %+v", out.Peers)
		}
		if !strings.Contains(warned, "--peer "+liar.Addr+" was banned") {
			t.Errorf("warnings %q: none of the banned peer", warned)
		}
	})
	t.Run("a liar hiding a spend behind its outputs' filter", func(t *testing.T) {
		// The spend's public key shows the script it spends if the output
		// was standard: the block favours the honest peer, but proves
		// nothing (a spend of a non-standard output can take that shape).
		// A conflict: nobody banned, the block scanned whole.
		liar := peertest.NewLiar(t, c.node.P2PAddr, c.node.Params.Net, peertest.ForgeFilter(t, c.node, scanSpendHeight, peertest.OutputsOnly))
		honest := peertest.NewLiar(t, c.node.P2PAddr, c.node.Params.Net, nil)
		out, warned := c.scanJSON(t, "--peer", honest.Addr, "--peer", liar.Addr, "--watch", c.aliceAddr)
		if got := scanFound(out); got[c.spend.TxHash().String()] != c.aliceAddr {
			t.Errorf("matches %v: the spend is missing", got)
		}
		if len(out.Peers) != 2 || out.Peers[0].Banned || out.Peers[1].Banned {
			t.Errorf("peers %+v", out.Peers)
		}
		if len(out.Conflicts) != 1 || out.Conflicts[0].Height != 106 ||
			!strings.Contains(warned, "if the outputs they spend were standard, the block favours "+honest.Addr+": the filter of "+liar.Addr+" leaves out") {
			t.Errorf("conflicts %+v, warnings %q", out.Conflicts, warned)
		}
	})
}

// testScanOutpoints: outpoints are found in both modes, and one given in
// the wrong byte order is hinted, not matched.
func testScanOutpoints(t *testing.T, c *scanChain) {
	t.Run("outpoints found in both modes from after their funding", func(t *testing.T) {
		op := c.fund.TxHash().String() + ":0"
		for _, args := range [][]string{
			{"--mode", "bip157", "--watch", op + ":" + c.aliceAddr},
			{"--mode", "bip37", "--watch", op},
		} {
			out, _ := c.scanJSON(t, append(args, "--peer", c.node.P2PAddr, "--from", "104")...)
			if got := scanFound(out); len(got) != 1 || got[c.spend.TxHash().String()] == "" {
				t.Errorf("%v: matches %v, want the spend", args, got)
			}
		}
	})
	t.Run("an outpoint in the wrong byte order is hinted", func(t *testing.T) {
		// In bip157 mode the client matches locally and watches the
		// reversed outpoint too (bip37 would tell the node of it).
		reversed := reverseHex(c.fund.TxHash().String())
		out, _ := c.scanJSON(t, "--mode", "bip157", "--peer", c.node.P2PAddr, "--watch", reversed+":0:"+c.aliceAddr)
		want := "--watch 1: transaction " + c.spend.TxHash().String() + " at height 106 spends the outpoint with its txid byte-reversed, " + c.fund.TxHash().String() + ":0"
		if !slices.ContainsFunc(out.Warnings, func(w string) bool { return strings.Contains(w, want) }) {
			t.Errorf("warnings %q: want the byte order hinted", out.Warnings)
		}
		if len(out.Matches) != 0 {
			t.Errorf("matches %+v: the spend of the reversed outpoint is a hint, not a match", out.Matches)
		}
		// The outpoint in display order: no hint.
		out, _ = c.scanJSON(t, "--peer", c.node.P2PAddr, "--watch", c.fund.TxHash().String()+":0:"+c.aliceAddr)
		if slices.ContainsFunc(out.Warnings, func(w string) bool { return strings.Contains(w, "byte-reverse") }) {
			t.Errorf("warnings %q for an outpoint in display order", out.Warnings)
		}
	})
}

// testScanDatadirKept: a second scan with the same data directory
// fetches no filter again.
func testScanDatadirKept(t *testing.T, c *scanChain) {
	dir := t.TempDir()
	first, _ := c.scanJSON(t, "--peer", c.node.P2PAddr, "--datadir", dir, "--watch", c.aliceAddr)
	second, _ := c.scanJSON(t, "--peer", c.node.P2PAddr, "--datadir", dir, "--watch", c.aliceAddr)
	t.Logf("bytes received: first %d, second %d", first.BytesReceived, second.BytesReceived)
	// The second scan fetches no filter and no filter header of the
	// range again; what it receives is the check of the peer's last
	// 100 filter headers against the stored ones (3.3 KB, a large part
	// of this short chain: the client tests bound a longer chain's
	// second scan at 10%) and the matching blocks.
	if fmt.Sprint(scanFound(first)) != fmt.Sprint(scanFound(second)) || second.FiltersReceived != 0 ||
		first.FiltersReceived == 0 || second.BytesReceived*2 > first.BytesReceived {
		t.Errorf("first %v (%d bytes, %d filters), second %v (%d bytes, %d filters)", scanFound(first), first.BytesReceived,
			first.FiltersReceived, scanFound(second), second.BytesReceived, second.FiltersReceived)
	}
	if _, err := os.Stat(filepath.Join(dir, "regtest", "headers.bin")); err != nil {
		t.Errorf("no chain state in the data directory: %v", err)
	}
}

// testScanBIP37Warnings: a high --fprate in bip37 mode is warned of.
func testScanBIP37Warnings(t *testing.T, c *scanChain) {
	for _, tt := range []struct {
		fprate string
		want   []string
	}{
		// A filter at 0.5 has no hash function: refused below.
		{"0.2", []string{"matches about 20%", "funded before height 104", "rests on one peer"}},
	} {
		out, _ := c.scanJSON(t, "--peer", c.node.P2PAddr, "--mode", "bip37", "--fprate", tt.fprate, "--from", "104", "--watch", c.aliceAddr)
		joined := strings.Join(out.Warnings, "\n")
		for _, w := range tt.want {
			if !strings.Contains(joined, w) {
				t.Errorf("--fprate %s: warnings %q lack %q", tt.fprate, out.Warnings, w)
			}
		}
	}
}

// testScanBadInput: input scan refuses, in one line naming its flag,
// before it connects.
func testScanBadInput(t *testing.T, c *scanChain) {
	bad := []struct {
		name string
		args []string
		msg  string
	}{
		{"no watch", []string{"--network", "regtest"}, "watch"},
		{"bad update flags", []string{"--network", "regtest", "--watch", c.aliceAddr, "--flags", "some"}, "--flags"},
		{"follow with bip37", []string{"--network", "regtest", "--watch", c.aliceAddr, "--follow", "--mode", "bip37"}, "--follow"},
		{"follow with --to", []string{"--network", "regtest", "--watch", c.aliceAddr, "--follow", "--to", "5"}, "--follow"},
		{"datadir is a file", []string{"--network", "regtest", "--watch", c.aliceAddr, "--datadir", c.scriptFile}, "--datadir"},
		{"negative filter cache", []string{"--network", "regtest", "--watch", c.aliceAddr, "--filter-cache", "-1"}, "--filter-cache"},
		{"outpoint with a bad script", []string{"--network", "regtest", "--watch", strings.Repeat("ab", 32) + ":1:zz"}, "--watch 1"},
		{"second peer without port", []string{"--network", "regtest", "--watch", c.aliceAddr, "--peer", "127.0.0.1"}, "--peer"},
		{"short txid", []string{"--network", "regtest", "--watch", "abcd:0"}, "the txid has 4 characters"},
		{"negative vout", []string{"--network", "regtest", "--watch", strings.Repeat("ab", 32) + ":-1"}, "vout \"-1\" is not a number"},
		{"vout too large", []string{"--network", "regtest", "--watch", strings.Repeat("ab", 32) + ":99999999999"}, "vout"},
		{"empty outpoint script", []string{"--network", "regtest", "--watch", strings.Repeat("ab", 32) + ":0:"}, "empty script"},
		{"mainnet address on regtest, named", []string{"--network", "regtest", "--watch", "bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kv8f3t4"}, "is a mainnet address, not a regtest one"},
		{"tweak with bip157", []string{"--network", "regtest", "--watch", c.aliceAddr, "--tweak", "5"}, "--tweak needs --mode bip37"},
		{"datadir under a file", []string{"--network", "regtest", "--watch", c.aliceAddr, "--datadir", c.scriptFile + "/x"}, "--datadir"},
		{"peer without port", []string{"--network", "regtest", "--watch", c.aliceAddr, "--peer", "localhost"}, "--peer"},
		{"bad network", []string{"--network", "moon", "--watch", c.aliceAddr}, "--network"},
		{"bad mode", []string{"--network", "regtest", "--mode", "bip99", "--watch", c.aliceAddr}, "--mode"},
		{"mainnet address on regtest", []string{"--network", "regtest", "--watch", "1BvBMSEYstWetqTFn5Au4m4GFg7xJaNVN2"}, "--watch 1"},
		{"not hex", []string{"--network", "regtest", "--watch", "zz"}, "--watch 1"},
		{"reversed range", []string{"--network", "regtest", "--watch", c.aliceAddr, "--from", "5", "--to", "4"}, "--to"},
		{"bip37 filter that matches everything", []string{"--network", "regtest", "--mode", "bip37", "--fprate", "0.5", "--watch", c.aliceAddr}, "--fprate 0.5: the BIP 37 filter of the watch list would match everything"},
		{"script without pushes in bip37", []string{"--network", "regtest", "--mode", "bip37", "--watch", "51"}, "no data push"},
		{"second script without pushes in bip37", []string{"--network", "regtest", "--mode", "bip37", "--watch", c.aliceAddr, "--watch", "6a"}, "--watch 2: script 6a has no data push"},
	}
	for _, tt := range bad {
		t.Run(tt.name, func(t *testing.T) {
			args := append([]string{"scan", "--peer", c.node.P2PAddr}, tt.args...)
			_, stderr, status := runCLI(t, "", args...)
			if status != exitBadInput || !strings.Contains(stderr, tt.msg) || strings.Count(stderr, "\n") != 1 {
				t.Errorf("status %d, stderr %q; want %d and a line mentioning %q", status, stderr, exitBadInput, tt.msg)
			}
		})
	}
}

func TestScanRefusedWithoutBloom(t *testing.T) {
	node := peertest.StartBtcd(t, peertest.WithArgs("--nopeerbloomfilters", "--nobanning"))
	node.Generate(t, 1)
	addr := peertest.NewKey("alice").Address(node.Params).EncodeAddress()
	_, stderr, status := runCLI(t, "", "scan", "--peer", node.P2PAddr, "--network", "regtest", "--mode", "bip37", "--watch", addr)
	if status != exitFailure || !strings.Contains(stderr, "NODE_BLOOM") || !strings.Contains(stderr, node.P2PAddr) {
		t.Fatalf("status %d, stderr %q; want a refusal naming the peer and NODE_BLOOM", status, stderr)
	}
	t.Log(stderr)
	// The other mode still works against this node.
	if _, stderr, status := runCLI(t, "", "scan", "--peer", node.P2PAddr, "--network", "regtest", "--mode", "bip157", "--watch", addr); status != exitOK {
		t.Fatalf("bip157 against the same node: status %d, %s", status, stderr)
	}
}

func TestScanRefusedWithoutCompactFilters(t *testing.T) {
	node := peertest.StartBtcd(t, peertest.WithArgs("--nocfilters", "--nobanning"))
	node.Generate(t, 1)
	addr := peertest.NewKey("alice").Address(node.Params).EncodeAddress()
	_, stderr, status := runCLI(t, "", "scan", "--peer", node.P2PAddr, "--network", "regtest", "--mode", "bip157", "--watch", addr)
	if status != exitFailure || !strings.Contains(stderr, "NODE_COMPACT_FILTERS") {
		t.Fatalf("status %d, stderr %q; want a refusal naming NODE_COMPACT_FILTERS", status, stderr)
	}
	// btcd v0.24.2 crashes on a cfilter request in this mode: it must
	// still be alive.
	if _, err := node.RPC().GetBlockCount(); err != nil {
		t.Fatalf("node after the refusal: %v", err)
	}
}

// TestScanTimeoutIsHonest: --timeout 60s against a node that never
// answers fails after 60 seconds, not earlier (btcd's own 30-second stall
// limit plays no part), saying that --peer gave no answer within it.
func TestScanTimeoutIsHonest(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			defer c.Close()
		}
	}()
	start := time.Now()
	_, stderr, status := runCLI(t, "", "scan", "--network", "regtest", "--peer", ln.Addr().String(), "--timeout", "60s",
		"--watch", peertest.NewKey("alice").Address(&chaincfg.RegressionNetParams).EncodeAddress())
	elapsed := time.Since(start)
	if status != exitFailure || !strings.Contains(stderr, "--peer "+ln.Addr().String()+": no answer to the version message within 1m0s") || strings.Contains(stderr, "closed by the node") ||
		!strings.Contains(stderr, ln.Addr().String()) {
		t.Fatalf("status %d, stderr %q", status, stderr)
	}
	if elapsed < 60*time.Second || elapsed > 65*time.Second {
		t.Fatalf("gave up after %v with --timeout 60s", elapsed)
	}
}

// TestWarningsNameTheWatchFlag: the client's warnings count watch items
// from 0 in the order it was given them; the user reads the --watch item
// they gave, counted from 1, with the file line it came from, a peer
// that could not be reached as a single peer's failure says it, and
// heights that rested on one peer as true when they were checked, not of
// the peers listed at the end (a peer that caught up since), and a file
// of the data directory by --datadir.
func TestWarningsNameTheWatchFlag(t *testing.T) {
	items := []watchItem{{given: "51", where: "--watch 1"}, {given: "bcrt1q...", where: "--watch 2 (@w.txt line 3)"}}
	got := byFlag([]string{
		"BIP 37 cannot see spends of outputs paying watch item 1 funded before height 5",
		"watch item 0 (outpoint x:0) has no script",
		"watch item 7 is not one of the user's",
		"peer 127.0.0.1:1 was not used: unreachable: peer 127.0.0.1:1: connect: peer disconnected: dial tcp 127.0.0.1:1: connect: connection refused",
		"peer 127.0.0.1:2 was not used: unreachable: peer 127.0.0.1:2: version handshake: protocol violation: message for network 3652501241, expected 3669344250",
		"peer 127.0.0.1:6 was not used: unreachable: peer 127.0.0.1:6: version handshake: protocol violation: undecodable \"version\" message: unexpected EOF",
		client.OnePeer{From: 503, To: 503, Peer: "127.0.0.1:3"}.String(),
		"peer 127.0.0.1:4 was not used: unreachable: peer 127.0.0.1:4: version handshake: peer disconnected: connection closed during the handshake (is the node on regtest?)",
		"peer 127.0.0.1:5 was not used: unreachable: peer 127.0.0.1:5: version handshake: peer stalled: no complete answer within 30s",
		"chain state: bans.json: a symbolic link to gone, which leads to no file: set aside as bans.json.damaged-1; no bans were loaded",
	}, items, &chaincfg.RegressionNetParams, "state")
	want := []string{
		"BIP 37 cannot see spends of outputs paying --watch 2 (@w.txt line 3) funded before height 5",
		"--watch 1 (outpoint x:0) has no script",
		"watch item 7 is not one of the user's",
		"peer 127.0.0.1:1 was not used: unreachable: connection refused: nothing listens there (is a regtest node listening on 127.0.0.1:1?)",
		"peer 127.0.0.1:2 was not used: unreachable: it answers with what is no regtest message: no regtest node listens there (another service, or a node of another network?)",
		"peer 127.0.0.1:6 was not used: unreachable: it answers the version message with a \"version\" message that does not decode: no working regtest node listens there (another service, or a node of another network?)",
		"heights 503..503 rest on one peer, 127.0.0.1:3: no other peer's chain reached them when they were checked (a peer that reached them later did not check them)",
		"peer 127.0.0.1:4 was not used: unreachable: it hung up on the version message: a node of another network does, as does one that bans this address (is --network regtest right?)",
		"peer 127.0.0.1:5 was not used: unreachable: no answer to the version message within 30s: no regtest node answers there (another service, such as a node's RPC port? regtest nodes listen on port 18444 by default)",
		"--datadir state: bans.json: a symbolic link to gone, which leads to no file: set aside as bans.json.damaged-1; no bans were loaded",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestScanPrivacyTarget: scan --privacy-target keeps its covers in
// --datadir and reports their cost in --json's cover object and in a
// text line; the wallet's matches are those of a scan without it, and
// covers short of the target stop the scan before the wallet's blocks
// are fetched, unless --allow-short-covers, where it says the target is
// not met, and why.
func TestScanPrivacyTarget(t *testing.T) {
	node := peertest.StartBtcd(t, peertest.WithArgs("--nobanning"))
	node.Generate(t, 101)
	alice := peertest.NewKey("alice")
	for range 3 {
		node.Confirm(t, node.SpendCoinbase(t, wire.NewTxOut(10_000_000, alice.PkScript()), wire.NewTxOut(5_000_000, peertest.NewKey("other").PkScript())))
		node.Generate(t, 2)
	}
	type coverOut struct {
		Cover *struct {
			Target       float64 `json:"target"`
			Covers       int     `json:"cover_count"`
			WalletBlocks int     `json:"wallet_blocks_fetched"`
			CoverBlocks  int     `json:"cover_blocks_fetched"`
			Met          bool    `json:"met"`
			Why          string  `json:"why"`
		} `json:"cover"`
		Matches []struct {
			Txid string `json:"txid"`
		} `json:"matches"`
	}
	dir := t.TempDir()
	scan := func(extra ...string) coverOut {
		t.Helper()
		args := append([]string{"scan", "--json", "--peer", node.P2PAddr, "--network", "regtest", "--watch", alice.Address(node.Params).EncodeAddress()}, extra...)
		stdout, stderr, status := runCLI(t, "", args...)
		if status != exitOK {
			t.Fatalf("status %d: %s", status, stderr)
		}
		var out coverOut
		if err := json.Unmarshal([]byte(stdout), &out); err != nil {
			t.Fatal(err)
		}
		return out
	}
	plain := scan()
	if plain.Cover != nil || len(plain.Matches) != 3 {
		t.Fatalf("without a target: cover %+v, %d matches", plain.Cover, len(plain.Matches))
	}
	// A chain of a few blocks holds no cover chain like alice's: the
	// scan stops before fetching her blocks, naming the bound and the
	// ways on.
	_, stderr, status := runCLI(t, "", "scan", "--json", "--peer", node.P2PAddr, "--network", "regtest", "--watch", alice.Address(node.Params).EncodeAddress(), "--privacy-target", "0.5", "--datadir", dir)
	if status != exitFailure || !strings.Contains(stderr, "--privacy-target 0.5 not met") || !strings.Contains(stderr, "--max-cover-blocks") || !strings.Contains(stderr, "--allow-short-covers") {
		t.Fatalf("covers short: status %d, %s", status, stderr)
	}
	covered := scan("--privacy-target", "0.5", "--datadir", dir, "--allow-short-covers")
	k := covered.Cover
	if k == nil || k.Target != 0.5 || k.Met || !strings.Contains(k.Why, "cover chain short") || strings.Contains(k.Why, "MaxCoverBlocks") || k.WalletBlocks != 3 {
		t.Fatalf("the covered scan, short covers allowed: %+v", k)
	}
	if !slices.Equal(covered.Matches, plain.Matches) {
		t.Errorf("covered matches %v, want %v", covered.Matches, plain.Matches)
	}
	if _, err := os.Stat(filepath.Join(dir, "regtest", "covers.dat")); err != nil {
		t.Errorf("no cover file: %v", err)
	}
	stdout, stderr, status := runCLI(t, "", "scan", "--peer", node.P2PAddr, "--network", "regtest", "--watch", alice.Address(node.Params).EncodeAddress(), "--privacy-target", "0.5", "--datadir", dir, "--allow-short-covers")
	if status != exitOK || !strings.Contains(stdout, "covers for privacy target 0.5: ") {
		t.Errorf("status %d, text %q (%s): want the cover line", status, stdout, stderr)
	}
}

// TestCheckWatchScriptsHash: a watch item that does not parse (a push
// that runs past its end: cut short) is refused, with the scripts that
// pay it when it is a hash of 20 or 32 bytes (a key hash, a txid given as
// hex); one that parses but is no standard output script is watched as
// given but warned of with its opcodes, and with the standard script it
// begins as when it is shorter (76a9: a P2PKH cut short); a standard
// script is not.
func TestCheckWatchScriptsHash(t *testing.T) {
	const hash160 = "751e76e8199196d454941c45d1b3a323f1433bd6"
	const txid = "184284bef1cf0dfa0c409275933ac4d0c83505efdea5d8c34261d08364fc6e15"
	tests := []struct {
		name, script string
		want         []string // nil: no warning
		err          string   // refused as bad input, holding err
	}{
		{"a key hash that parses", "13" + hash160[2:], []string{"--watch 1: 13" + hash160[2:] + " is 20 bytes read as an output script, which is no standard one: a key or script hash?"}, ""},
		{"a key hash", hash160, nil, "--watch 1: " + hash160 + " is 20 bytes read as an output script, which is no standard one: a key or script hash? watch the address, or the script that pays it: 76a914" + hash160 + "88ac (P2PKH), 0014" + hash160 + " (P2WPKH), a914" + hash160 + "87 (P2SH) (as a script it does not parse: "},
		{"a txid", txid, nil, "--watch 1: " + txid + " is 32 bytes read as an output script, which is no standard one: a txid? to find its outputs' spends watch them as TXID:VOUT; a witness program's script is 0020" + txid + " (P2WSH)"},
		{"P2WPKH", "0014" + hash160, nil, ""},
		{"P2PKH", "76a914" + hash160 + "88ac", nil, ""},
		{"P2WSH", "0020" + txid, nil, ""},
		{"P2SH", "a914" + hash160 + "87", nil, ""},
		{"P2TR", "5120" + txid, nil, ""},
		{"P2PK", "21" + "02" + txid + "ac", nil, ""},
		{"bare multisig", "5121" + "02" + txid + "51ae", nil, ""},
		{"a P2PKH cut short before its hash", "76a9", []string{"--watch 1: 76a9: OP_DUP OP_HASH160, not a standard output script (a P2PKH script is 76a914<20 bytes>88ac): nothing may pay it; did you cut it short?"}, ""},
		{"a P2PKH cut short after its hash", "76a914" + hash160, []string{"--watch 1: 76a914" + hash160 + ": OP_DUP OP_HASH160 " + hash160 + ", not a standard output script (a P2PKH script is 76a914<20 bytes>88ac)", "did you cut it short?"}, ""},
		{"a P2SH cut short", "a914" + hash160, []string{"--watch 1: a914" + hash160 + ": OP_HASH160 " + hash160 + ", not a standard output script (a P2SH script is a914<20 bytes>87)"}, ""},
		{"a P2PKH with a byte more", "76a914" + hash160 + "88ac00", []string{"--watch 1: 76a914" + hash160 + "88ac00: OP_DUP OP_HASH160 " + hash160 + " OP_EQUALVERIFY OP_CHECKSIG 0, not a standard output script (P2PKH, P2SH, P2WPKH, P2WSH, P2TR, bare multisig or OP_RETURN)", "(a typo?)"}, ""},
		{"a non-standard script of another size", "517551", []string{"--watch 1: 517551: 1 OP_DROP 1, not a standard output script (P2PKH,", "nodes do not relay a transaction paying it"}, ""},
		{"OP_TRUE, no cut-short hint from one byte", "51", []string{"--watch 1: 51: 1, not a standard output script (P2PKH,"}, ""},
		{"a push cut short", "0014", nil, "--watch 1: script 0014 does not parse (opcode OP_DATA_20 requires 21 bytes, but script only has 1 remaining): no output that can be spent pays it (is it cut short?)"},
		{"a non-standard script of another size cut short", hash160 + "00", nil, "--watch 1: script " + hash160 + "00 does not parse ("},
		{"a P2WPKH cut short", "0014" + hash160[:38], nil, "--watch 1: script 0014" + hash160[:38] + " does not parse ("},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := hex.DecodeString(tt.script)
			if err != nil {
				t.Fatal(err)
			}
			items := []watchItem{{given: tt.script, where: "--watch 1", item: client.ScriptItem(s)}}
			warnings, err := checkWatchScripts(items, "bip157")
			if tt.err != "" {
				if !errors.As(err, new(usageError)) || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("error %v (warnings %q), want bad input holding %q", err, warnings, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if tt.want == nil {
				if len(warnings) != 0 {
					t.Errorf("warnings %q, want none", warnings)
				}
				return
			}
			if len(warnings) != 1 || !hasWarning(warnings, tt.want...) {
				t.Errorf("warnings %q, want one holding %q", warnings, tt.want)
			}
		})
	}
}

// TestScanMissingService: a node that does not serve what the scan's mode
// needs (btcd with --nocfilters for bip157, --nopeerbloomfilters for
// bip37) is named with what it offers, how a node serves the mode, and
// the other mode, not as the peer package's sentinel.
func TestScanMissingService(t *testing.T) {
	tests := []struct {
		name, arg, mode string
		want            []string
	}{
		{"no BIP 157 filters", "--nocfilters", "bip157", []string{"no peer offers NODE_COMPACT_FILTERS (BIP 157), which a bip157 scan needs (--connect ",
			" offers NODE_NETWORK, NODE_BLOOM, NODE_WITNESS, NODE_NETWORK_LIMITED): give a node that does (Bitcoin Core with blockfilterindex=1 and peerblockfilters=1, btcd without --nocfilters), or scan with --mode bip37"}},
		{"no BIP 37 filters", "--nopeerbloomfilters", "bip37", []string{"no peer offers NODE_BLOOM (BIP 37), which a bip37 scan needs (--connect ",
			"btcd without --nopeerbloomfilters), or scan with --mode bip157"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			node := peertest.StartBtcd(t, peertest.WithArgs(tt.arg))
			watch := peertest.NewKey("alice").Address(node.Params).EncodeAddress()
			_, stderr, status := runCLI(t, "", "scan", "--network", "regtest", "--mode", tt.mode, "--connect", node.P2PAddr, "--watch", watch)
			if status != exitFailure || strings.Count(stderr, "\n") != 1 {
				t.Fatalf("status %d, stderr %q", status, stderr)
			}
			for _, w := range append(tt.want, "--connect "+node.P2PAddr+" offers") {
				if !strings.Contains(stderr, w) {
					t.Errorf("stderr %q lacks %q", stderr, w)
				}
			}
			if strings.Contains(stderr, "required service") {
				t.Errorf("stderr %q holds the sentinel's words", stderr)
			}
		})
	}
}
