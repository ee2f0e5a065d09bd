package main

import (
	"encoding/json"
	"testing"
)

// TestBloomNewOverfillWarns: bloom new given more distinct elements than
// its --elements says so, with the rate the filter has and the --elements
// that keeps the rate asked; duplicates count once, and a filter within
// its size says nothing. Before, 3 elements in a filter sized for 1 (rate
// 0.24 where 0.01 was asked) carried no warning.
func TestBloomNewOverfillWarns(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
		want []string
	}{
		{"three in a filter for one", []string{"--elements", "1", "00", "11", "22"},
			[]string{"3 elements inserted into a filter sized for --elements 1: its false-positive rate is about 0.237, not the 0.01 of --fprate; give --elements 3 or more"}},
		{"three in a filter for two", []string{"--elements", "2", "00", "11", "22"},
			[]string{"3 elements inserted into a filter sized for --elements 2: its false-positive rate is about 0.0954, not the 0.01 of --fprate; give --elements 3 or more"}},
		{"one element thrice", []string{"--elements", "1", "00", "00", "00"}, []string{}},
		{"as many as sized for", []string{"--elements", "3", "00", "11", "22"}, []string{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args := append([]string{"--json", "bloom", "new", "--fprate", "0.01"}, tc.args...)
			stdout, stderr, status := runCLI(t, "", args...)
			if status != exitOK || stderr != "" {
				t.Fatalf("status %d, stderr %q; want 0 and none", status, stderr)
			}
			var got struct {
				Warnings []string `json:"warnings"`
			}
			if err := json.Unmarshal([]byte(stdout), &got); err != nil {
				t.Fatalf("%v in %q", err, stdout)
			}
			if len(got.Warnings) != len(tc.want) || (len(tc.want) > 0 && got.Warnings[0] != tc.want[0]) {
				t.Errorf("warnings %q, want %q", got.Warnings, tc.want)
			}
		})
	}
}
