//go:build unix

package store

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/spvfilter/spvfilter/peer/internal/oddfile"
)

// TestOddFilesEachFault: each file of a store's directory (beside LOCK,
// see TestOddLockFile) is each of oddfile's faults, the store left as a
// run leaves it. Open returns within a second, allocating under 16 MiB,
// and either opens (what it cut or set aside in Recovered) or fails with
// an error naming the file.
func TestOddFilesEachFault(t *testing.T) {
	files := []string{
		metaFile,
		HeadersFile, HeadersFile + ".sum",
		FilterHeadersFile, FilterHeadersFile + ".sum",
		filepath.Join(FiltersDir, filterCacheFile),
		filepath.Join(FiltersDir, filterCacheFile+cleanSuffix),
	}
	for _, file := range files {
		for _, fault := range oddfile.Faults {
			t.Run(file+"/"+fault.String(), func(t *testing.T) {
				data := t.TempDir()
				buildCache(t, data)
				s := openTest(t, data, cacheOptions())
				if _, err := s.SaveChain(sliceChain(mineChain(100, 0))); err != nil {
					t.Fatal(err)
				}
				if err := s.AppendFilterHeaders(0, fakeFilterHeaders(101)); err != nil {
					t.Fatal(err)
				}
				if err := s.Close(); err != nil {
					t.Fatal(err)
				}
				path := filepath.Join(data, regtest.Name, file)
				oddfile.Make(t, path, fault)
				var (
					opened *Store
					oerr   error
				)
				r := oddfile.Measure(func() { opened, oerr = OpenWith(data, regtest, cacheOptions()) })
				var recovered []string
				if opened != nil {
					recovered = opened.Recovered()
					opened.Close()
				}
				t.Logf("%v; error %v; recovered %q", r, oerr, recovered)
				r.Require(t, "Open of a "+file+" that is a "+fault.String())
				if oerr != nil && !strings.Contains(oerr.Error(), filepath.Base(file)) {
					t.Errorf("error %v: want one naming %s", oerr, file)
				}
			})
		}
	}
}
