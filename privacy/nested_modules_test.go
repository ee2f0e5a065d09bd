package privacy_test

import (
	"context"
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"
	"time"
)

// TestNestedModules runs the tests of privacy/beam, a module of its own so
// that the Apache Beam SDK stays out of spvfilter's dependencies, with the
// same go command: "go test ./..." at the top never descends into it.
func TestNestedModules(t *testing.T) {
	if testing.Short() {
		t.Skip("short mode: the nested module's tests (go test ./... in privacy/beam) are not run")
	}
	goTool := filepath.Join(runtime.GOROOT(), "bin", "go")
	if _, err := exec.LookPath(goTool); err != nil {
		if goTool, err = exec.LookPath("go"); err != nil {
			t.Fatalf("no go command to run the nested module's tests: %v", err)
		}
	}
	ctx := context.Background()
	if d, ok := t.Deadline(); ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithDeadline(ctx, d.Add(-10*time.Second))
		defer cancel()
	}
	cmd := exec.CommandContext(ctx, goTool, "test", "-short", "./...")
	cmd.Dir = "beam"
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go test ./... in privacy/beam: %v\n%s", err, out)
	}
}
