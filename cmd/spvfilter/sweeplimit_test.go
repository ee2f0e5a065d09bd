package main

import (
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/spvfilter/spvfilter/privacy/model"
)

// TestSweepTooLong: a --sweep that gives more values than a sweep takes
// is refused naming --sweep, the range at fault and a step for it with
// which the sweep fits; the sweep with that step is one the model takes,
// of the size said. Before, the refusal ended "more than 10000 values"
// and left the user to find a step.
func TestSweepTooLong(t *testing.T) {
	rows := []struct {
		sweep string
		want  string // the range with the step suggested
		count int    // the values of the sweep with it
	}{
		{"addresses=1..100000", "1..100000:10", 10000},
		{"addresses=1..100000:1", "1..100000:10", 10000},
		{"addresses=1..10001", "1..10001:2", 5001},
		{"fprate=0.00001..0.5:0.00001", "0.00001..0.5:0.00005", 10000},
		{"fprate=0.0001..0.5:x1.0001", "0.0001..0.5:x1.001", 8522},
		{"addresses=1..5,7..30000", "7..30000:5", 6004},
		{"filters=1..20000,20001..20005", "1..20000:5", 4005},
	}
	step := regexp.MustCompile(`give the range a longer step, as (\S+) \((\d+) values in all\)`)
	for _, r := range rows {
		t.Run(r.sweep, func(t *testing.T) {
			stdout, stderr, status := runCLI(t, "", "privacy", "model", "--sweep", r.sweep)
			if status != exitBadInput || stdout != "" {
				t.Fatalf("status %d, stdout %q, stderr %q: want %d", status, stdout, stderr, exitBadInput)
			}
			want := fmt.Sprintf("--sweep %q: it gives ", r.sweep)
			if !strings.HasPrefix(stderr, "spvfilter: "+want) || !strings.Contains(stderr, "more than the 10000 a sweep takes") {
				t.Errorf("stderr %q: want it to begin %q and name the limit", stderr, want)
			}
			m := step.FindStringSubmatch(stderr)
			if m == nil || m[1] != r.want || m[2] != fmt.Sprint(r.count) {
				t.Fatalf("stderr %q: want the step %s (%d values)", stderr, r.want, r.count)
			}
			// The sweep with the range given that step fits.
			name, list, _ := strings.Cut(r.sweep, "=")
			items := strings.Split(list, ",")
			for i, it := range items {
				if strings.HasPrefix(r.want, strings.SplitN(it, ":", 2)[0]+":") {
					items[i] = r.want
				}
			}
			s, err := model.ParseSweep(name + "=" + strings.Join(items, ","))
			if err != nil || len(s.Values) != r.count || len(s.Values) > model.MaxSweepPoints {
				t.Errorf("the sweep with %s: %d values, %v; want %d", r.want, len(s.Values), err, r.count)
			}
		})
	}
}
