package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/btcsuite/btcd/chaincfg"
	"github.com/btcsuite/btcd/wire"
	"github.com/spvfilter/spvfilter/peer/peertest"
	"github.com/spvfilter/spvfilter/peer/store"
)

// peersResult is the output of peers --json.
type peersResult struct {
	Connected bool `json:"connected"`
	Peers     []struct {
		Address string `json:"address"`
		Banned  bool   `json:"banned"`
	} `json:"peers"`
	Known []struct {
		Address string `json:"address"`
	} `json:"known"`
	Bans []struct {
		Host   string `json:"host"`
		Reason string `json:"reason"`
		Proof  bool   `json:"proof"`
	} `json:"bans"`
	Unbanned []string `json:"unbanned"`
	Warnings []string `json:"warnings"`
}

// liarBannedDir returns a data directory in which a scan banned a liar:
// on a chain paying alice at 102, the liar hides it, an honest peer does
// not, both given with flag (--peer or --connect); and alice's address.
func liarBannedDir(t *testing.T, flag string) (dir string, liar, honest *peertest.Liar, alice string) {
	t.Helper()
	node := peertest.StartBtcd(t, peertest.WithArgs("--nobanning"))
	node.Generate(t, 101)
	key := peertest.NewKey("alice")
	node.Confirm(t, node.SpendCoinbase(t, wire.NewTxOut(10_000_000, key.PkScript()))) // 102
	node.Generate(t, 3)
	liar = peertest.NewLiar(t, node.P2PAddr, node.Params.Net, peertest.ForgeFilter(t, node, 102, peertest.EmptyFilter))
	honest = peertest.NewLiar(t, node.P2PAddr, node.Params.Net, nil)
	dir, alice = t.TempDir(), key.Address(node.Params).EncodeAddress()
	if _, stderr, status := runCLI(t, "", "scan", "--network", "regtest", "--datadir", dir, flag, liar.Addr, flag, honest.Addr,
		"--watch", alice); status != exitOK {
		t.Fatalf("scan: status %d, stderr %q", status, stderr)
	}
	return dir, liar, honest, alice
}

// TestPeersWithoutConnecting: peers --datadir with no peer given lists the
// address book and the bans kept in the directory without connecting to
// anyone; --unban lifts a ban, with or without connecting, and a node
// given whose ban rests on a proof is named in a warning.
func TestPeersWithoutConnecting(t *testing.T) {
	dir, liar, honest, _ := liarBannedDir(t, "--peer")
	peers := func(args ...string) peersResult {
		t.Helper()
		stdout, stderr, status := runCLI(t, "", append([]string{"peers", "--json", "--network", "regtest", "--datadir", dir}, args...)...)
		var out peersResult
		if status != exitOK || json.Unmarshal([]byte(stdout), &out) != nil {
			t.Fatalf("peers %q: status %d, stdout %q, stderr %q", args, status, stdout, stderr)
		}
		return out
	}
	before := len(liar.Commands()) + len(honest.Commands())
	out := peers()
	if out.Connected || len(out.Peers) != 0 || len(liar.Commands())+len(honest.Commands()) != before {
		t.Errorf("peers --datadir connected: %+v", out)
	}
	if len(out.Bans) != 1 || out.Bans[0].Host != liar.Addr || !out.Bans[0].Proof || !strings.Contains(out.Bans[0].Reason, "proves it false") {
		t.Errorf("bans %+v, want the liar's, with its proof", out.Bans)
	}
	if len(out.Known) != 2 {
		t.Errorf("known %+v, want both nodes the scan connected to", out.Known)
	}
	// Given with --peer while banned with a proof: not used, named.
	stdout, stderr, _ := runCLI(t, "", "peers", "--network", "regtest", "--datadir", dir, "--connect", honest.Addr, "--connect", liar.Addr)
	if !strings.Contains(stderr, liar.Addr) || !strings.Contains(stderr, "banned until") || !strings.Contains(stdout, "peer "+liar.Addr) {
		t.Errorf("a given node banned with a proof: stdout %q, stderr %q", stdout, stderr)
	}
	out = peers("--unban", liar.Addr)
	if len(out.Bans) != 0 || len(out.Unbanned) != 1 || out.Connected {
		t.Errorf("after --unban: %+v", out)
	}
	if out := peers(); len(out.Bans) != 0 {
		t.Errorf("the ban is back: %+v", out.Bans)
	}
	// A ban lifted already, or none ever (in a new, empty data
	// directory), is not reported lifted: a warning names the --unban
	// value and the directory.
	for _, d := range []string{dir, t.TempDir()} {
		stdout, stderr, status := runCLI(t, "", "peers", "--json", "--network", "regtest", "--datadir", d, "--unban", liar.Addr)
		var out peersResult
		if status != exitOK || json.Unmarshal([]byte(stdout), &out) != nil || len(out.Unbanned) != 0 ||
			!slices.Contains(out.Warnings, "--unban "+liar.Addr+": no ban of it in --datadir "+d+" to lift") {
			t.Errorf("--unban of no ban in %s: status %d, stdout %q, stderr %q", d, status, stdout, stderr)
		}
		if d != dir && !slices.Contains(out.Warnings, "--datadir "+d+" holds no state of regtest yet") {
			t.Errorf("a new --datadir: warnings %q", out.Warnings)
		}
	}
	for _, args := range [][]string{
		{"peers", "--network", "regtest", "--unban", "not a host"},
		{"peers", "--network", "regtest", "--connect", honest.Addr, "--unban", liar.Addr}, // regtest keeps no data directory by default
	} {
		if _, stderr, status := runCLI(t, "", args...); status != exitBadInput || strings.Count(stderr, "\n") != 1 {
			t.Errorf("%q: status %d, stderr %q", args, status, stderr)
		}
	}
}

