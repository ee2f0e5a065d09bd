package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestDataDirGivenMustExist: a --datadir given that does not exist is bad
// input naming the flag, the path and the part of it missing, before any
// connection and without creating anything (a mistyped path used to start
// a new data directory silently: headers synced again, the ban list and
// the address book empty); one that exists is used, and the default one,
// with no --datadir, is created as needed.
func TestDataDirGivenMustExist(t *testing.T) {
	base := t.TempDir()
	exists := filepath.Join(base, "exists")
	if err := os.Mkdir(exists, 0o755); err != nil {
		t.Fatal(err)
	}
	cache := filepath.Join(base, "cache") // the default's parent, missing
	t.Setenv("XDG_CACHE_HOME", cache)
	deep := filepath.Join(base, "a", "b", "c")
	shallow := filepath.Join(base, "state")
	const dead = "127.0.0.1:1" // nothing listens there
	scan := []string{"scan", "--connect", dead, "--network", "regtest", "--watch", "51", "--timeout", "2s"}
	peers := []string{"peers", "--connect", dead, "--network", "regtest", "--timeout", "2s"}
	missingDeep := "--datadir " + deep + ": no such directory (" + filepath.Join(base, "a") + " does not exist): a data directory given must exist"
	missingShallow := "--datadir " + shallow + ": no such directory: a data directory given must exist"
	rows := []dataDirRow{
		{name: "scan, a path missing three levels deep", args: append(scan, "--datadir", deep),
			status: exitBadInput, stderr: missingDeep, notMade: filepath.Join(base, "a")},
		{name: "scan, a directory missing in one that exists", args: append(scan, "--datadir", shallow),
			status: exitBadInput, stderr: missingShallow, notMade: shallow},
		{name: "scan --follow", args: append(scan, "--follow", "--datadir", deep),
			status: exitBadInput, stderr: missingDeep, notMade: filepath.Join(base, "a")},
		{name: "peers connecting", args: append(peers, "--datadir", deep),
			status: exitBadInput, stderr: missingDeep, notMade: filepath.Join(base, "a")},
		{name: "peers offline", args: []string{"peers", "--network", "regtest", "--datadir", shallow},
			status: exitBadInput, stderr: missingShallow, notMade: shallow},
		{name: "peers --unban", args: []string{"peers", "--network", "regtest", "--datadir", shallow, "--unban", "127.0.0.1:18445"},
			status: exitBadInput, stderr: missingShallow, notMade: shallow},
		{name: "scan, a directory that exists", args: append(scan, "--datadir", exists),
			status: exitFailure, stderr: "--connect " + dead + ": connection refused", notInErr: "--datadir", made: filepath.Join(exists, "regtest")},
		{name: "peers, a directory that exists", args: []string{"peers", "--connect", dead, "--network", "simnet", "--timeout", "2s", "--datadir", exists},
			status: exitFailure, stderr: "--connect " + dead + ": connection refused", notInErr: "--datadir", made: filepath.Join(exists, "simnet")},
		{name: "scan, the default directory created", args: []string{"scan", "--connect", dead, "--network", "signet", "--watch", "51", "--timeout", "2s"},
			status: exitFailure, stderr: "--connect " + dead + ": connection refused", notInErr: "--datadir", made: filepath.Join(cache, "spvfilter", "signet")},
		{name: "peers, the default directory created", args: []string{"peers", "--connect", dead, "--network", "testnet4", "--timeout", "2s"},
			status: exitFailure, stderr: "--connect " + dead + ": connection refused", notInErr: "--datadir", made: filepath.Join(cache, "spvfilter", "testnet4")},
	}
	runDataDirRows(t, rows)
}

// dataDirRow is one command of a --datadir test and what it must leave.
type dataDirRow struct {
	name     string
	args     []string
	status   int
	stderr   string // a part of standard error
	made     string // a directory there after the command
	notMade  string // nothing there after the command
	notInErr string // not in standard error
}

// runDataDirRows runs each row's command and checks its status, its
// standard error and what it left on disk.
func runDataDirRows(t *testing.T, rows []dataDirRow) {
	t.Helper()
	for _, r := range rows {
		t.Run(r.name, func(t *testing.T) {
			_, stderr, status := runCLI(t, "", r.args...)
			if status != r.status {
				t.Fatalf("status %d, want %d; stderr %q", status, r.status, stderr)
			}
			if !strings.Contains(stderr, r.stderr) {
				t.Errorf("stderr %q lacks %q", stderr, r.stderr)
			}
			if r.notInErr != "" && strings.Contains(stderr, r.notInErr) {
				t.Errorf("stderr %q holds %q", stderr, r.notInErr)
			}
			if r.notMade != "" {
				if _, err := os.Stat(r.notMade); !os.IsNotExist(err) {
					t.Errorf("%s was created (stat: %v)", r.notMade, err)
				}
			}
			if r.made != "" {
				if st, err := os.Stat(r.made); err != nil || !st.IsDir() {
					t.Errorf("%s is no directory after the command: %v", r.made, err)
				}
			}
		})
	}
}
