package peertest

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
)

// Tree lists every entry under dir, links not followed, with its size,
// mode and modification time: two lists taken around a call differ if
// the call created, removed, renamed or wrote anything there.
func Tree(t testing.TB, dir string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(dir, func(path string, _ fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		fi, err := os.Lstat(path)
		if err != nil {
			return err
		}
		out = append(out, fmt.Sprintf("%s %d %v %d", path, fi.Size(), fi.Mode(), fi.ModTime().UnixNano()))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}
