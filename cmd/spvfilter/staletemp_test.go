package main

import (
	"strings"
	"testing"
)

// TestParseTemp: the names an output's hidden files are given are read
// back as that output's, with the process id they carry, and nothing
// else is: not another output's, not a name of the old form without a
// process id, not a process id of 0 or beyond 2^31-1 (signalling 0
// would signal the whole process group).
func TestParseTemp(t *testing.T) {
	for _, tc := range []struct {
		base, name string
		kind       tempKind
		pid        int
	}{
		{"plot.svg", ".plot.svg.spvfilter-4242.1234567.svg", tempWritten, 4242},
		{"plot.svg", ".plot.svg.old.spvfilter-4242.99", tempEarlier, 4242},
		{"a", ".a.spvfilter-7.1", tempWritten, 7},
		{"a", ".a.old.spvfilter-7.1", tempEarlier, 7},
		{"x.5", ".x.5.spvfilter-7.1.5", tempWritten, 7},
		{"plot.svg", ".plot.svg.spvfilter-2147483647.1.svg", tempWritten, 2147483647},
		{"plot.svg", "plot.svg", notTemp, 0},
		{"plot.svg", ".plot.svg.1234567.svg", notTemp, 0},       // the old form, no process id
		{"plot.svg", ".plot.svg.old.1234567", notTemp, 0},       // the old form
		{"plot.svg", ".plot.svg.spvfilter-0.1.svg", notTemp, 0}, // no process 0
		{"plot.svg", ".plot.svg.spvfilter-2147483648.1.svg", notTemp, 0},
		{"plot.svg", ".plot.svg.spvfilter-+5.1.svg", notTemp, 0},
		{"plot.svg", ".plot.svg.spvfilter-5.1.png", notTemp, 0}, // another extension
		{"plot.svg", ".plot.svg.spvfilter-5.1.2.svg", notTemp, 0},
		{"plot.svg", ".plot.svg.spvfilter-5..svg", notTemp, 0},
		{"plot.svg", ".plot.svg.old.spvfilter-5.x", notTemp, 0},
		{"plot.svg", ".plot.svg.spvfilter-5.1.svg.old.spvfilter-5.1", notTemp, 0},
		{"a", ".a.old.spvfilter-7.1.old", notTemp, 0}, // a.old's
		{"a", ".a.5.spvfilter-7.1.5", notTemp, 0},     // a.5's
		{"a", ".ab.spvfilter-7.1", notTemp, 0},
		{"plot.svg", ".spvfilter-probe-123", notTemp, 0},
		{"report", ".report.2024.1", notTemp, 0},         // the user's own, unmarked
		{"plot.svg", ".plot.svg.4242.1.svg", notTemp, 0}, // unmarked
	} {
		kind, pid := parseTemp(tc.base, tc.name)
		if kind != tc.kind || pid != tc.pid {
			t.Errorf("parseTemp(%q, %q) = %d, %d; want %d, %d", tc.base, tc.name, kind, pid, tc.kind, tc.pid)
		}
	}
	// The names tempPattern makes, its * made a number as
	// os.CreateTemp makes it, read back as made.
	for _, base := range []string{"plot.svg", "a", "x.5", "labels.json"} {
		for _, kind := range []tempKind{tempWritten, tempEarlier} {
			name := strings.Replace(tempPattern(base, kind, 31337), "*", "2718281828", 1)
			if gotKind, pid := parseTemp(base, name); gotKind != kind || pid != 31337 {
				t.Errorf("%q, made for %q: read as %d, %d; want %d, 31337", name, base, gotKind, pid, kind)
			}
		}
	}
}

// writePlot writes data to path through o as --plot does, the pending
// file made and written, and returns the commit's error.
func writePlot(t *testing.T, o *outputs, path, data string) error {
	t.Helper()
	p, err := o.create("--plot", path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.Write([]byte(data)); err != nil {
		t.Fatal(err)
	}
	return o.commit(p)
}
