package client

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/btcsuite/btcd/chaincfg"
	"github.com/spvfilter/spvfilter/peer/addrbook"
	"github.com/spvfilter/spvfilter/peer/banlist"
	"github.com/spvfilter/spvfilter/peer/peertest"
	"github.com/spvfilter/spvfilter/peer/store"
)

// TestReadStoredPeersWritesNothing: reading what a data directory keeps
// about peers creates and writes nothing in it, whatever it holds (an
// empty network directory, a garbage or stray book, damaged bans, a
// closed store), names each damaged file in a note, and fails while a
// client holds the directory.
func TestReadStoredPeersWritesNothing(t *testing.T) {
	params := &chaincfg.RegressionNetParams
	write := func(name, data string) func(t *testing.T, dir string) {
		return func(t *testing.T, dir string) {
			if err := os.WriteFile(filepath.Join(dir, params.Name, name), []byte(data), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	closedStore := func(t *testing.T, dir string) {
		st, err := store.Open(dir, params)
		if err != nil {
			t.Fatal(err)
		}
		bans, _ := banlist.Open(st.Dir())
		if err := bans.Ban("127.0.0.1:18444", "test", time.Hour); err != nil {
			t.Fatal(err)
		}
		bans.Close()
		st.Close()
	}
	tests := []struct {
		name  string
		setup func(t *testing.T, dir string)
		bans  int
		notes []string // in the notes, in order, with the network's directory for %s
		err   error
	}{
		{"an empty network directory", func(*testing.T, string) {}, 0, nil, nil},
		{"a garbage peers.json", write(addrbook.PeersFile, "garbage"), 0,
			[]string{"address book: %s/peers.json is not read: regtest keeps its book in peers-local.json"}, nil},
		{"a garbage book", write(addrbook.LocalPeersFile, "garbage"), 0,
			[]string{"address book %s/peers-local.json is damaged ("}, nil},
		{"damaged bans", write("bans.json", "[]"), 0, []string{"bans.json: ", "the file is left as it is"}, nil},
		{"a closed store", closedStore, 1, nil, nil},
		{"a store in use", func(t *testing.T, dir string) {
			st, err := store.Open(dir, params)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { st.Close() })
		}, 0, nil, store.ErrLocked},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			if err := os.Mkdir(filepath.Join(dir, params.Name), 0o755); err != nil {
				t.Fatal(err)
			}
			tc.setup(t, dir)
			before := peertest.Tree(t, dir)
			got, err := ReadStoredPeers(dir, params)
			if after := peertest.Tree(t, dir); !slices.Equal(before, after) {
				t.Errorf("ReadStoredPeers wrote:\nbefore %q\nafter  %q", before, after)
			}
			if tc.err != nil {
				if !errors.Is(err, tc.err) {
					t.Fatalf("ReadStoredPeers: %v, want %v", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			notes := strings.Join(got.Notes, "\n")
			if len(got.Bans) != tc.bans || len(tc.notes) == 0 && len(got.Notes) != 0 {
				t.Errorf("bans %+v, notes %q; want %d bans", got.Bans, got.Notes, tc.bans)
			}
			for _, want := range tc.notes {
				if want = strings.ReplaceAll(want, "%s", filepath.Join(dir, params.Name)); !strings.Contains(notes, want) {
					t.Errorf("notes %q, want %q", got.Notes, want)
				}
			}
		})
	}
}
