//go:build unix

package client

import (
	"crypto/rand"
	"encoding/binary"
	"hash/crc32"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/btcsuite/btcd/wire"
	"github.com/spvfilter/spvfilter/peer/internal/oddfile"
)

// TestOddLedgerFile: ledger.dat is each of oddfile's faults, or garbage
// behind the ledger's magic and network with its checksum made right (so
// that the decoder, not the checksum, meets it). openLedger returns
// within a second, allocating under 16 MiB, without an error: the ledger
// starts again, lost, with a note naming the file, which is set aside.
// Before, a sparse 8 GiB ledger.dat cost 34.6 MiB (89 ms), read up to
// its 16 MiB bound.
func TestOddLedgerFile(t *testing.T) {
	l := &ledger{}
	l.ranges("127.0.0.1:1", wire.CmdGetCFilters, 0, 999)
	l.asked("127.0.0.1:1", []chainhash.Hash{{1}, {2}})
	l.ranges("[::1]:2", wire.CmdMerkleBlock, 5, 6)
	sound := l.encode("regtest")
	type fault struct {
		name string
		make func(t *testing.T, path string)
	}
	var faults []fault
	for _, f := range oddfile.Faults {
		faults = append(faults, fault{f.String(), func(t *testing.T, path string) { oddfile.Make(t, path, f) }})
	}
	faults = append(faults, fault{"garbage, checksum right", func(t *testing.T, path string) {
		data := make([]byte, 1<<20)
		rand.Read(data)
		// The magic and the network's name, sound: garbage from the flags.
		copy(data, sound[:len(ledgerMagic)+1+len("regtest")])
		body := data[:len(data)-4]
		binary.LittleEndian.PutUint32(data[len(body):], crc32.Checksum(body, castagnoli))
		if err := os.WriteFile(path, data, 0o600); err != nil {
			t.Fatal(err)
		}
	}})
	for _, f := range faults {
		t.Run(f.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, ledgerFileName)
			if err := os.WriteFile(path, sound, 0o600); err != nil {
				t.Fatal(err)
			}
			f.make(t, path)
			var (
				opened *ledger
				note   string
				err    error
			)
			r := oddfile.Measure(func() { opened, note, err = openLedger(dir, "regtest", time.Unix(1000, 0)) })
			t.Logf("%v; note %q, error %v", r, note, err)
			r.Require(t, "openLedger of a ledger that is a "+f.name)
			if err != nil || opened == nil || !opened.lost || !strings.Contains(note, path) {
				t.Errorf("error %v, note %q: want a lost ledger, and a note naming %s", err, note, path)
			}
		})
	}
}
