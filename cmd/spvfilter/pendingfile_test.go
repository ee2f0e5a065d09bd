package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

// failingOps are fileOps whose link always fails as on a file system
// without hard links (when noLinks is set), and whose rename fails for
// the names fail picks, the calls counted.
type failingOps struct {
	noLinks      bool
	fail         func(oldname, newname string) bool
	links, moves int
}

func (f *failingOps) link(oldname, newname string) error {
	f.links++
	if f.noLinks {
		return &os.LinkError{Op: "link", Old: oldname, New: newname, Err: syscall.EPERM}
	}
	return os.Link(oldname, newname)
}

func (f *failingOps) rename(oldname, newname string) error {
	f.moves++
	if f.fail != nil && f.fail(oldname, newname) {
		return &os.LinkError{Op: "rename", Old: oldname, New: newname, Err: syscall.EIO}
	}
	return os.Rename(oldname, newname)
}

// isBackup reports whether name is the name keepBackup gives the
// earlier file at path.
func isBackup(name, path string) bool {
	return strings.HasPrefix(filepath.Base(name), "."+filepath.Base(path)+".old.")
}

// TestPendingNoHardLinks: on a file system without hard links the
// earlier file is moved aside instead of linked, and a commit still
// replaces it, or, when the commit fails after the move (a later file's
// path a directory, or the new file's own rename failing), puts it
// back, leaving nothing else behind. Without the fallback the commit
// failed outright; without putting back a file moved aside but not yet
// replaced, the earlier file was left under the backup's hidden name.
func TestPendingNoHardLinks(t *testing.T) {
	for _, tc := range []struct {
		name      string
		blocked   bool // --index's path made a directory before the commit
		failOwn   bool // the rename of --out's new file fails
		wantFiles map[string]string
		wantErr   string
	}{
		{name: "replaced", wantFiles: map[string]string{"a": "new a", "b": "new b"}},
		{name: "a later file blocked", blocked: true,
			wantFiles: map[string]string{"a": "old a", "b": "<dir>"}, wantErr: "--index DIR/b: a directory, not a file"},
		{name: "its own rename fails", failOwn: true,
			wantFiles: map[string]string{"a": "old a"}, wantErr: "--out DIR/a: input/output error"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			pathA, pathB := filepath.Join(dir, "a"), filepath.Join(dir, "b")
			if err := os.WriteFile(pathA, []byte("old a"), 0o644); err != nil {
				t.Fatal(err)
			}
			ops := &failingOps{noLinks: true}
			if tc.failOwn {
				ops.fail = func(oldname, newname string) bool { return newname == pathA && !isBackup(oldname, pathA) }
			}
			var o outputs
			o.ops = fileOps{link: ops.link, rename: ops.rename}
			a, err := o.create("--out", pathA)
			if err != nil {
				t.Fatal(err)
			}
			files := []*pendingFile{a}
			a.Write([]byte("new a"))
			if !tc.failOwn {
				b, err := o.create("--index", pathB)
				if err != nil {
					t.Fatal(err)
				}
				b.Write([]byte("new b"))
				files = append(files, b)
			}
			if tc.blocked {
				if err := os.Mkdir(pathB, 0o755); err != nil {
					t.Fatal(err)
				}
			}
			if got := inDir(o.commit(files...), dir); got != tc.wantErr {
				t.Errorf("commit: %q, want %q", got, tc.wantErr)
			}
			if ops.links == 0 {
				t.Errorf("no hard link tried: the fallback was not reached")
			}
			got := dirFiles(t, dir)
			if fmt.Sprint(got) != fmt.Sprint(tc.wantFiles) {
				t.Errorf("files after the commit %v, want %v", got, tc.wantFiles)
			}
		})
	}
}

// TestPendingRestoreFails: when a commit fails and the earlier file
// cannot be put back, the error says so and names the file that holds
// it, which holds it whole, so that the user can put it back. Either
// way the earlier file was kept: linked while the new one replaced it,
// or moved aside where there are no hard links.
func TestPendingRestoreFails(t *testing.T) {
	for _, noLinks := range []bool{false, true} {
		t.Run(fmt.Sprintf("no hard links %v", noLinks), func(t *testing.T) {
			dir := t.TempDir()
			pathA, pathB := filepath.Join(dir, "a"), filepath.Join(dir, "b")
			if err := os.WriteFile(pathA, []byte("old a"), 0o644); err != nil {
				t.Fatal(err)
			}
			ops := &failingOps{noLinks: noLinks, fail: func(oldname, newname string) bool {
				return newname == pathA && isBackup(oldname, pathA) // putting it back
			}}
			var o outputs
			o.ops = fileOps{link: ops.link, rename: ops.rename}
			a, err := o.create("--out", pathA)
			if err != nil {
				t.Fatal(err)
			}
			b, err := o.create("--index", pathB)
			if err != nil {
				t.Fatal(err)
			}
			a.Write([]byte("new a"))
			b.Write([]byte("new b"))
			if err := os.Mkdir(pathB, 0o755); err != nil {
				t.Fatal(err)
			}
			err = o.commit(a, b)
			var re *restoreError
			if !errors.As(err, &re) {
				t.Fatalf("commit: %v, want a restoreError", err)
			}
			want := regexp.MustCompile(`^--index DIR/b: a directory, not a file; the earlier DIR/a could not be put back \(input/output error\): it is kept as (DIR/\.a\.old\.spvfilter-[0-9]+\.[0-9]+)$`)
			m := want.FindStringSubmatch(strings.ReplaceAll(err.Error(), dir, "DIR"))
			if m == nil {
				t.Fatalf("commit: %q, want it to match %s", err, want)
			}
			kept := strings.Replace(m[1], "DIR", dir, 1)
			if b, err := os.ReadFile(kept); err != nil || string(b) != "old a" {
				t.Errorf("%s, named as holding the earlier file, holds %q (%v), want %q", kept, b, err, "old a")
			}
			if got := dirFiles(t, dir); len(got) != 3 || got["a"] != "new a" || got["b"] != "<dir>" {
				t.Errorf("files after the commit %v, want a, b and the earlier a kept aside, nothing more", got)
			}
		})
	}
}

