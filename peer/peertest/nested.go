package peertest

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// RunNestedModuleTests runs "go test -short ./..." in dir, a module of its own
// inside this one (its own go.mod keeps its dependencies out of
// spvfilter's), with the same go command, so that "go test ./..." at the
// top, which never descends into another module, runs its tests too. The
// output is logged when they fail. It is skipped in -short mode.
func RunNestedModuleTests(t *testing.T, dir string) {
	t.Helper()
	if testing.Short() {
		t.Skipf("short mode: the tests of the nested module %s are not run", dir)
	}
	goTool, err := goCommand()
	if err != nil {
		t.Fatalf("no go command to run the tests of %s: %v", dir, err)
	}
	ctx := context.Background()
	if d, ok := t.Deadline(); ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithDeadline(ctx, d.Add(-10*time.Second))
		defer cancel()
	}
	// The flags this test was run with that the go command can tell it
	// reach the nested module's tests too.
	args := []string{"test", "-short"}
	if raceEnabled {
		args = append(args, "-race")
	}
	if testing.Verbose() {
		args = append(args, "-v")
	}
	cmd := exec.CommandContext(ctx, goTool, append(args, "./...")...)
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go test ./... in %s: %v\n%s", dir, err, out)
	}
}

// goCommand returns the go command: the one on PATH, or $GOROOT/bin/go.
func goCommand() (string, error) {
	if goTool, err := exec.LookPath("go"); err == nil {
		return goTool, nil
	}
	if root := os.Getenv("GOROOT"); root != "" {
		return exec.LookPath(filepath.Join(root, "bin", "go"))
	}
	return "", errors.New("peertest: no go command on PATH and no GOROOT")
}
