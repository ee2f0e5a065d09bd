//go:build unix

package addrbook

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/btcsuite/btcd/chaincfg"
	"github.com/spvfilter/spvfilter/peer/internal/oddfile"
)

// TestOddBookFiles: a book file (peers-local.json on regtest, peers.json
// on mainnet, and peers.json.prev, the copy of an unfinished save, with
// no peers.json) is each of oddfile's faults, met by Open and Read. Each
// returns within a second, allocating under 16 MiB, without an error,
// and lists nothing; each names the file in a note (Open sets it aside)
// but Read of a damaged peers.json.prev, which it lists only in place of
// a missing or damaged peers.json, and so passes over in silence.
func TestOddBookFiles(t *testing.T) {
	regtest, mainnet := &chaincfg.RegressionNetParams, &chaincfg.MainNetParams
	local := savedBook(t, regtest, LocalPeersFile)
	public := savedBook(t, mainnet, PeersFile)
	tests := []struct {
		params   *chaincfg.Params
		file     string
		sound    []byte
		readNote bool // Read names the file in a note
	}{
		{regtest, LocalPeersFile, local, true},
		{mainnet, PeersFile, public, true},
		{mainnet, PeersFile + prevSuffix, public, false},
	}
	for _, tt := range tests {
		for _, reader := range []string{"Open", "Read"} {
			for _, fault := range oddfile.Faults {
				t.Run(tt.file+"/"+reader+"/"+fault.String(), func(t *testing.T) {
					dir := t.TempDir()
					path := filepath.Join(dir, tt.file)
					if err := os.WriteFile(path, tt.sound, 0o644); err != nil {
						t.Fatal(err)
					}
					oddfile.Make(t, path, fault)
					var (
						known []Known
						notes []string
						err   error
					)
					r := oddfile.Measure(func() {
						if reader == "Read" {
							known, notes, err = Read(tt.params, dir)
							return
						}
						var b *Book
						if b, notes, err = Open(tt.params, dir, nil); err == nil {
							known, err = b.Known()
							b.Close()
						}
					})
					t.Logf("%v; %d known, notes %q, error %v", r, len(known), notes, err)
					r.Require(t, reader+" of a "+tt.file+" that is a "+fault.String())
					if err != nil || len(known) != 0 {
						t.Errorf("%d known, error %v: want none, no error", len(known), err)
					}
					named := strings.Contains(strings.Join(notes, "\n"), path)
					if (reader == "Open" || tt.readNote) && !named {
						t.Errorf("notes %q: want one naming %s", notes, path)
					}
				})
			}
		}
	}
}
