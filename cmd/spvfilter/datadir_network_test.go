package main

import (
	"os"
	"path/filepath"
	"testing"
)

// TestDataDirNetworkDirGiven: a --datadir that is itself one network's
// state directory under another data directory (DIR/regtest holding
// headers.bin, as a look at DIR shows it) is bad input naming the flag, the
// file that gave it away and the directory to give, and nothing is created
// in it (it used to start a second state in DIR/regtest/regtest, syncing
// anew without a word); a data directory that merely has a network's name,
// or that holds that network's state already, is used.
func TestDataDirNetworkDirGiven(t *testing.T) {
	base := t.TempDir()
	state := func(dir string) string {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "headers.bin"), nil, 0o644); err != nil {
			t.Fatal(err)
		}
		return dir
	}
	dd := filepath.Join(base, "dd")
	regtest := state(filepath.Join(dd, "regtest"))
	testnet4 := state(filepath.Join(dd, "testnet4"))
	named := filepath.Join(base, "named", "regtest") // a name, no state
	if err := os.MkdirAll(named, 0o755); err != nil {
		t.Fatal(err)
	}
	nested := filepath.Join(base, "nested", "regtest") // used so before
	state(nested)
	state(filepath.Join(nested, "regtest"))
	const dead = "127.0.0.1:1" // nothing listens there
	scan := []string{"scan", "--connect", dead, "--network", "regtest", "--watch", "51", "--timeout", "2s"}
	peers := []string{"peers", "--connect", dead, "--network", "regtest", "--timeout", "2s"}
	refused := "--datadir " + regtest + ": it is the regtest state of the data directory " + dd + " (it holds headers.bin)"
	rows := []dataDirRow{
		{name: "scan", args: append(scan, "--datadir", regtest), status: exitBadInput,
			stderr:  refused + ": a data directory keeps each network's state in a directory of its own, " + regtest + " for regtest, so this one would start a new regtest state in " + filepath.Join(regtest, "regtest") + ": give --datadir " + dd,
			notMade: filepath.Join(regtest, "regtest")},
		{name: "scan, a trailing slash", args: append(scan, "--datadir", regtest+"/"), status: exitBadInput,
			stderr: "give --datadir " + dd, notMade: filepath.Join(regtest, "regtest")},
		{name: "scan --follow", args: append(scan, "--follow", "--datadir", regtest), status: exitBadInput,
			stderr: refused, notMade: filepath.Join(regtest, "regtest")},
		{name: "scan, another network's directory", args: append(scan, "--datadir", testnet4), status: exitBadInput,
			stderr:  "--datadir " + testnet4 + ": it is the testnet4 state of the data directory " + dd + " (it holds headers.bin): a data directory keeps each network's state in a directory of its own, " + regtest + " for regtest",
			notMade: filepath.Join(testnet4, "regtest")},
		{name: "peers connecting", args: append(peers, "--datadir", regtest), status: exitBadInput,
			stderr: refused, notMade: filepath.Join(regtest, "regtest")},
		{name: "peers offline", args: []string{"peers", "--network", "regtest", "--datadir", regtest}, status: exitBadInput,
			stderr: refused},
		{name: "scan, the data directory itself", args: append(scan, "--datadir", dd), status: exitFailure,
			stderr: "--connect " + dead + ": connection refused"},
		{name: "scan, a directory named regtest with no state", args: append(scan, "--datadir", named), status: exitFailure,
			stderr: "--connect " + dead + ": connection refused"},
		{name: "scan, one holding its regtest state already", args: append(scan, "--datadir", nested), status: exitFailure,
			stderr: "--connect " + dead + ": connection refused"},
	}
	runDataDirRows(t, rows)
}
