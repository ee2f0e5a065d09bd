package addrbook

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/btcsuite/btcd/chaincfg"
	"github.com/spvfilter/spvfilter/peer/peertest"
)

// TestReadFaults: Read writes nothing, and says every fault of the files
// it finds: a damaged book (cut short, of another network, a directory, a
// link to nothing) in a note naming the file once as damaged, a file it
// cannot read as an error naming it, a book file of the other kind of
// network (which Open names too), and the copy of an unfinished save
// listed in place of a missing or damaged peers.json.
func TestReadFaults(t *testing.T) {
	local := savedBook(t, &chaincfg.RegressionNetParams, LocalPeersFile)
	public := savedBook(t, &chaincfg.MainNetParams, PeersFile)
	write := func(name string, data []byte) func(t *testing.T, dir string) {
		return func(t *testing.T, dir string) {
			if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	both := func(fs ...func(*testing.T, string)) func(*testing.T, string) {
		return func(t *testing.T, dir string) {
			for _, f := range fs {
				f(t, dir)
			}
		}
	}
	link := func(name, to string) func(*testing.T, string) {
		return func(t *testing.T, dir string) {
			if err := os.Symlink(to, filepath.Join(dir, name)); err != nil {
				t.Fatal(err)
			}
		}
	}
	regtest, mainnet := &chaincfg.RegressionNetParams, &chaincfg.MainNetParams
	tests := []struct {
		name   string
		params *chaincfg.Params
		setup  func(t *testing.T, dir string)
		known  int
		notes  []string // said by the notes, in order, with the directory for %s
		err    string   // said by the error, if any
		stray  bool     // Open names a stray file too
	}{
		{"regtest: garbage peers.json", regtest, write(PeersFile, []byte("garbage")), 0,
			[]string{"address book: %s/peers.json is not read: regtest keeps its book in peers-local.json"}, "", true},
		{"regtest: peers.json beside a sound book", regtest, both(write(PeersFile, public), write(LocalPeersFile, local)), 3,
			[]string{"address book: %s/peers.json is not read: regtest keeps its book in peers-local.json"}, "", true},
		{"mainnet: peers-local.json", mainnet, write(LocalPeersFile, local), 0,
			[]string{"address book: %s/peers-local.json is not read: mainnet keeps its book in peers.json"}, "", true},
		{"regtest: cut short", regtest, write(LocalPeersFile, local[:len(local)/2]), 0,
			[]string{"address book %s/peers-local.json is damaged (unexpected end of JSON input): listed as empty, left as it is"}, "", false},
		{"regtest: another network's", regtest, write(LocalPeersFile, bytes.Replace(local, []byte(`"regtest"`), []byte(`"simnet"`), 1)), 0,
			[]string{`address book %s/peers-local.json is damaged (a book of "simnet", not "regtest"): listed as empty`}, "", false},
		{"regtest: a directory", regtest, func(t *testing.T, dir string) {
			if err := os.Mkdir(filepath.Join(dir, LocalPeersFile), 0o755); err != nil {
				t.Fatal(err)
			}
		}, 0, []string{"address book %s/peers-local.json is damaged (not a regular file"}, "", false},
		{"regtest: a link to nothing", regtest, link(LocalPeersFile, "nowhere"), 0,
			[]string{"address book %s/peers-local.json is damaged (a symbolic link to nothing): listed as empty"}, "", false},
		{"regtest: unreadable", regtest, link(LocalPeersFile, LocalPeersFile), 0, nil, "%s/peers-local.json", false},
		{"mainnet: damaged", mainnet, write(PeersFile, public[:100]), 0,
			[]string{"address book %s/peers.json is damaged (unexpected EOF): listed as empty"}, "", false},
		{"mainnet: sound", mainnet, write(PeersFile, public), 3, nil, "", false},
		{"mainnet: only an unfinished save's copy", mainnet, write(PeersFile+prevSuffix, public), 3,
			[]string{"address book %s/peers.json is missing: listed from %s/peers.json.prev, the copy a save that did not finish kept"}, "", false},
		{"mainnet: damaged beside an unfinished save's copy", mainnet, both(write(PeersFile, public[:100]), write(PeersFile+prevSuffix, public)), 3,
			[]string{"address book %s/peers.json is damaged (unexpected EOF): listed from %s/peers.json.prev"}, "", false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			tc.setup(t, dir)
			before := peertest.Tree(t, dir)
			ks, notes, err := Read(tc.params, dir)
			if after := peertest.Tree(t, dir); !slices.Equal(before, after) {
				t.Errorf("Read wrote: before %q, after %q", before, after)
			}
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), fmt.Sprintf(tc.err, dir)) {
					t.Fatalf("Read: %v, want an error naming %s", err, fmt.Sprintf(tc.err, dir))
				}
				return
			}
			if err != nil || len(ks) != tc.known || len(notes) != len(tc.notes) {
				t.Fatalf("Read: %d known, notes %q, %v; want %d known, %d notes", len(ks), notes, err, tc.known, len(tc.notes))
			}
			for i, want := range tc.notes {
				want = strings.ReplaceAll(want, "%s", dir)
				if !strings.HasPrefix(notes[i], want) || strings.Contains(notes[i], "damaged (damaged") {
					t.Errorf("note %q, want it to begin %q", notes[i], want)
				}
			}
			if tc.stray {
				_, opened := openBook(t, tc.params, dir, nil)
				if len(opened) == 0 || opened[0] != notes[0] {
					t.Errorf("Open's notes %q, want them to begin %q", opened, notes[0])
				}
			}
		})
	}
}
