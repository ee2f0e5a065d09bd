package store

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/spvfilter/spvfilter/peer/peertest"
)

// TestReadLock: ReadLock creates and writes nothing, whatever the
// directory holds; it fails while a store is open there (ErrLocked) and
// on a store of another network (ErrWrongNetwork), and a store does not
// open while it is held.
func TestReadLock(t *testing.T) {
	for _, tc := range []struct {
		name  string
		setup func(t *testing.T, dataDir string)
		want  error
	}{
		{"no directory of the network", func(*testing.T, string) {}, nil},
		{"an empty directory of the network", func(t *testing.T, d string) { mkdir(t, filepath.Join(d, "regtest")) }, nil},
		{"a store closed", func(t *testing.T, d string) { openTest(t, d, Options{}).Close() }, nil},
		{"a store open", func(*testing.T, string) {}, ErrLocked},
		{"a store of another network", func(t *testing.T, d string) {
			openTest(t, d, Options{}).Close()
			if err := os.WriteFile(filepath.Join(d, "regtest", metaFile), []byte("spvfilter store 1\nnetwork mainnet\n"), 0o644); err != nil {
				t.Fatal(err)
			}
		}, ErrWrongNetwork},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := t.TempDir()
			tc.setup(t, d)
			var held *Store
			if tc.want == ErrLocked {
				held = openTest(t, d, Options{})
				defer held.Close()
			}
			before := peertest.Tree(t, d)
			unlock, err := ReadLock(d, regtest)
			if after := peertest.Tree(t, d); !slices.Equal(before, after) {
				t.Errorf("ReadLock wrote: before %q, after %q", before, after)
			}
			if tc.want != nil {
				if !errors.Is(err, tc.want) || unlock != nil {
					t.Fatalf("ReadLock: %v, want %v", err, tc.want)
				}
				return
			}
			if err != nil {
				t.Fatalf("ReadLock: %v", err)
			}
			if _, err := os.Stat(filepath.Join(d, "regtest", lockName)); err == nil {
				if _, err := Open(d, regtest); !errors.Is(err, ErrLocked) {
					t.Errorf("Open while ReadLock holds the lock: %v, want ErrLocked", err)
				}
			}
			if err := unlock(); err != nil {
				t.Fatal(err)
			}
			openTest(t, d, Options{}).Close()
		})
	}
}

// mkdir makes dir.
func mkdir(t *testing.T, dir string) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
}
