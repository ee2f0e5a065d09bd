package main

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
)

// pendingFile is an output file written into a temporary file beside
// its path and put at the path by outputs.commit once whole, so that a
// command that fails or is interrupted half way leaves no file cut short
// (which a later command would read as whole) and nothing to refuse as
// existing when it runs again. A pendingFile without a temporary file is
// a removal: its commit removes what is at its path. The temporary file
// and the earlier file kept while the new one is put in place are named
// as staletemp.go says, so that those of a killed process are removed
// by the next command that writes the file.
type pendingFile struct {
	flag, path string
	// dest is where the file goes: path, or the file a symbolic link
	// at path names (the link is followed, as a file written in place
	// would follow it).
	dest string
	tmp  *os.File // nil for a removal
	// direct is set for a path that names no regular file but a device
	// or a pipe (/dev/full, a named pipe): tmp is then the path itself,
	// written in place, as nothing can be put in its place; it is opened
	// and written without the outputs' lock, as both may wait for a
	// reader.
	direct bool
	// mode is the permissions the file is put in place with.
	mode  fs.FileMode
	state pendingState
	// backup holds, while outputs.commit puts its files in place, the
	// file the path held before; placed says the new file is there.
	// movedAside says the backup was renamed from the path, not linked.
	backup     string
	placed     bool
	movedAside bool
	// ops are the outputs' link and rename.
	ops *fileOps
	// held keep the locks of the hidden files (holdTemp, holdEarlier)
	// from finish, which closes tmp, until the commit ends.
	held []*os.File
}

// pendingState is where a pendingFile stands.
type pendingState int

const (
	pending   pendingState = iota // being written
	committed                     // at its path
	abandoned                     // removed, or its commit failed
)

// outputs are the files a command writes, each a pendingFile. The lock
// makes an interrupt (exitOnSignal) wait for a commit under way, so that
// the files of a commit are all in place or none, and lets it remove the
// files not yet committed before the process exits.
type outputs struct {
	mu    sync.Mutex
	files []*pendingFile
	// ops put the files in place; the zero value uses os.Link and
	// os.Rename.
	ops fileOps
	// notes, when set, is where the hidden files a killed process left
	// beside an output, removed as the output is started, are named.
	notes io.Writer
}

// fileOps are the calls that put files in place: os.Link and os.Rename,
// unless link or rename is set (tests set them to make a call fail, as
// a file system without hard links or a failing disk would).
type fileOps struct {
	link, rename func(oldname, newname string) error
}

// Link gives oldname the second name newname.
func (f *fileOps) Link(oldname, newname string) error {
	if f.link != nil {
		return f.link(oldname, newname)
	}
	return os.Link(oldname, newname)
}

// Rename renames oldname to newname, replacing a file there.
func (f *fileOps) Rename(oldname, newname string) error {
	if f.rename != nil {
		return f.rename(oldname, newname)
	}
	return os.Rename(oldname, newname)
}

// create starts the file path, named by flag in errors. Called before
// the command's long work, it also checks that the file can be created
// where it goes.
func (o *outputs) create(flag, path string) (*pendingFile, error) {
	files, err := o.createEach(outputFile{flag, path})
	if err != nil {
		return nil, err
	}
	return files[0], nil
}

// createStream is create for a file written as the work goes on, such as
// lab's block file, given a named pipe: one no process reads is refused
// at once (openPipe), as privacy capture --out refuses it, not waited on
// before any work, saying nothing. (A plot, opened as create opens it,
// waits for its pipe's reader until interrupted.)
func (o *outputs) createStream(flag, path string) (*pendingFile, error) {
	files, err := o.createAll(true, outputFile{flag, path})
	if err != nil {
		return nil, err
	}
	return files[0], nil
}

// createEach starts the file of each of files that names one, nil for
// the others, in their order: all of them at once, as an interrupt sees
// them (it removes all, or comes after). A pipe or a device is opened
// last, without the lock: opening a named pipe waits for a reader, and
// an interrupt must not wait for it (there is nothing of it to remove),
// but name it, and the files started before it. Before, beside each
// file, the hidden files a killed process left are removed (sweep).
func (o *outputs) createEach(files ...outputFile) ([]*pendingFile, error) {
	return o.createAll(false, files...)
}

