package store

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
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

// TestLockedNamesHolder: a store held is refused, to Open and to
// ReadLock, with a LockedError that names the process holding it.
func TestLockedNamesHolder(t *testing.T) {
	d := t.TempDir()
	held := openTest(t, d, Options{})
	defer held.Close()
	_, openErr := Open(d, regtest)
	_, readErr := ReadLock(d, regtest)
	for name, err := range map[string]error{"Open": openErr, "ReadLock": readErr} {
		var le *LockedError
		if !errors.Is(err, ErrLocked) || !errors.As(err, &le) {
			t.Fatalf("%s: %v, want a LockedError", name, err)
		}
		if le.PID != os.Getpid() || le.Path != filepath.Join(d, "regtest", lockName) {
			t.Errorf("%s: %+v, want process %d and the lock file", name, le, os.Getpid())
		}
		if want := fmt.Sprintf("(held by process %d)", os.Getpid()); !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %q lacks %q", name, err, want)
		}
	}
}
