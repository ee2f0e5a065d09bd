package main

import (
	"flag"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/spf13/cobra"
)

var updateDocs = flag.Bool("update", false, "rewrite the reference in README.md from the command tree")

// The reference in README.md lies between these two lines.
const (
	referenceBegin = "<!-- Generated from the command tree by TestDocsUpToDate: do not edit by hand; regenerate with go generate ./cmd/spvfilter -->\n"
	referenceEnd   = "<!-- End of the generated reference. -->\n"
)

// TestDocsUpToDate fails when the reference in README.md differs from
// what the commands' help prints: the help text is the one source of the
// reference. With -update it rewrites the reference instead.
func TestDocsUpToDate(t *testing.T) {
	const file = "README.md"
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	i := strings.Index(doc, referenceBegin)
	j := strings.Index(doc, referenceEnd)
	if i < 0 || j < i {
		t.Fatalf("%s has no reference between %q and %q", file, referenceBegin, referenceEnd)
	}
	got := doc[i+len(referenceBegin) : j]
	want := reference(t)
	if *updateDocs {
		doc = doc[:i+len(referenceBegin)] + want + doc[j:]
		if err := os.WriteFile(file, []byte(doc), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	if got != want {
		t.Errorf("the reference in %s differs from the help text at line %d of the reference:\n  README: %q\n  help:   %q\nregenerate it with go generate ./cmd/spvfilter",
			file, firstDifferentLine(got, want)+1, lineAt(got, firstDifferentLine(got, want)), lineAt(want, firstDifferentLine(got, want)))
	}
}

// reference is the Markdown reference of every command: a list of the
// commands, then each command's --help output as the tool prints it.
func reference(t *testing.T) string {
	t.Helper()
	var cmds []*cobra.Command
	walkCommands(newRootCommand(&app{}), func(c *cobra.Command) {
		if c.HasParent() && (!c.IsAvailableCommand() || c.Name() == "help") {
			return
		}
		cmds = append(cmds, c)
	})
	var b strings.Builder
	b.WriteString("\n")
	for _, c := range cmds {
		fmt.Fprintf(&b, "- [`%s`](#%s): %s\n", c.CommandPath(), strings.ReplaceAll(c.CommandPath(), " ", "-"), c.Short)
	}
	for _, c := range cmds {
		args := append(strings.Fields(c.CommandPath())[1:], "--help")
		stdout, stderr, status := runCLIInProcess("", args...)
		if status != exitOK || stderr != "" {
			t.Fatalf("%s: status %d, stderr %q", strings.Join(args, " "), status, stderr)
		}
		fmt.Fprintf(&b, "\n### %s\n\n```text\n%s```\n", c.CommandPath(), stdout)
	}
	b.WriteString("\n")
	return b.String()
}

// runCLIInProcess runs a command line in this process, whatever binary
// the other tests run.
func runCLIInProcess(stdin string, args ...string) (stdout, stderr string, status int) {
	var out, errb strings.Builder
	status = run(args, strings.NewReader(stdin), &out, &errb)
	return out.String(), errb.String(), status
}

func firstDifferentLine(a, b string) int {
	la, lb := strings.Split(a, "\n"), strings.Split(b, "\n")
	for i := range min(len(la), len(lb)) {
		if la[i] != lb[i] {
			return i
		}
	}
	return min(len(la), len(lb))
}

func lineAt(s string, n int) string {
	if lines := strings.Split(s, "\n"); n < len(lines) {
		return lines[n]
	}
	return ""
}

// TestRegtestExamplesUseConnect: an example on regtest or simnet, which
// have no DNS seeds, gives its nodes with --connect, as the README does
// (privacy universe, which reads one node, names it with its own --peer).
func TestRegtestExamplesUseConnect(t *testing.T) {
	seen := 0
	walkCommands(newRootCommand(&app{}), func(c *cobra.Command) {
		for _, line := range strings.Split(c.Example, "\n") {
			if !strings.Contains(line, "--network regtest") && !strings.Contains(line, "--network simnet") {
				continue
			}
			seen++
			if strings.Contains(line, "--peer ") && c.CommandPath() != "spvfilter privacy universe" {
				t.Errorf("%s: example %q uses --peer on a network without DNS seeds: use --connect", c.CommandPath(), strings.TrimSpace(line))
			}
		}
	})
	if seen < 5 {
		t.Fatalf("only %d examples on regtest", seen)
	}
}
