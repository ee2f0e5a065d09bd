//go:build unix

package banlist

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/spvfilter/spvfilter/peer/internal/oddfile"
)

// TestOddBansFile: bans.json is each of oddfile's faults, met by Open,
// Read and Check. Each returns within a second, allocating under
// 16 MiB; Open and Read list no ban, with a note naming the file (Open
// sets it aside), and Check, which reports only a file that cannot be
// read at all, leaves the note to Read. Before, Check did not return
// within a second of a named pipe.
func TestOddBansFile(t *testing.T) {
	for _, reader := range []string{"Open", "Read", "Check"} {
		for _, fault := range oddfile.Faults {
			t.Run(reader+"/"+fault.String(), func(t *testing.T) {
				c := newTestClock()
				b := openClock(t, t.TempDir(), c)
				for _, h := range []string{"192.0.2.1", "192.0.2.2", "192.0.2.3"} {
					if err := b.Ban(h, "a test", time.Hour); err != nil {
						t.Fatal(err)
					}
				}
				oddfile.Make(t, filepath.Join(b.dir, bansFile), fault)
				var (
					bans  []Ban
					notes []string
					err   error
				)
				r := oddfile.Measure(func() {
					switch reader {
					case "Open":
						var l *List
						l, notes = openList(b.dir, false, c.now)
						bans = l.Bans()
					case "Read":
						bans, notes = readList(b.dir, c.now)
					default:
						err = Check(b.dir)
					}
				})
				t.Logf("%v; bans %d, notes %q, error %v", r, len(bans), notes, err)
				r.Require(t, reader+" of a bans.json that is a "+fault.String())
				if err != nil {
					t.Errorf("Check: %v; want nil, the file being there (Read notes what is wrong)", err)
				}
				if reader != "Check" && (len(bans) != 0 || len(notes) != 1 || !strings.Contains(notes[0], bansFile)) {
					t.Errorf("%d bans, notes %q: want none, and a note naming %s", len(bans), notes, bansFile)
				}
			})
		}
	}
}
