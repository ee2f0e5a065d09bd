package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
)

// printNext ends a text report with what to run next, one command a
// line, each as it runs in a shell (a comment after it says why).
func printNext(w io.Writer, commands []string) {
	if len(commands) == 0 {
		return
	}
	fmt.Fprintln(w, "\nnext:")
	for _, c := range commands {
		fmt.Fprintf(w, "  %s\n", c)
	}
}

// evaluateNext is, for a report of the capture file capture written to
// report, the scoring of it by privacy evaluate when the capture lies
// beside the labels of privacy simulate; none otherwise.
func evaluateNext(capture, report string) []string {
	if capture == "" || capture == "-" {
		return nil
	}
	labels := filepath.Join(filepath.Dir(capture), "labels.json")
	if st, err := os.Stat(labels); err != nil || !st.Mode().IsRegular() {
		return nil
	}
	return []string{"spvfilter privacy evaluate --labels " + shellWord(labels) + " --report " + report + "    # score it against the simulation's labels"}
}

// shellWord is s as one word of a shell command: as it is when it holds
// nothing a shell reads otherwise, else in single quotes.
func shellWord(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_./:@%+=,-") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
