package diskfile

import (
	"cmp"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
)

// keepDamaged is how many damaged copies of a file SetAside keeps: the
// one it sets aside and the one before.
const keepDamaged = 2

// damagedSuffix follows a damaged file's name, then the Unix time it was
// set aside.
const damagedSuffix = ".damaged-"

// SetAside renames the damaged file (or whatever else is there) at path
// to path.damaged-<unix time>, so that a new one can be started and the
// old one looked at, and removes all but the newest keepDamaged such
// copies. It returns the new name's base.
func SetAside(path string, now time.Time) (string, error) {
	aside := path + damagedSuffix + strconv.FormatInt(now.Unix(), 10)
	for n := 1; ; n++ {
		if _, err := os.Lstat(aside); os.IsNotExist(err) {
			break
		}
		// Set aside twice in one second: keep both.
		aside = fmt.Sprintf("%s%s%d.%d", path, damagedSuffix, now.Unix(), n)
	}
	if err := os.Rename(path, aside); err != nil {
		return "", err
	}
	pruneDamaged(path)
	return filepath.Base(aside), nil
}

// pruneDamaged removes the oldest damaged copies of path beyond
// keepDamaged. Failures leave a copy behind, which the next call tries
// again.
func pruneDamaged(path string) {
	dir, base := filepath.Split(path)
	entries, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	type copyOf struct {
		name     string
		unix, nr int64
	}
	var copies []copyOf
	prefix := base + damagedSuffix
	for _, e := range entries {
		rest, ok := strings.CutPrefix(e.Name(), prefix)
		if !ok {
			continue
		}
		unixStr, nrStr, _ := strings.Cut(rest, ".")
		unix, err := strconv.ParseInt(unixStr, 10, 64)
		if err != nil {
			continue
		}
		nr, _ := strconv.ParseInt(nrStr, 10, 64)
		copies = append(copies, copyOf{e.Name(), unix, nr})
	}
	slices.SortFunc(copies, func(a, b copyOf) int {
		return cmp.Or(cmp.Compare(a.unix, b.unix), cmp.Compare(a.nr, b.nr))
	})
	for _, c := range copies[:max(len(copies)-keepDamaged, 0)] {
		// A directory set aside was put where a file of the store
		// belongs, under the store's name for it: the store's own.
		_ = os.RemoveAll(filepath.Join(dir, c.name))
	}
}
