package main

import (
	"bytes"
	"strings"
	"testing"
)

// runCLI runs the command line args with stdin and returns what it printed
// and its exit status.
func runCLI(t *testing.T, stdin string, args ...string) (stdout, stderr string, status int) {
	t.Helper()
	var out, errb bytes.Buffer
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
		{"unknown flag", []string{"version", "--nope"}, exitBadInput, "unknown flag"},
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
