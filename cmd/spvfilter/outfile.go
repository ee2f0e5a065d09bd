package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"

	"golang.org/x/term"
)

// checkOutputFile refuses, before any work is done, an output file that
// cannot be created: a directory, or a file in a directory that does not
// exist. Either is bad input, in every command that writes a file. The
// name "-" (standard output) and "" (no file) pass.
func checkOutputFile(flag, path string) error {
	if path == "" || path == "-" {
		return nil
	}
	if st, err := os.Stat(path); err == nil && st.IsDir() {
		return badInput("%s %s: a directory, not a file", flag, path)
	}
	// Through a symbolic link, the directory the file goes in is the
	// link's target's; a link to no file is refused.
	dest, err := destination(flag, path)
	if err != nil {
		return err
	}
	dir := filepath.Dir(dest)
	st, err := os.Stat(dir)
	if err != nil {
		return badInput("%s %s: directory %s does not exist: create it first, or give a path in a directory that exists", flag, path, dir)
	}
	if !st.IsDir() {
		return badInput("%s %s: %s is not a directory", flag, path, dir)
	}
	if err := canWrite(path); err != nil {
		return usageError{&restated{fmt.Sprintf("%s %s: %s: give a path you can write to", flag, path, err), err}}
	}
	return nil
}

// canWrite reports, as why (no path in it), whether this process may
// write the file path: open it, when it is a regular file, for writing
// without changing it (a device or a pipe is left alone: opening it may
// wait); or else create a file in its directory, and remove it.
func canWrite(path string) error {
	if st, err := os.Stat(path); err == nil {
		if !st.Mode().IsRegular() {
			return nil
		}
		f, err := os.OpenFile(path, os.O_WRONLY, 0)
		if err != nil {
			return writeProblem(err, "")
		}
		return f.Close()
	}
	return canCreateIn(filepath.Dir(path))
}

// canCreateIn reports, as why (no path in it), whether this process may
// create a file in the directory dir: it creates one, and removes it.
func canCreateIn(dir string) error {
	f, err := os.CreateTemp(dir, ".spvfilter-probe-*")
	if err != nil {
		return writeProblem(err, dir)
	}
	f.Close()
	return os.Remove(f.Name())
}

// writeProblem is err, of opening or creating a file, said without the
// file's name: a file of the tool's own (a probe, a temporary file) is
// not the user's to see; in dir, when not "", it could not be created.
func writeProblem(err error, dir string) error {
	var pe *os.PathError
	if !errors.As(err, &pe) {
		return err
	}
	if dir != "" {
		return &restated{fmt.Sprintf("%s (no file can be created in %s)", fileProblem(pe.Err), dir), err}
	}
	return &restated{fileProblem(pe.Err), err}
}

// refuseOverwrite refuses an output file that already exists unless
// --force is given: a command that replaces a file says so first. A pipe
// or a device is written in place, not replaced: it passes.
func refuseOverwrite(flag, path string, force bool) error {
	if force || path == "" || path == "-" {
		return nil
	}
	if st, err := os.Stat(path); err == nil && !st.Mode().IsRegular() && !st.IsDir() {
		return nil
	}
	if _, err := os.Lstat(path); err == nil {
		if k := fileKindOf(path); k != kindUnknown {
			// The file of another step, given here by mistake, is named
			// before --force replaces it.
			return badInput("%s %s: the file exists, and holds %s (give --force to replace it)", flag, path, kindWords[k].what)
		}
		return badInput("%s %s: the file exists (give --force to replace it)", flag, path)
	}
	return nil
}

// outputFile is a file a command writes, and the flag that names it.
type outputFile struct{ flag, path string }

// distinctOutputs refuses two flags of one command that name the same
// file to write (the second would replace what the first wrote), by
// name or, for files that exist, as the same file under two names. "-"
// (standard output) is the same as itself; "" names no file.
func distinctOutputs(files ...outputFile) error {
	for i, a := range files {
		for _, b := range files[:i] {
			if a.path != "" && b.path != "" && sameOutput(a.path, b.path) {
				return badInput("%s %s: the same file as %s", a.flag, a.path, b.flag)
			}
		}
	}
	return nil
}

// sameOutput reports whether the paths a and b name one file.
func sameOutput(a, b string) bool {
	if a == "-" || b == "-" {
		return a == b
	}
	if filepath.Clean(a) == filepath.Clean(b) {
		return true
	}
	absA, errA := filepath.Abs(a)
	absB, errB := filepath.Abs(b)
	if errA == nil && errB == nil && absA == absB {
		return true
	}
	sa, errA := os.Stat(a)
	sb, errB := os.Stat(b)
	return errA == nil && errB == nil && os.SameFile(sa, sb)
}

// openPipe opens the named pipe path, named by flag in errors, to write
// into: a pipe no process holds open for reading is refused at once as
// bad input, not waited on (an opening for writing would wait for a
// reader for ever, saying nothing). Writes to the file returned wait
// for the reader, as to a pipe opened without O_NONBLOCK.
func openPipe(flag, path string) (*os.File, error) {
	file, err := os.OpenFile(path, os.O_WRONLY|syscall.O_NONBLOCK, 0)
	if errors.Is(err, syscall.ENXIO) {
		return nil, badInput("%s %s: a named pipe that no process reads: start its reader first (the output goes into a pipe only while a process reads it)", flag, path)
	}
	if err != nil {
		return nil, badInputWords(flag+" "+path, err)
	}
	return file, nil
}

// refuseDevice refuses as bad input an output path that is a device or a
// link to one (/dev/null and /dev/zero keep nothing, /dev/full takes
// nothing), for a file that is written to be read back: why says so, and
// what to give instead.
func refuseDevice(flag, path, why string) error {
	st, err := os.Stat(path)
	if path == "" || err != nil || st.Mode()&fs.ModeDevice == 0 {
		return nil
	}
	dest, err := destination(flag, path)
	if err != nil {
		return err
	}
	what := "a device"
	if dest != path {
		what = "a link to the device " + dest
	}
	return badInput("%s %s: %s, not a file: %s", flag, path, what, why)
}

// refuseDeviceButNull is refuseDevice for an output that may keep
// nothing on purpose: /dev/null passes, and so does a terminal, where
// the output is read as it comes.
func refuseDeviceButNull(flag, path, why string) error {
	st, err := os.Stat(path)
	if path == "-" || err != nil || st.Mode()&fs.ModeDevice == 0 || sameOutput(path, os.DevNull) || isTerminal(path) {
		return nil
	}
	return refuseDevice(flag, path, why)
}

// isTerminal reports whether path, a device, is a terminal.
func isTerminal(path string) bool {
	file, err := os.Open(path)
	if err != nil {
		return false
	}
	defer file.Close()
	return term.IsTerminal(int(file.Fd()))
}
