package main

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestZeroMeansNone: a flag whose default 0 means "none" while its other
// values lie in a range says both in its help, takes an explicit 0 as the
// default, and refuses a value outside the range as bad input naming the
// flag and both the 0 and the range (privacy fetches --cover-target 0 was
// taken though its help gave (0, 1); privacy model --monte-carlo 1 was
// refused with "must be at least 2" though its help gave no bound and its
// error for -1 said "at least 0").
func TestZeroMeansNone(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "missing.jsonl")
	fetches := []string{"privacy", "fetches", "--capture", missing, "--index", missing}
	scan := []string{"scan", "--connect", "127.0.0.1:1", "--network", "regtest", "--watch", "51", "--datadir", t.TempDir()}
	model := []string{"privacy", "model"}
	rows := []struct {
		name   string
		flag   string   // the flag, named in its help and its errors
		help   []string // the command whose --help documents it
		args   []string // the command without the flag
		value  string
		status int    // exitOK, or exitBadInput when refused
		stderr string // must appear on standard error ("" for none)
	}{
		{name: "fetches, 0", flag: "--cover-target", help: fetches[:2], args: fetches, value: "0", status: exitBadInput, stderr: "--capture " + missing + ": no such file"},
		{name: "fetches, 1", flag: "--cover-target", help: fetches[:2], args: fetches, value: "1", status: exitBadInput, stderr: "--cover-target 1: want 0 (the default) for none, or a probability in (0, 1)"},
		{name: "fetches, below 0", flag: "--cover-target", help: fetches[:2], args: fetches, value: "-0.5", status: exitBadInput, stderr: "--cover-target -0.5: want 0 (the default) for none, or a probability in (0, 1)"},
		{name: "fetches, NaN", flag: "--cover-target", help: fetches[:2], args: fetches, value: "NaN", status: exitBadInput, stderr: "--cover-target NaN: want 0 (the default) for none"},
		{name: "model, 0 trials", flag: "--monte-carlo", help: model, args: model, value: "0", status: exitOK},
		{name: "model, 1 trial", flag: "--monte-carlo", help: model, args: model, value: "1", status: exitBadInput, stderr: "--monte-carlo 1: want 0 (the default) for none, or at least 2 trials"},
		{name: "model, -1 trials", flag: "--monte-carlo", help: model, args: model, value: "-1", status: exitBadInput, stderr: "--monte-carlo -1: want 0 (the default) for none, or at least 2 trials"},
		{name: "scan, a privacy target of 1", flag: "--privacy-target", help: scan[:1], args: scan, value: "1", status: exitBadInput, stderr: "--privacy-target 1: want a probability in (0, 1), or 0 (the default) for none, such as --privacy-target 0.5"},
	}
	for _, r := range rows {
		t.Run(r.name, func(t *testing.T) {
			help, _, status := runCLI(t, "", append(append([]string{}, r.help...), "--help")...)
			if status != exitOK {
				t.Fatalf("%v --help: status %d", r.help, status)
			}
			line := ""
			for _, l := range strings.Split(help, "\n") {
				if strings.HasPrefix(strings.TrimSpace(l), r.flag+" ") {
					line = l
				}
			}
			if !strings.Contains(line, "0, the default, for none; else ") {
				t.Errorf("the help of %s does not say what 0 means and what else it takes: %q", r.flag, line)
			}
			_, stderr, status := runCLI(t, "", append(append([]string{}, r.args...), r.flag, r.value)...)
			if status != r.status {
				t.Fatalf("status %d, want %d; stderr %q", status, r.status, stderr)
			}
			if !strings.Contains(stderr, r.stderr) {
				t.Errorf("stderr %q lacks %q", stderr, r.stderr)
			}
			if r.value == "0" && strings.Contains(stderr, r.flag) {
				t.Errorf("%s 0, the default, refused: %q", r.flag, stderr)
			}
		})
	}
}