// createAll is createEach; with refuseUnread, a named pipe no process
// reads is refused (see createStream).
func (o *outputs) createAll(refuseUnread bool, files ...outputFile) ([]*pendingFile, error) {
	started := make([]*pendingFile, len(files))
	var direct []*pendingFile
	for i, f := range files {
		if f.path == "" {
			continue
		}
		dest, err := destination(f.flag, f.path)
		if err != nil {
			return nil, err
		}
		if st, err := os.Stat(dest); err == nil && !st.Mode().IsRegular() && !st.IsDir() {
			started[i] = &pendingFile{flag: f.flag, path: f.path, dest: dest, direct: true, ops: &o.ops}
			direct = append(direct, started[i])
			continue
		}
		o.sweep(f.flag, f.path, dest)
	}
	if err := o.startFiles(files, started); err != nil {
		return nil, err
	}
	for _, p := range direct {
		if err := o.openDirect(p, refuseUnread); err != nil {
			return nil, err
		}
	}
	return started, nil
}

// startFiles starts, under the lock, the temporary file of each of files
// that names one and is not started (a pipe or a device, in started
// already, to be opened after), and adds all of them to o.files.
func (o *outputs) startFiles(files []outputFile, started []*pendingFile) error {
	o.mu.Lock()
	defer o.mu.Unlock()
	var direct []*pendingFile
	for i, f := range files {
		if f.path == "" {
			continue
		}
		if started[i] != nil {
			direct = append(direct, started[i])
			continue
		}
		p, err := startPending(f)
		if err != nil {
			return err
		}
		p.ops = &o.ops
		started[i] = p
		o.files = append(o.files, p)
	}
	o.files = append(o.files, direct...) // an interrupt names them
	return nil
}

