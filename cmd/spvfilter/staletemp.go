package main

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// The hidden files beside an output (see pendingFile) carry the process
// id of the command that made them: .BASE.spvfilter-PID.NUMBER.EXT for the new
// file being written (EXT, BASE's extension, kept for writers that pick
// the format by it) and .BASE.old.spvfilter-PID.NUMBER for the earlier file kept
// while the new one is put in place, NUMBER os.CreateTemp's. A process
// removes its own however it ends, unless it is killed outright (SIGKILL,
// a crash, the power cut). The next command that writes BASE removes
// those a killed process left (sweepStale): a file whose process no
// longer runs and that no process holds locked, an earlier file only
// when it is a second name of BASE (it holds nothing else). A command
// writing BASE at the same time keeps its own: its process runs, and it
// holds its files locked, the new one from its making until it is put
// in place, the earlier one while the new one is put in place (seen
// from another pid namespace, its process runs nowhere).

// tempKind is which of an output's hidden files a name is.
type tempKind int

const (
	notTemp     tempKind = iota
	tempWritten          // the new file, being written
	tempEarlier          // the earlier file, kept while the new one is put in place
)

// tempPattern is the os.CreateTemp pattern of the hidden file of kind
// beside the output whose name is base, made by the process pid.
func tempPattern(base string, kind tempKind, pid int) string {
	if kind == tempEarlier {
		return "." + base + ".old." + tempMark + strconv.Itoa(pid) + ".*"
	}
	return "." + base + "." + tempMark + strconv.Itoa(pid) + ".*" + filepath.Ext(base)
}

// tempMark comes before the process id in a hidden file's name, so that
// a file of the user's own named like one (.report.2024.1 beside an
// output report) is never taken for one.
const tempMark = "spvfilter-"

// parseTemp reports whether name, a file's name in the directory of the
// output whose name is base, is one of that output's hidden files, which
// kind, and the process id it carries.
func parseTemp(base, name string) (tempKind, int) {
	if rest, ok := strings.CutPrefix(name, "."+base+".old."); ok {
		if pid, ok := pidAndNumber(rest); ok {
			return tempEarlier, pid
		}
	}
	rest, ok := strings.CutPrefix(name, "."+base+".")
	if !ok {
		return notTemp, 0
	}
	if rest, ok = strings.CutSuffix(rest, filepath.Ext(base)); !ok {
		return notTemp, 0
	}
	if pid, ok := pidAndNumber(rest); ok {
		return tempWritten, pid
	}
	return notTemp, 0
}

// pidAndNumber reads tempMark+"PID.NUMBER", both decimal digits only,
// PID a process id (positive, at most 2^31-1).
func pidAndNumber(s string) (int, bool) {
	s, marked := strings.CutPrefix(s, tempMark)
	p, n, ok := strings.Cut(s, ".")
	if !marked || !ok || !digitsOnly(p) || !digitsOnly(n) {
		return 0, false
	}
	pid, err := strconv.ParseInt(p, 10, 32)
	if err != nil || pid <= 0 {
		return 0, false
	}
	return int(pid), true
}

// digitsOnly reports whether s is one or more decimal digits.
func digitsOnly(s string) bool {
	if s == "" {
		return false
	}
	for _, c := range s {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// maxSweep bounds the hidden files one sweep looks at: a directory
// holding more names that look like an output's gets the rest swept by
// later commands.
const maxSweep = 1000

// swept are the hidden files beside an output that a sweep found left
// by processes that no longer run: those it removed, and the earlier
// files it kept, each holding a file the output held before, which a
// killed command was replacing or which a failed one could not put back
// (its error named it): the user's to rename back or remove.
type swept struct{ removed, kept []string }

// sweepStale removes the hidden files beside dest, an output's file,
// that processes killed while they wrote it left. It leaves those of
// this process and of every process that still runs (or that it cannot
// tell of: another user's), and those a process holds locked; of the
// earlier files, it removes only one that is a second name of dest
// itself, and keeps the others. It is best effort: a file it cannot
// remove is left, unnamed.
func sweepStale(dest string) swept {
	dir, base := filepath.Split(dest)
	dir = filepath.Clean(dir)
	d, err := os.Open(dir)
	if err != nil {
		return swept{}
	}
	defer d.Close()
	type stale struct {
		name string
		kind tempKind
		pid  int
	}
	var found []stale
	for len(found) < maxSweep {
		entries, err := d.ReadDir(256)
		for _, e := range entries {
			kind, pid := parseTemp(base, e.Name())
			if kind != notTemp && e.Type().IsRegular() && pid != os.Getpid() {
				found = append(found, stale{e.Name(), kind, pid})
			}
		}
		if err != nil {
			break // io.EOF, or a directory that cannot be read further
		}
	}
	var s swept
	for _, f := range found {
		path := filepath.Join(dir, f.name)
		held, ok := claim(path, f.kind, f.pid)
		if !ok {
			continue
		}
		// Under the lock: a writer puts its new file over dest only
		// while it holds its earlier file's.
		switch {
		case f.kind == tempEarlier && !sameFile(path, dest):
			s.kept = append(s.kept, f.name)
		case os.Remove(path) == nil:
			s.removed = append(s.removed, f.name)
		}
		if held != nil {
			held.Close()
		}
	}
	slices.Sort(s.removed)
	slices.Sort(s.kept)
	return s
}

// sameFile reports whether the paths a and b both exist and name one
// file.
func sameFile(a, b string) bool {
	sa, errA := os.Lstat(a)
	sb, errB := os.Stat(b)
	return errA == nil && errB == nil && os.SameFile(sa, sb)
}

// sweep removes the hidden files a killed process left beside dest, the
// file the output path, named by flag, goes to, and says on o.notes, in
// one line, which it removed and which earlier files it kept.
func (o *outputs) sweep(flag, path, dest string) {
	s := sweepStale(dest)
	if o.notes == nil {
		return
	}
	if line := s.String(); line != "" {
		fmt.Fprintf(o.notes, "%s %s: %s\n", flag, path, line)
	}
}

// String says which files s removed and which it kept, or "" for none.
func (s swept) String() string {
	var said []string
	if len(s.removed) > 0 {
		said = append(said, "removed "+hiddenFiles(s.removed)+", left beside it by a process killed while it wrote it")
	}
	if len(s.kept) > 0 {
		what := ", an earlier version of this file that a process which has ended did not put back (rename it back, or remove it)"
		if len(s.kept) > 1 {
			what = ", earlier versions of this file that processes which have ended did not put back (rename one back, or remove them)"
		}
		said = append(said, "kept "+hiddenFiles(s.kept)+what)
	}
	return strings.Join(said, "; ")
}

// hiddenFiles names the files names, "the hidden file A" or "the hidden
// files A, B and C".
func hiddenFiles(names []string) string {
	if len(names) == 1 {
		return "the hidden file " + names[0]
	}
	return "the hidden files " + strings.Join(names[:len(names)-1], ", ") + " and " + names[len(names)-1]
}
