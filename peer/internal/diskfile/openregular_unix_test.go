//go:build unix

package diskfile

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/spvfilter/spvfilter/peer/internal/oddfile"
)

// TestOpenRegular: OpenRegular and ReadLimited meet each of oddfile's
// faults within a second: a pipe, a directory and a link to /dev/zero
// are ErrNotRegular (the pipe opened without waiting for a writer), a
// sparse file of 8 GiB is ErrTooLarge to ReadLimited, refused by its
// size without a read (under 64 KiB allocated; read up to the 1 MiB
// bound, as before, it cost 2.1 MiB), and a regular file to OpenRegular.
func TestOpenRegular(t *testing.T) {
	const limit = 1 << 20
	tests := []struct {
		fault                 oddfile.Fault
		openErr, readLimitErr error
	}{
		{oddfile.Pipe, ErrNotRegular, ErrNotRegular},
		{oddfile.Dir, ErrNotRegular, ErrNotRegular},
		{oddfile.DevZero, ErrNotRegular, ErrNotRegular},
		{oddfile.Sparse, nil, ErrTooLarge},
	}
	for _, tt := range tests {
		t.Run(tt.fault.String(), func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "f")
			oddfile.Make(t, path, tt.fault)
			var openErr, readErr error
			r := oddfile.Measure(func() {
				var f *os.File
				if f, openErr = OpenRegular(path, os.O_RDONLY, 0); openErr == nil {
					f.Close()
				}
				_, readErr = ReadLimited(path, limit)
			})
			t.Logf("%v; OpenRegular: %v; ReadLimited: %v", r, openErr, readErr)
			r.Require(t, "OpenRegular and ReadLimited of a "+tt.fault.String())
			if r.Alloc > 64<<10 {
				t.Errorf("%.1f MiB allocated: want under 64 KiB", r.MiB())
			}
			if !errors.Is(openErr, tt.openErr) || (tt.openErr == nil) != (openErr == nil) {
				t.Errorf("OpenRegular: %v, want %v", openErr, tt.openErr)
			}
			if !errors.Is(readErr, tt.readLimitErr) {
				t.Errorf("ReadLimited: %v, want %v", readErr, tt.readLimitErr)
			}
		})
	}
}
