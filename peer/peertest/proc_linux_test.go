//go:build linux

package peertest

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestNodeDiesWithTestProcess runs a child test process that starts a node
// and exits without stopping it, as after a panic or go test -timeout:
// the node must not outlive it.
func TestNodeDiesWithTestProcess(t *testing.T) {
	if os.Getenv("PEERTEST_ORPHAN_CHILD") == "1" {
		n, err := Start()
		if err != nil {
			fmt.Println("error:", err)
			os.Exit(3)
		}
		fmt.Printf("%d %s\n", n.cmd.Process.Pid, n.DataDir)
		os.Exit(0)
	}
	child := exec.Command(os.Args[0], "-test.run=^TestNodeDiesWithTestProcess$")
	child.Env = append(os.Environ(), "PEERTEST_ORPHAN_CHILD=1")
	out, err := child.Output()
	if err != nil {
		t.Fatalf("child: %v: %s", err, out)
	}
	var pid int
	var dir string
	if _, err := fmt.Sscan(string(out), &pid, &dir); err != nil {
		t.Fatalf("child output %q: %v", out, err)
	}
	defer os.RemoveAll(dir)
	for deadline := time.Now().Add(10 * time.Second); alive(pid); {
		if time.Now().After(deadline) {
			syscall.Kill(pid, syscall.SIGKILL)
			t.Fatalf("btcd (pid %d) outlived the test process that started it", pid)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// alive reports whether pid is a running process (a zombie is not).
func alive(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	// The state follows the parenthesized command name.
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	return i < 0 || i+2 >= len(s) || (s[i+2] != 'Z' && s[i+2] != 'X')
}

func TestRemoveOrphanDirs(t *testing.T) {
	// A process that has exited: its pid names no process (until reused).
	done := exec.Command("true")
	if err := done.Run(); err != nil {
		t.Skipf("cannot run true: %v", err)
	}
	mk := func(owner string) string {
		dir, err := os.MkdirTemp("", dirPattern)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { os.RemoveAll(dir) })
		if owner != "" {
			if err := os.WriteFile(filepath.Join(dir, ownerFile), []byte(owner), 0o600); err != nil {
				t.Fatal(err)
			}
		}
		return dir
	}
	orphan := mk(strconv.Itoa(done.Process.Pid))
	mine := mk(strconv.Itoa(os.Getpid()))
	noOwner := mk("")
	removeOrphanDirs()
	if _, err := os.Stat(orphan); !os.IsNotExist(err) {
		t.Errorf("the directory of a dead process was kept: %v", err)
	}
	for _, dir := range []string{mine, noOwner} {
		if _, err := os.Stat(dir); err != nil {
			t.Errorf("%s was removed: %v", dir, err)
		}
	}
}