// openDirect opens p, a pipe or a device, for writing in place, without
// the lock while it opens. With refuseUnread, a named pipe no process
// reads is refused at once (openPipe), not waited on.
func (o *outputs) openDirect(p *pendingFile, refuseUnread bool) error {
	var f *os.File
	var err error
	if st, serr := os.Stat(p.path); refuseUnread && serr == nil && st.Mode()&fs.ModeNamedPipe != 0 {
		f, err = openPipe(p.flag, p.path)
	} else if f, err = os.OpenFile(p.path, os.O_WRONLY|os.O_TRUNC, 0); err != nil {
		err = failureWords(p.flag+" "+p.path, writeProblem(err, ""))
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	if err != nil {
		p.state = abandoned
		return err
	}
	p.tmp = f
	return nil
}

// startPending creates the temporary file of f, a regular file or none
// yet, beside where it goes, with the mode the file will have: the
// replaced file's permissions, or those the umask leaves of 0666, as for
// a file the tool creates directly (os.CreateTemp makes it 0600). The
// temporary file is held locked while it is open (holdTemp).
func startPending(f outputFile) (*pendingFile, error) {
	dest, err := destination(f.flag, f.path)
	if err != nil {
		return nil, err
	}
	p := &pendingFile{flag: f.flag, path: f.path, dest: dest, mode: 0o666 &^ processUmask}
	if st, err := os.Stat(p.dest); err == nil && st.Mode().IsRegular() {
		p.mode = st.Mode().Perm()
	}
	// The extension kept, for writers that pick the format by it.
	dir, base := filepath.Split(p.dest)
	for range 10 {
		tmp, err := os.CreateTemp(filepath.Clean(dir), tempPattern(base, tempWritten, os.Getpid()))
		if err != nil {
			// The temporary file's name is the tool's, not the user's.
			err = failureWords(f.flag+" "+f.path, writeProblem(err, filepath.Clean(dir)))
			if errors.Is(err, fs.ErrPermission) || errors.Is(err, fs.ErrNotExist) {
				// A directory one may not write in, or that is gone: as
				// checkOutputFile says it, bad input.
				err = usageError{err}
			}
			return nil, err
		}
		if !holdTemp(tmp) {
			tmp.Close() // claimed by a sweep, which removes it
			continue
		}
		p.tmp = tmp
		return p, nil
	}
	return nil, failureWords(f.flag+" "+f.path, errors.New("no hidden file beside it could be kept from being removed as it was made"))
}

// destination is the file path, named by flag in errors, names: path,
// or, when path is a symbolic link, the file it leads to as the system
// resolves it (each link's target read from the directory it is really
// in, not joined to the path as text). A link that leads to no file is
// bad input: replacing what it names would create a file wherever the
// link, perhaps another user's in a shared directory, points.
func destination(flag, path string) (string, error) {
	st, err := os.Lstat(path)
	if err != nil || st.Mode()&os.ModeSymlink == 0 {
		return path, nil
	}
	real, err := filepath.EvalSymlinks(path)
	if st, serr := os.Stat(path); err != nil && serr == nil && !st.Mode().IsRegular() && !st.IsDir() {
		// A link the system follows to no path, such as /dev/stdout to
		// /proc/self/fd/1 to "pipe:[N]": the pipe, socket or device it
		// leads to is written in place, through the link.
		return path, nil
	}
	if err != nil {
		target, _ := os.Readlink(path)
		return "", usageError{&danglingLinkError{flag: flag, path: path, target: target}}
	}
	return real, nil
}

// danglingLinkError is an output path that is a symbolic link leading to
// no file.
type danglingLinkError struct{ flag, path, target string }

func (e *danglingLinkError) Error() string {
	return fmt.Sprintf("%s %s: a symbolic link to %s, which does not exist: give the file's own path, or remove the link", e.flag, e.path, e.target)
}

// remove makes the commit of the files it is given with also remove
// path, named by flag in errors: a file of an earlier run that would
// otherwise be taken for one of this run.
func (o *outputs) remove(flag, path string) *pendingFile {
	o.sweep(flag, path, path)
	o.mu.Lock()
	defer o.mu.Unlock()
	p := &pendingFile{flag: flag, path: path, dest: path, ops: &o.ops}
	o.files = append(o.files, p)
	return p
}

// Write writes to the temporary file; an error does not name it (the
// temporary file's name is the tool's, not the user's).
func (p *pendingFile) Write(b []byte) (int, error) {
	n, err := p.tmp.Write(b)
	if err != nil {
		err = writeProblem(err, "")
	}
	return n, err
}

// errWrittenAlready is the error of writing or committing a file a
// second time, or after it was abandoned.
var errWrittenAlready = errors.New("written already")

// writeNamed calls write with the temporary file's name, for a writer
// that creates the file it is given by name. An interrupt waits for it
// to return: removed while write opens it again, the temporary file
// would be left behind. A pipe or a device is written without the lock,
// as writing it may wait for its reader, and there is nothing of it to
// remove.
func (o *outputs) writeNamed(p *pendingFile, write func(name string) error) error {
	o.mu.Lock()
	if p.state != pending {
		o.mu.Unlock()
		return errWrittenAlready
	}
	name := p.tmp.Name()
	if p.direct {
		o.mu.Unlock()
		name = p.path // its name, which a writer may read the format from
	} else {
		defer o.mu.Unlock()
	}
	err := write(name)
	var pe *fs.PathError
	if errors.As(err, &pe) && pe.Path == name {
		err = writeProblem(err, "")
	}
	return err
}

// commit puts files, each written whole, at their paths (replacing what
// is there) or, for a removal, removes what is at its path (nil files
// are left out): all of them, or, when one cannot be, none, each path
// then holding what it held before. The error names the flag of the
// file that could not be put in place.
func (o *outputs) commit(given ...*pendingFile) error {
	o.mu.Lock()
	defer o.mu.Unlock()
	var files []*pendingFile // those given, nil left out
	for _, p := range given {
		if p != nil {
			files = append(files, p)
		}
	}
	for _, p := range files {
		if err := p.finish(); err != nil {
			o.abandon(files)
			return err
		}
	}
	for i, p := range files {
		if err := p.place(); err != nil {
			for _, q := range files[:i] {
				if rerr := q.restore(); rerr != nil {
					err = fmt.Errorf("%w; %w", err, rerr)
				}
			}
			o.abandon(files)
			return err
		}
	}
	for _, p := range files {
		if p.backup != "" {
			os.Remove(p.backup)
			p.backup = ""
		}
		p.release()
		p.state = committed
	}
	return nil
}

// release lets go of the locks held kept.
func (p *pendingFile) release() {
	for _, f := range p.held {
		f.Close()
	}
	p.held = nil
}

// finish writes the temporary file through to the disk and closes it.
func (p *pendingFile) finish() error {
	if p.state != pending {
		return failureWords(p.flag+" "+p.path, errWrittenAlready)
	}
	if p.tmp == nil {
		return nil
	}
	if p.direct {
		if err := p.tmp.Close(); err != nil {
			return failureWords(p.flag+" "+p.path, writeProblem(err, ""))
		}
		return nil
	}
	err := p.tmp.Chmod(p.mode)
	if err == nil {
		err = p.tmp.Sync()
	}
	if held := keepLock(p.tmp); held != nil {
		p.held = append(p.held, held) // locked until it is in place
	}
	if cerr := p.tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return failureWords(p.flag+" "+p.path, writeProblem(err, ""))
	}
	return nil
}

