//go:build unix

package store

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/spvfilter/spvfilter/peer/internal/oddfile"
)

// TestOddLockFile: the store's LOCK file is each of oddfile's faults,
// met by Open and by ReadLock (a listing's shared lock). Each returns
// within a second, allocating under 16 MiB; a LOCK that is no regular
// file (a pipe, a directory, a link to /dev/zero) is an error naming it,
// as a lock on it would be no lock of this store's (two directories
// linking theirs to /dev/zero would lock each other out); a LOCK cut
// short, of garbage or sparse holds no lock and only a process id, so
// Open takes it. Before, ReadLock blocked on the pipe (no return within
// a second), and Open took its lock on the pipe and on /dev/zero.
func TestOddLockFile(t *testing.T) {
	for _, reader := range []string{"Open", "ReadLock"} {
		for _, fault := range oddfile.Faults {
			t.Run(reader+"/"+fault.String(), func(t *testing.T) {
				data := t.TempDir()
				s, err := Open(data, regtest)
				if err != nil {
					t.Fatal(err)
				}
				if err := s.Close(); err != nil {
					t.Fatal(err)
				}
				oddfile.Make(t, filepath.Join(data, regtest.Name, lockName), fault)
				var rerr error
				r := oddfile.Measure(func() {
					if reader == "Open" {
						var s *Store
						if s, rerr = Open(data, regtest); rerr == nil {
							rerr = s.Close()
						}
						return
					}
					var unlock func() error
					if unlock, rerr = ReadLock(data, regtest); rerr == nil {
						rerr = unlock()
					}
				})
				t.Logf("%v; error %v", r, rerr)
				r.Require(t, reader+" of a LOCK that is a "+fault.String())
				regular := fault != oddfile.Pipe && fault != oddfile.Dir && fault != oddfile.DevZero
				switch {
				case regular && rerr != nil:
					t.Errorf("error %v: a LOCK of a process id is no reason to fail", rerr)
				case !regular && (rerr == nil || !strings.Contains(rerr.Error(), lockName)):
					t.Errorf("error %v: want one naming %s", rerr, lockName)
				}
			})
		}
	}
}
