package main

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// runCLI runs the command line args with stdin and returns what it printed
// and its exit status. With SPVFILTER_TEST_BINARY set to a built spvfilter,
// the tests run that binary instead, to check a build (or an older one)
// against the same expectations.
func runCLI(t *testing.T, stdin string, args ...string) (stdout, stderr string, status int) {
	t.Helper()
	var out, errb bytes.Buffer
	if bin := os.Getenv("SPVFILTER_TEST_BINARY"); bin != "" {
		// A binary that hangs (an old capture relay serving forever)
		// fails the test instead of the suite.
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		cmd := exec.CommandContext(ctx, bin, args...)
		cmd.Stdin, cmd.Stdout, cmd.Stderr = strings.NewReader(stdin), &out, &errb
		err := cmd.Run()
		var exit *exec.ExitError
		if err != nil && !errors.As(err, &exit) {
			t.Fatalf("running %s: %v", bin, err)
		}
		return out.String(), errb.String(), cmd.ProcessState.ExitCode()
	}
	status = run(args, strings.NewReader(stdin), &out, &errb)
	return out.String(), errb.String(), status
}

func TestRootErrors(t *testing.T) {
	tests := []struct {
		name   string
		args   []string
		status int
		stderr string
	}{
		{"unknown command", []string{"frobnicate"}, exitBadInput, "unknown command"},
		{"unknown flag", []string{"version", "--nope"}, exitBadInput, "--nope: no such flag"},
		{"extra argument", []string{"version", "x"}, exitBadInput, "version"},
		{"unknown subcommand", []string{"bloom", "frob"}, exitBadInput, "unknown command"},
		{"required flag", []string{"gcs", "header", "--filter", "00"}, exitBadInput, "prev-header"},
		{"version", []string{"version"}, exitOK, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, stderr, status := runCLI(t, "", tt.args...)
			if status != tt.status {
				t.Fatalf("status %d, want %d (stderr %q)", status, tt.status, stderr)
			}
			if !strings.Contains(stderr, tt.stderr) {
				t.Fatalf("stderr %q does not mention %q", stderr, tt.stderr)
			}
			if strings.Count(stderr, "\n") > 1 {
				t.Fatalf("error spans several lines: %q", stderr)
			}
		})
	}
}

func TestVersionJSON(t *testing.T) {
	stdout, _, status := runCLI(t, "", "version", "--json")
	if status != exitOK || !strings.Contains(stdout, `"version"`) {
		t.Fatalf("status %d, stdout %q", status, stdout)
	}
}

func TestDecodeHexArgument(t *testing.T) {
	a := &app{stdin: strings.NewReader(" 0a0B\n")}
	// A file named as a value without its @.
	written := filepath.Join(t.TempDir(), "tx")
	if err := os.WriteFile(written, []byte("00"), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		arg     string
		want    string
		wantErr string
	}{
		{"00ff", "\x00\xff", ""},
		{"0x00ff", "\x00\xff", ""},
		{"-", "\x0a\x0b", ""},
		{"abc", "", "odd number"},
		{"zz", "", "invalid hex character 'z' at offset 0"},
		{"", "", "empty hex"},
		{"@/nonexistent/file", "", "no such file"},
		{"abz", "", "invalid hex character 'z' at offset 2"},
		{"./tx.bin", "", "invalid hex character '.' at offset 0 (want hex digits; a file is read with @FILE, such as @./tx.bin)"},
		{"tx.hex", "", "invalid hex character 't' at offset 0 (want hex digits; a file is read with @FILE, such as @tx.hex)"},
		{written, "", "invalid hex character '/' at offset 0 (a file " + written + " exists: give @" + written + " to read it)"},
	}
	for _, tt := range tests {
		got, err := a.readHexArg("filter", tt.arg)
		if tt.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) || !isUsageError(err) {
				t.Errorf("%q: error %v, want a bad-input error containing %q", tt.arg, err, tt.wantErr)
			}
			continue
		}
		if err != nil || string(got) != tt.want {
			t.Errorf("%q: got %x, %v; want %x", tt.arg, got, err, tt.want)
		}
	}
}