// place puts the temporary file at the destination, or for a removal
// removes what is there, keeping what was there, other than a
// directory, as the backup: a second name given to it (a hard link)
// before the rename replaces it, so that the path holds the old file or
// the new one at every moment.
func (p *pendingFile) place() error {
	if p.direct {
		return nil // written in place
	}
	if st, err := os.Lstat(p.dest); err == nil && !st.IsDir() {
		if err := p.keepBackup(); err != nil {
			return err
		}
	}
	if p.tmp == nil {
		if p.backup == "" {
			return nil // nothing to remove
		}
		if err := os.Remove(p.dest); err != nil && !errors.Is(err, fs.ErrNotExist) {
			p.restore() // the path still holds its file
			return failureWords(p.flag+" "+p.path, writeProblem(err, ""))
		}
		p.placed = true
		return nil
	}
	if err := p.ops.Rename(p.tmp.Name(), p.dest); err != nil {
		if st, serr := os.Stat(p.dest); serr == nil && st.IsDir() {
			// Made a directory since the command started.
			err = &restated{fileProblem(syscall.EISDIR), err}
		} else {
			err = pathProblem(err)
		}
		err = failureWords(p.flag+" "+p.path, err)
		if rerr := p.restore(); rerr != nil {
			err = fmt.Errorf("%w; %w", err, rerr)
		}
		return err
	}
	p.placed = true
	return nil
}

// keepBackup gives the file at the destination a second name beside
// it, the backup.
func (p *pendingFile) keepBackup() error {
	dir, base := filepath.Split(p.dest)
	for range 10 {
		f, err := os.CreateTemp(filepath.Clean(dir), tempPattern(base, tempEarlier, os.Getpid()))
		if err != nil {
			return failureWords(p.flag+" "+p.path, writeProblem(err, filepath.Clean(dir)))
		}
		name := f.Name()
		f.Close()
		if err := os.Remove(name); err != nil {
			return failureWords(p.flag+" "+p.path, writeProblem(err, ""))
		}
		err = p.ops.Link(p.dest, name)
		if errors.Is(err, fs.ErrExist) {
			continue // the name taken again meanwhile
		}
		if err == nil {
			held, ok := holdEarlier(name)
			if !ok {
				continue // removed by a sweep as the output's second name
			}
			if held != nil {
				p.held = append(p.held, held)
			}
		}
		if err != nil {
			// A file system without hard links: the file moved aside,
			// the path holding nothing until the new file is renamed in.
			err = p.ops.Rename(p.dest, name)
			p.movedAside = err == nil
		}
		if err != nil {
			return failureWords(p.flag+" "+p.path, pathProblem(err))
		}
		p.backup = name
		return nil
	}
	return failureWords(p.flag+" "+p.path, errors.New("no name free for a copy of the file it holds"))
}

