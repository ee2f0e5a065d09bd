//go:build unix

package main

import (
	"context"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"
)

// recipeHeading introduces the README's regtest recipe.
const recipeHeading = "A node of your own on regtest"

// TestReadmeRegtestRecipe runs the README's regtest recipe as written,
// with bash, in a fresh directory that holds the module's files (linked)
// as a clone does, its two ports moved to free ones on 127.0.0.1: it
// builds btcd and btcctl from the pinned module and spvfilter, starts the
// node with its data under the directory, waits for its RPC port, mines 5
// blocks, scans them and stops the node. The scan must find the 5
// coinbase transactions, and the recipe must leave nothing but bin/ and
// regtest/, which .gitignore ignores. The README's install line must say
// where go install puts spvfilter.
func TestReadmeRegtestRecipe(t *testing.T) {
	root, readme := readmeOfModule(t)
	if !strings.Contains(readme, "`go install` puts `spvfilter` in `$(go env GOPATH)/bin`") {
		t.Error("the README does not say where go install puts spvfilter")
	}
	// A recipe that would write outside its directory, listen on every
	// interface, or never end is not run.
	recipe := shellBlockAfter(t, readme, recipeHeading)
	for _, want := range []string{"go build -o bin/ ", "--datadir=regtest", "--logdir=regtest", "--listen=127.0.0.1:", "--rpclisten=127.0.0.1:", "until bin/btcctl", "kill %1"} {
		if !strings.Contains(recipe, want) {
			t.Fatalf("the recipe lacks %q:\n%s", want, recipe)
		}
	}
	if strings.Contains(recipe, "--follow") {
		t.Fatalf("the recipe runs a scan that never ends:\n%s", recipe)
	}
	ignore, err := os.ReadFile(filepath.Join(root, ".gitignore"))
	if err != nil {
		t.Fatal(err)
	}
	for _, dir := range []string{"/bin/", "/regtest/"} {
		if !slices.Contains(strings.Split(string(ignore), "\n"), dir) {
			t.Errorf(".gitignore does not ignore %s, where the recipe writes", dir)
		}
	}
	// The node started again, as the recipe starts it: its chain is gone,
	// as the README says.
	if !strings.Contains(readme, "btcd deletes a regtest chain when it starts again") {
		t.Error("the README does not say that btcd deletes a regtest chain when it starts again")
	}
	count, _, ok := strings.Cut(lineWith(t, recipe, "until bin/btcctl"), " >/dev/null")
	if !ok {
		t.Fatal("the recipe's wait for the node has no >/dev/null")
	}
	again := "wait || true\n" + lineWith(t, recipe, "bin/btcd ") + "\n" + lineWith(t, recipe, "until bin/btcctl") + "\n" +
		`echo "height after a restart: $(` + strings.TrimPrefix(count, "until ") + `)"` + "\nkill $!\n"
	script := strings.NewReplacer("18444", freeLoopbackPort(t), "18334", freeLoopbackPort(t)).Replace(recipe + again)

	stdout, stderr, dir, linked := runReadmeScript(t, root, script)
	if !strings.Contains(stdout, "transactions found: 5") || !strings.Contains(stdout, "scanned 6 blocks (0..5)") {
		t.Errorf("the scan did not find the 5 coinbase transactions:\n%s\n%s", stdout, stderr)
	}
	if !strings.Contains(stdout, "height after a restart: 0\n") {
		t.Errorf("the node started again kept its chain, which the README says it deletes:\n%s", stdout)
	}
	checkOnlyBinAndRegtest(t, dir, linked)
}

// sendRecipeHeading introduces the README's recipe of a transaction for
// send on regtest.
const sendRecipeHeading = "A transaction for `send` on regtest"

// TestReadmeSendRecipe runs the README's recipe of a transaction for send
// on regtest as written, as TestReadmeRegtestRecipe runs the scan's, on
// free ports: a node mining to the P2SH address of OP_TRUE, a coinbase
// spent by a transaction btcctl builds and sed completes, sent with send,
// mined, and found by a scan. send must print the txid and accept it, and
// the scan find that txid in block 102 with the block's coinbase.
func TestReadmeSendRecipe(t *testing.T) {
	root, readme := readmeOfModule(t)
	recipe := shellBlockAfter(t, readme, sendRecipeHeading)
	for _, want := range []string{"go build -o bin/ ", "--datadir=regtest", "--listen=127.0.0.1:", "--rpclisten=127.0.0.1:", "until bin/btcctl", "bin/spvfilter send ", "kill %1"} {
		if !strings.Contains(recipe, want) {
			t.Fatalf("the recipe lacks %q:\n%s", want, recipe)
		}
	}
	script := strings.NewReplacer("18444", freeLoopbackPort(t), "18334", freeLoopbackPort(t)).Replace(recipe)
	stdout, stderr, dir, linked := runReadmeScript(t, root, script)
	txid, _, _ := strings.Cut(stdout, "\n")
	if len(txid) != 64 || strings.Trim(txid, "0123456789abcdef") != "" {
		t.Fatalf("send printed no txid first:\n%s\n%s", stdout, stderr)
	}
	if !strings.Contains(stdout, txid+"  height 102 ") || !strings.Contains(stdout, "transactions found: 2") {
		t.Errorf("the scan did not find %s in block 102 with its coinbase:\n%s\n%s", txid, stdout, stderr)
	}
	// The README says send warns that the acceptance rests on the one node.
	if !strings.Contains(stderr, "acceptance of "+txid+" is unconfirmed") {
		t.Errorf("send did not warn that its acceptance rests on one node:\n%s", stderr)
	}
	checkOnlyBinAndRegtest(t, dir, linked)
}