// TestStdinFeedsOneArgument: a second "-" is bad input naming the
// argument, whichever command reads it.
func TestStdinFeedsOneArgument(t *testing.T) {
	a := &app{stdin: strings.NewReader("00ff")}
	if _, err := a.readHexArg("--filter", "-"); err != nil {
		t.Fatal(err)
	}
	_, err := a.readHexArg("element 1", "-")
	if err == nil || !isUsageError(err) || !strings.Contains(err.Error(), "element 1: standard input") {
		t.Fatalf("second read of standard input: %v", err)
	}
	_, stderr, status := runCLI(t, "00", "gcs", "match", "--filter", "-", "--block-hash",
		"000000006c02c8ea6e4ff69651f7fcde348fb9d557a06e6957b65552002a7820", "-")
	if status != exitBadInput || !strings.Contains(stderr, "standard input") {
		t.Fatalf("gcs match with two -: status %d, %q", status, stderr)
	}
	_, stderr, status = runCLI(t, "03614e9b050000000000000001", "privacy", "analyze", "--filter", "-", "--universe", "-")
	if status != exitBadInput || !strings.Contains(stderr, "--universe: standard input") {
		t.Fatalf("privacy analyze with two -: status %d, %q", status, stderr)
	}
}

func TestReadItems(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) string {
		t.Helper()
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	list := write("list.txt", "# header\r\naa\r\n\r\n  bb  # note\n#cc\ndd")
	empty := write("empty.txt", "\n# only a comment\n\n")
	a := &app{stdin: strings.NewReader("ee\nff\n")}
	items, err := a.readItems("element", []string{"11", "@" + list, "-"})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, it := range items {
		got = append(got, it.text+"="+it.where)
	}
	want := []string{
		"11=element 1",
		"aa=element 2 (@" + list + " line 2)",
		"bb=element 2 (@" + list + " line 4)",
		"dd=element 2 (@" + list + " line 6)",
		"ee=element 3 (standard input line 1)",
		"ff=element 3 (standard input line 2)",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("items\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	for _, tt := range []struct {
		arg, wantErr string
	}{
		{"@" + empty, "holds no items"},
		{"@" + dir, "is a directory"},
		{"@" + filepath.Join(dir, "missing"), "no such file"},
	} {
		_, err := (&app{}).readItems("element", []string{tt.arg})
		if err == nil || !isUsageError(err) || !strings.Contains(err.Error(), tt.wantErr) {
			t.Errorf("%s: %v, want bad input with %q", tt.arg, err, tt.wantErr)
		}
	}

	// A single value: one line, comments and blank lines aside.
	one := write("one.hex", "# a filter\r\n\r\n00ff\r\n")
	if b, err := a.readHexArg("--filter", "@"+one); err != nil || string(b) != "\x00\xff" {
		t.Fatalf("single value: %x, %v", b, err)
	}
	for _, tt := range []struct{ arg, wantErr string }{
		{"@" + list, "has 3 lines (first at 2, second at 4) but --filter takes one value"},
		{"@" + empty, "is empty"},
		{"@" + dir, "--filter @" + dir + ": a directory, not a file"},
	} {
		_, err := (&app{}).readHexArg("--filter", tt.arg)
		if err == nil || !isUsageError(err) || !strings.Contains(err.Error(), tt.wantErr) {
			t.Errorf("%s: %v, want bad input with %q", tt.arg, err, tt.wantErr)
		}
	}
}

func TestParsePeerAddr(t *testing.T) {
	tests := []struct {
		addr   string
		peer   bool // valid as a peer
		listen bool // valid to listen on
	}{
		{"127.0.0.1:8333", true, true},
		{"[::1]:18444", true, true},
		{"localhost:18444", true, true},
		{"node-1.example.org:8333", true, true},
		{"10.0.0.1:65535", true, true},
		{":8333", false, true},
		{"127.0.0.1:0", false, true},
		{"127.0.0.1", false, false},
		{"127.0.0.1:", false, false},
		{"127.0.0.1:65536", false, false},
		{"127.0.0.1:http", false, false},
		{"::1:8333", false, false},
		{"bad_host:8333", false, false},
		{"-lead.example:8333", false, false},
		{"", false, false},
	}
	for _, tt := range tests {
		_, err := parsePeerAddr("--peer", tt.addr)
		if (err == nil) != tt.peer || err != nil && (!isUsageError(err) || !strings.Contains(err.Error(), "HOST:PORT")) {
			t.Errorf("parsePeerAddr(%q) = %v, want valid %t", tt.addr, err, tt.peer)
		}
		_, err = parseListenAddr("--listen", tt.addr)
		if (err == nil) != tt.listen {
			t.Errorf("parseListenAddr(%q) = %v, want valid %t", tt.addr, err, tt.listen)
		}
	}
}

func TestLookupNetwork(t *testing.T) {
	for _, n := range knownNetworks {
		p, err := lookupNetwork(n.name)
		if err != nil || p != n.params || p.Name != n.name {
			t.Errorf("%s: %v, %v", n.name, p, err)
		}
	}
	_, err := lookupNetwork("testnet")
	if err == nil || !isUsageError(err) || !strings.Contains(err.Error(), networkNames()) {
		t.Fatalf("unknown network: %v", err)
	}
	if networkNames() != "mainnet, testnet3, testnet4, signet, simnet, regtest" {
		t.Fatalf("networks %q", networkNames())
	}
}

// TestRequiredFlagsMarked: every required flag of every command says
// "(required)" in its help, exactly once (its own words may say it,
// "(required; ...)"), and the error of its absence says it once.
func TestRequiredFlagsMarked(t *testing.T) {
	root := newRootCommand(&app{stdin: strings.NewReader(""), stdout: io.Discard, stderr: io.Discard})
	required := 0
	walkCommands(root, func(c *cobra.Command) {
		c.Flags().VisitAll(func(f *pflag.Flag) {
			if len(f.Annotations[cobra.BashCompOneRequiredFlag]) == 0 {
				if strings.Contains(f.Usage, "(required") {
					t.Errorf("%s --%s: optional flag marked required", c.CommandPath(), f.Name)
				}
				return
			}
			required++
			if strings.Count(f.Usage, "(required") != 1 {
				t.Errorf("%s --%s: usage %q", c.CommandPath(), f.Name, f.Usage)
			}
		})
	})
	_, stderr, _ := runCLIInProcess("", "privacy", "fetches", "--index", "x")
	if want := `--capture is required: capture FILE written by "privacy capture"; repeat it for`; !strings.Contains(stderr, want) || strings.Count(stderr, "required") != 1 {
		t.Errorf("privacy fetches without --capture: %q, want it to hold %q and say required once", stderr, want)
	}
	if required < 15 {
		t.Fatalf("only %d required flags found", required)
	}
	help, _, _ := runCLI(t, "", "privacy", "analyze", "--help")
	if !regexp.MustCompile(`--universe FILE .*\(required\)`).MatchString(help) {
		t.Fatalf("privacy analyze help does not mark --universe required:\n%s", help)
	}
}

func TestVersionFlag(t *testing.T) {
	stdout, _, status := runCLI(t, "", "--version")
	if status != exitOK || stdout != "spvfilter "+buildVersion()+"\n" {
		t.Fatalf("status %d, %q", status, stdout)
	}
	same, _, _ := runCLI(t, "", "version")
	if same != stdout {
		t.Fatalf("version command %q, --version %q", same, stdout)
	}
}

// TestJSONRequested: the error format follows the command line's --json
// even when parsing failed before it.
func TestJSONRequested(t *testing.T) {
	for _, tt := range []struct {
		args []string
		want bool
	}{
		{[]string{"bloom", "--json"}, true},
		{[]string{"--json=true", "x"}, true},
		{[]string{"--json", "--json=false"}, false},
		{[]string{"--", "--json"}, false},
		{[]string{"bloom"}, false},
	} {
		if got := jsonRequested(tt.args); got != tt.want {
			t.Errorf("%q: %t", tt.args, got)
		}
	}
	_, stderr, status := runCLI(t, "", "bloom", "new", "--elements", "x", "--json")
	if status != exitBadInput || !strings.HasPrefix(stderr, `{"error":"--elements \"x\": want a whole number`) || !strings.HasSuffix(stderr, `,"exit_code":2}`+"\n") {
		t.Fatalf("status %d, %q", status, stderr)
	}
}

// TestRootHelpNamesCommands: spvfilter --help, the first page a newcomer
// reads, names every command that does the tool's work, so that none is
// found only in cobra's list.
func TestRootHelpNamesCommands(t *testing.T) {
	root := newRootCommand(&app{stdout: io.Discard, stderr: io.Discard})
	for _, c := range root.Commands() {
		switch c.Name() {
		case "completion", "help", "version":
			continue
		}
		if !regexp.MustCompile(`\b` + c.Name() + `\b`).MatchString(root.Long) {
			t.Errorf("spvfilter --help does not name %q", c.Name())
		}
	}
}