// restoreError is a file outputs.commit could not put back where it was,
// after a failed commit: it is kept under the backup's name.
type restoreError struct {
	path, backup string
	err          error
}

func (e *restoreError) Error() string {
	return fmt.Sprintf("the earlier %s could not be put back (%v): it is kept as %s", e.path, pathProblem(e.err), e.backup)
}

func (e *restoreError) Unwrap() error { return e.err }

// restore undoes place: the destination holds again what it held
// before. Its error names the backup that holds the earlier file.
func (p *pendingFile) restore() error {
	var err error
	switch {
	case p.backup != "" && (p.placed || p.movedAside):
		// The earlier file back by one rename (over the new one).
		if rerr := p.ops.Rename(p.backup, p.dest); rerr != nil {
			err = &restoreError{path: p.path, backup: p.backup, err: rerr}
		}
	case p.backup != "":
		os.Remove(p.backup) // the destination still holds it
	case p.placed:
		os.Remove(p.dest) // there was no file before
	}
	p.placed, p.movedAside, p.backup = false, false, ""
	return err
}

// abandon removes the temporary files of files; the caller holds o.mu.
func (o *outputs) abandon(files []*pendingFile) {
	for _, p := range files {
		if p != nil && p.state == pending && p.tmp != nil {
			p.tmp.Close()
			if !p.direct {
				os.Remove(p.tmp.Name())
			}
		}
		if p != nil && p.state == pending {
			p.state = abandoned
		}
		if p != nil {
			p.release()
		}
	}
}

// abort removes the temporary file of p, unless committed.
func (o *outputs) abort(p *pendingFile) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.abandon([]*pendingFile{p})
}

// abortAll removes the temporary files of every file not committed.
func (o *outputs) abortAll() {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.abandon(o.files)
}

// unfinished are the outputs a failed or interrupted command started and
// did not commit, removals left out: files not written, each path
// holding what it held before, and pipes or devices, written in place,
// whose writing was cut off, a reader having had part of it or nothing.
type unfinished struct {
	files, direct []outputFile
}

// unfinished are the outputs started and not committed, before or after
// abortAll removed their temporary files.
func (o *outputs) unfinished() unfinished {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.unfinishedLocked()
}

func (o *outputs) unfinishedLocked() unfinished {
	var u unfinished
	for _, p := range o.files {
		switch {
		case p.state == committed:
		case p.direct:
			u.direct = append(u.direct, outputFile{p.flag, p.path})
		case p.tmp != nil:
			u.files = append(u.files, outputFile{p.flag, p.path})
		}
	}
	return u
}

// String says which files were not written and which pipes or devices
// were interrupted, each after its flag ("--plot a.svg and --plot-j
// b.svg not written", "--out d/a, d/b not written", "--plot-j b.svg not
// written; --plot p.svg interrupted"), or "" for none.
func (u unfinished) String() string {
	var said []string
	if len(u.files) > 0 {
		said = append(said, flagFiles(u.files)+" not written")
	}
	if len(u.direct) > 0 {
		said = append(said, flagFiles(u.direct)+" interrupted")
	}
	return strings.Join(said, "; ")
}

// flagFiles lists files, each after its flag, a flag said once for the
// files that follow it ("--plot a.svg and --plot-j b.svg", "--out d/a,
// d/b").
func flagFiles(files []outputFile) string {
	var b strings.Builder
	for i, f := range files {
		switch {
		case i == 0:
		case f.flag == files[i-1].flag:
			b.WriteString(", ")
		case i == len(files)-1:
			b.WriteString(" and ")
		default:
			b.WriteString(", ")
		}
		if i == 0 || f.flag != files[i-1].flag {
			b.WriteString(f.flag + " ")
		}
		b.WriteString(f.path)
	}
	return b.String()
}

// pathProblem is err of a rename said without the paths (a temporary
// file's name is the tool's, not the user's).
func pathProblem(err error) error {
	var le *os.LinkError
	if errors.As(err, &le) {
		return &restated{fileProblem(le.Err), err}
	}
	return writeProblem(err, "")
}