// runReadmeScript runs script with bash -e in a fresh directory that
// holds the module's files at root (linked) as a clone does, within 4
// minutes, its process group stopped at the end whatever happens; a
// script that fails fails the test with the tail of regtest/btcd.out. It
// returns the script's output, the directory and the names linked.
func runReadmeScript(t *testing.T, root, script string) (stdout, stderr, dir string, linked []string) {
	t.Helper()
	dir = t.TempDir()
	entries, err := os.ReadDir(root)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), ".") || e.Name() == "bin" || e.Name() == "regtest" {
			continue
		}
		if err := os.Symlink(filepath.Join(root, e.Name()), filepath.Join(dir, e.Name())); err != nil {
			t.Fatal(err)
		}
		linked = append(linked, e.Name())
	}
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", "-e", "-c", script)
	cmd.Dir = dir
	// The node runs in the script's process group: it is stopped with it
	// whatever happens to the script.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	// A node left running by a script that failed holds its output open:
	// Run returns anyway, and the group is stopped below.
	cmd.WaitDelay = 10 * time.Second
	var out, errb strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errb
	err = cmd.Run()
	if cmd.Process != nil {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
	if err != nil {
		log, _ := os.ReadFile(filepath.Join(dir, "regtest", "btcd.out"))
		t.Fatalf("the recipe failed: %v\nstdout:\n%s\nstderr:\n%s\nbtcd:\n%s", err, out.String(), errb.String(), tail(string(log), 20))
	}
	return out.String(), errb.String(), dir, linked
}

// checkOnlyBinAndRegtest fails the test if a recipe run in dir left
// anything there but the names linked, bin/ and regtest/.
func checkOnlyBinAndRegtest(t *testing.T, dir string, linked []string) {
	t.Helper()
	after, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range after {
		if !slices.Contains(linked, e.Name()) && e.Name() != "bin" && e.Name() != "regtest" {
			t.Errorf("the recipe left %s in the clone", e.Name())
		}
	}
}

// lineWith returns the line of script that begins with prefix.
func lineWith(t *testing.T, script, prefix string) string {
	t.Helper()
	for _, line := range strings.Split(script, "\n") {
		if strings.HasPrefix(line, prefix) {
			return line
		}
	}
	t.Fatalf("the recipe has no line beginning with %q:\n%s", prefix, script)
	return ""
}

// shellBlockAfter returns the first ```sh block after the line that holds
// heading.
func shellBlockAfter(t *testing.T, doc, heading string) string {
	t.Helper()
	i := strings.Index(doc, heading)
	if i < 0 {
		t.Fatalf("the README has no %q", heading)
	}
	start := strings.Index(doc[i:], "```sh\n")
	if start < 0 {
		t.Fatalf("no shell block after %q", heading)
	}
	block := doc[i+start+len("```sh\n"):]
	end := strings.Index(block, "```")
	if end < 0 {
		t.Fatalf("the shell block after %q does not end", heading)
	}
	return block[:end]
}

// freeLoopbackPort returns a port free on 127.0.0.1.
func freeLoopbackPort(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	_, port, _ := net.SplitHostPort(l.Addr().String())
	return port
}

// tail returns the last n lines of s.
func tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}

// TestSendHelpRecipeIsTested: send --help teaches how to make a
// transaction on regtest with the lines of the README's recipe, which
// TestReadmeSendRecipe runs: each command line the help shows is one of
// the recipe's, so that the help cannot drift from what is tested (before,
// send took a signed transaction and said nowhere how to make one).
func TestSendHelpRecipeIsTested(t *testing.T) {
	readme, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	recipe := strings.Split(shellBlockAfter(t, string(readme), sendRecipeHeading), "\n")
	help, _, status := runCLIInProcess("", "send", "--help")
	if status != exitOK {
		t.Fatalf("send --help: status %d", status)
	}
	_, section, ok := strings.Cut(help, "A transaction to try it with, on regtest")
	if !ok {
		t.Fatalf("send --help does not say how to make a transaction on regtest:\n%s", help)
	}
	section, _, _ = strings.Cut(section, "\nUsage:")
	var shown int
	for _, line := range strings.Split(section, "\n") {
		if !strings.HasPrefix(line, "  ") {
			continue
		}
		shown++
		if !slices.Contains(recipe, strings.TrimPrefix(line, "  ")) {
			t.Errorf("send --help shows a line the README's tested recipe lacks: %q", line)
		}
	}
	if shown < 5 || !strings.Contains(section, "bin/spvfilter send ") || !strings.Contains(section, "createrawtransaction") {
		t.Errorf("send --help shows %d lines of the recipe, want its build, sign and send:\n%s", shown, section)
	}
}

// readmeOfModule returns the module's root directory and its README, for
// a test that runs a recipe of it with bash (skipped where bash is not
// installed).
func readmeOfModule(t *testing.T) (root, readme string) {
	t.Helper()
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("the README's recipe is a bash script, and bash is not installed")
	}
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	return root, string(b)
}
