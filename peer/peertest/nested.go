package peertest

import (
	"context"
	"os/exec"
	"path/filepath"
	"runtime"
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
	goTool := filepath.Join(runtime.GOROOT(), "bin", "go")
	if _, err := exec.LookPath(goTool); err != nil {
		if goTool, err = exec.LookPath("go"); err != nil {
			t.Fatalf("no go command to run the tests of %s: %v", dir, err)
		}
	}
	ctx := context.Background()
	if d, ok := t.Deadline(); ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithDeadline(ctx, d.Add(-10*time.Second))
		defer cancel()
	}
	cmd := exec.CommandContext(ctx, goTool, "test", "-short", "./...")
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go test ./... in %s: %v\n%s", dir, err, out)
	}
}
