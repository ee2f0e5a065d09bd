package peer_test

import (
	"bufio"
	"context"
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"
	"time"
)

// nestedModules are the modules inside this directory tree that keep their
// own go.mod, so that their dependencies stay out of spvfilter's.
var nestedModules = []string{"neutrinobench"}

// TestNestedModules runs the tests of the nested modules with the same go
// command, so that "go test ./..." at the top also runs them: the go tool
// itself never descends into a directory with its own go.mod.
func TestNestedModules(t *testing.T) {
	if testing.Short() {
		t.Skip("short mode: the nested modules' tests (go test ./... in peer/neutrinobench) are not run")
	}
	goTool := filepath.Join(runtime.GOROOT(), "bin", "go")
	if _, err := exec.LookPath(goTool); err != nil {
		if goTool, err = exec.LookPath("go"); err != nil {
			t.Fatalf("no go command to run the nested modules' tests: %v", err)
		}
	}
	ctx := context.Background()
	if d, ok := t.Deadline(); ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithDeadline(ctx, d.Add(-10*time.Second))
		defer cancel()
	}
	for _, dir := range nestedModules {
		t.Run(dir, func(t *testing.T) {
			cmd := exec.CommandContext(ctx, goTool, "test", "-short", "./...")
			cmd.Dir = dir
			out, err := cmd.StdoutPipe()
			if err != nil {
				t.Fatal(err)
			}
			cmd.Stderr = cmd.Stdout
			if err := cmd.Start(); err != nil {
				t.Fatalf("go test in %s: %v", dir, err)
			}
			var lines []string
			sc := bufio.NewScanner(out)
			for sc.Scan() {
				lines = append(lines, sc.Text())
			}
			if err := cmd.Wait(); err != nil {
				for _, l := range lines {
					t.Log(l)
				}
				t.Fatalf("go test ./... in %s: %v", dir, err)
			}
		})
	}
}
