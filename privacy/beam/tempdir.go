package privacybeam

import (
	"errors"
	"fmt"
	"os"
)

// ScratchTempDir points the process's temporary directory at a fresh
// directory inside it, and returns the function that removes that
// directory and restores the one before. Beam's portable runners in a
// LOOPBACK environment (prism among them) create an empty placeholder
// file in the temporary directory on every run and never remove it
// (Beam 2.77.0, runnerlib.Execute; Beam issue 27569): a program that runs
// pipelines calls ScratchTempDir once, before the first, so that nothing
// is left behind.
//
// It sets TMPDIR, so it is for a program's main or a TestMain, before
// other goroutines read the temporary directory.
func ScratchTempDir() (restore func() error, err error) {
	old, had := os.LookupEnv("TMPDIR")
	dir, err := os.MkdirTemp("", "spvfilter-beam-")
	if err != nil {
		return nil, fmt.Errorf("privacybeam: scratch directory: %w", err)
	}
	if err := os.Setenv("TMPDIR", dir); err != nil {
		return nil, errors.Join(fmt.Errorf("privacybeam: scratch directory: %w", err), os.Remove(dir))
	}
	return func() error {
		var err error
		if had {
			err = os.Setenv("TMPDIR", old)
		} else {
			err = os.Unsetenv("TMPDIR")
		}
		return errors.Join(err, os.RemoveAll(dir))
	}, nil
}