// TestPeersListingFaults: peers --datadir without a node writes nothing
// in the data directory, and says every fault of its files naming the
// file and --datadir: a book of the other kind of network, cut short, of
// another network, a directory in its place, a file it cannot read,
// damaged bans; and a directory holding another network's state only.
func TestPeersListingFaults(t *testing.T) {
	write := func(name, data string) func(t *testing.T, net string) {
		return func(t *testing.T, net string) {
			if err := os.WriteFile(filepath.Join(net, name), []byte(data), 0o600); err != nil {
				t.Fatal(err)
			}
		}
	}
	book := `{"version": 1, "network": "regtest", "addresses": [{"Addr": "127.0.0.1:18444"}]}`
	tests := []struct {
		name    string
		network string
		setup   func(t *testing.T, net string) // net: the data directory's regtest directory
		status  int
		stderr  []string // with the data directory for %s
		known   int
	}{
		{"a garbage peers.json", "regtest", write("peers.json", "garbage"), exitOK,
			[]string{"warning: --datadir %s: address book: %s/regtest/peers.json is not read: regtest keeps its book in peers-local.json"}, 0},
		{"a sound book", "regtest", write("peers-local.json", book), exitOK, nil, 1},
		{"a book cut short", "regtest", write("peers-local.json", book[:40]), exitOK,
			[]string{"warning: --datadir %s: address book %s/regtest/peers-local.json is damaged (not JSON: the data end too early): listed as empty, left as it is"}, 0},
		{"another network's book", "regtest", write("peers-local.json", strings.Replace(book, "regtest", "simnet", 1)), exitOK,
			[]string{`warning: --datadir %s: address book %s/regtest/peers-local.json is damaged (a book of "simnet", not "regtest")`}, 0},
		{"a directory for the book", "regtest", func(t *testing.T, net string) {
			if err := os.Mkdir(filepath.Join(net, "peers-local.json"), 0o700); err != nil {
				t.Fatal(err)
			}
		}, exitOK, []string{"warning: --datadir %s: address book %s/regtest/peers-local.json is damaged (a directory, not a file)"}, 0},
		{"a book that cannot be read", "regtest", func(t *testing.T, net string) {
			if err := os.Symlink("peers-local.json", filepath.Join(net, "peers-local.json")); err != nil {
				t.Fatal(err)
			}
		}, exitFailure, []string{`"--datadir %s: %s/regtest/peers-local.json: `}, 0},
		{"damaged bans", "regtest", write("bans.json", "garbage"), exitOK,
			[]string{"warning: --datadir %s: bans.json: not JSON: 'g' cannot be there: no bans listed; the file is left as it is"}, 0},
		{"a dangling link for the bans", "regtest", func(t *testing.T, net string) {
			if err := os.Symlink("gone/bans.json", filepath.Join(net, "bans.json")); err != nil {
				t.Fatal(err)
			}
		}, exitFailure, []string{`{"error":"--datadir %s: %s/regtest/bans.json: a symbolic link to gone/bans.json, which leads to no file","exit_code":1}`}, 0},
		{"bans that cannot be read", "regtest", func(t *testing.T, net string) {
			if err := os.Symlink("bans.json", filepath.Join(net, "bans.json")); err != nil {
				t.Fatal(err)
			}
		}, exitFailure, []string{`{"error":"--datadir %s: %s/regtest/bans.json: too many levels of symbolic links","exit_code":1}`}, 0},
		{"a store held by a running scan", "regtest", func(t *testing.T, net string) {
			write("peers-local.json", book)(t, net)
			st, err := store.Open(filepath.Dir(net), &chaincfg.RegressionNetParams)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { st.Close() })
		}, exitOK, []string{fmt.Sprintf("warning: --datadir %%s is in use by another spvfilter (process %d, a scan, follow or peers on the same directory): listed as its files stand now", os.Getpid())}, 1},
		{"another network's state only", "mainnet", write("peers.json", "garbage"), exitOK,
			[]string{"warning: --datadir %s holds no state of mainnet yet", "warning: --datadir %s holds the state of regtest: give --network regtest to list it"}, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			net := filepath.Join(dir, "regtest")
			if err := os.Mkdir(net, 0o700); err != nil {
				t.Fatal(err)
			}
			tc.setup(t, net)
			before := peertest.Tree(t, dir)
			stdout, stderr, status := runCLI(t, "", "peers", "--json", "--network", tc.network, "--datadir", dir)
			if after := peertest.Tree(t, dir); !slices.Equal(before, after) {
				t.Errorf("peers wrote in --datadir:\nbefore %q\nafter  %q", before, after)
			}
			if status != tc.status {
				t.Fatalf("status %d, want %d; stderr %q", status, tc.status, stderr)
			}
			// --json: an error is on standard error, a warning in the
			// result's "warnings" alone.
			var out peersResult
			if status == exitOK && (json.Unmarshal([]byte(stdout), &out) != nil || len(out.Known) != tc.known || len(out.Warnings) != len(tc.stderr)) {
				t.Errorf("stdout %q: want %d known, %d warnings", stdout, tc.known, len(tc.stderr))
			}
			said := stderr
			if status == exitOK {
				if stderr != "" {
					t.Errorf("stderr %q, want nothing: the warnings are in the JSON", stderr)
				}
				said = ""
				for _, w := range out.Warnings {
					said += "warning: " + w + "\n"
				}
			}
			for _, want := range tc.stderr {
				if want = strings.ReplaceAll(want, "%s", dir); !strings.Contains(said, want) {
					t.Errorf("stderr %q and warnings %q lack %q", stderr, out.Warnings, want)
				}
			}
		})
	}
}