// TestPanicRemovesTemporaries: a command that panics after it started
// its files (here in a progress bar, the app's hook) fails with status
// 1 and "internal error", and leaves no temporary file, the earlier
// files as they were. Without the cleanup deferred on the command's
// run, the temporary files stayed beside the outputs.
func TestPanicRemovesTemporaries(t *testing.T) {
	for _, tc := range []struct {
		name    string
		args    func(dir string) []string
		bar     string // the progress bar that panics
		earlier string // a file at the path before, or ""
	}{
		{"lab plot", func(dir string) []string {
			return []string{"lab", "--vectors", "../../testvectors/bip158/testnet-19.json", "--plot", filepath.Join(dir, "lab.svg")}
		}, "measuring designs", "lab.svg"},
		{"simulation over an earlier one", func(dir string) []string { return append(smallSimulation("7", dir), "--force") }, "writing ", "labels.json"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			if err := os.WriteFile(filepath.Join(dir, tc.earlier), []byte("earlier"), 0o644); err != nil {
				t.Fatal(err)
			}
			before := dirFiles(t, dir)
			var stderr strings.Builder
			a := &app{stdin: strings.NewReader(""), stdout: &strings.Builder{}, stderr: &stderr,
				newBar: func(what string, total int) (func(done, total int), func()) {
					if strings.HasPrefix(what, tc.bar) {
						panic("a bar that fails")
					}
					return nil, func() {}
				}}
			status := a.execute(tc.args(dir))
			if status != exitFailure || stderr.String() != "spvfilter: internal error: a bar that fails\n" {
				t.Errorf("status %d, stderr %q; want %d and the internal error", status, stderr.String(), exitFailure)
			}
			if got := dirFiles(t, dir); fmt.Sprint(got) != fmt.Sprint(before) {
				t.Errorf("after the panic %s holds %v, want %v", dir, keys(got), keys(before))
			}
		})
	}
}

// TestPendingNamesAsHelpSays: the hidden files beside an output, the
// one written and the earlier file kept while the new one is put in
// place, are named as the root help tells the user, who may find them
// after a process was killed, each with this process's id.
func TestPendingNamesAsHelpSays(t *testing.T) {
	help := newRootCommand(&app{stdout: &strings.Builder{}}).Long
	told := regexp.MustCompile(`\.plot\.svg\.(?:[a-z]+\.)?spvfilter-PID\.NUMBER(?:\.[a-z]+)?`).FindAllString(help, -1)
	if len(told) != 2 {
		t.Fatalf("the root help names %q, want the temporary file and the earlier file kept", told)
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "plot.svg")
	if err := os.WriteFile(path, []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	var names []string // the temporary file's, then the earlier file's
	var o outputs
	o.ops.link = func(oldname, newname string) error {
		names = append(names, filepath.Base(newname))
		return os.Link(oldname, newname)
	}
	p, err := o.create("--plot", path)
	if err != nil {
		t.Fatal(err)
	}
	names = append([]string{filepath.Base(p.tmp.Name())}, names...)
	p.Write([]byte("new"))
	if err := o.commit(p); err != nil {
		t.Fatal(err)
	}
	if len(names) != 2 {
		t.Fatalf("names %q, want the temporary file's and the earlier file's", names)
	}
	for i, name := range names {
		want := strings.ReplaceAll(regexp.QuoteMeta(told[i]), "NUMBER", "[0-9]+")
		want = "^" + strings.ReplaceAll(want, "PID", strconv.Itoa(os.Getpid())) + "$"
		if !regexp.MustCompile(want).MatchString(name) {
			t.Errorf("%s, not as the help says (%s)", name, told[i])
		}
	}
	if got := dirFiles(t, dir); len(got) != 1 || got["plot.svg"] != "new" {
		t.Errorf("after the commit: %v, want plot.svg alone", got)
	}
}
