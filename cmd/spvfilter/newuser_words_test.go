package main

import "testing"

// TestNewUserErrorsTeach: what a first-time user of demo and of the
// commands that take their input by flags gets wrong is refused saying
// which number is wanted and how to give the input. Before, demo's
// --universe-size error read "want --used 20 to 100000000", as if --used
// were wrong, --used's "want 0 to --keys 10", and an argument given to
// such a command got no word on the flags that take it, and privacy
// analyze's --client, --link or --intersect without --capture was told
// "--intersect, --link and --client need --capture", whichever was given.
func TestNewUserErrorsTeach(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
		want string // standard error
	}{
		{"demo universe below the used", []string{"demo", "--universe-size", "5"},
			"spvfilter: --universe-size 5: want 20, the --used, to 100000000 (the universe holds the used addresses)\n"},
		{"demo universe above the most", []string{"demo", "--used", "3", "--universe-size", "100000001"},
			"spvfilter: --universe-size 100000001: want 3, the --used, to 100000000 (the universe holds the used addresses)\n"},
		{"demo used beyond keys", []string{"demo", "--used", "300", "--keys", "10"},
			"spvfilter: --used 300: want 0 to 10, the --keys (the used addresses are some of the wallet's keys)\n"},
		{"bloom tx given the transaction as an argument", []string{"bloom", "tx", "--filter", "00000000000000000000", "0100"},
			`spvfilter: unexpected argument "0100": spvfilter bloom tx takes no arguments, its input comes by flags: spvfilter bloom tx --filter HEX --tx HEX [flags]` + "\n"},
		{"gcs build given the block as an argument", []string{"gcs", "build", "00"},
			`spvfilter: unexpected argument "00": spvfilter gcs build takes no arguments, its input comes by flags: spvfilter gcs build --block HEX (--prevout-script HEX ... | --no-prevouts) [--prev-header HEX] [flags]` + "\n"},
		{"analyze --client without --capture", []string{"privacy", "analyze", "--filter", "03a9ad10050000000000000000", "--universe", "-", "--client", "1.2.3.4"},
			"spvfilter: --client 1.2.3.4 needs --capture: it keeps sessions of a capture (--filter filters are one wallet's, always intersected)\n"},
		{"analyze --link without --capture", []string{"privacy", "analyze", "--filter", "03a9ad10050000000000000000", "--universe", "-", "--link"},
			"spvfilter: --link needs --capture: it compares the sessions of a capture (--filter filters are one wallet's, always intersected)\n"},
		{"analyze --intersect without --capture", []string{"privacy", "analyze", "--filter", "03a9ad10050000000000000000", "--universe", "-", "--intersect"},
			"spvfilter: --intersect needs --capture: --filter filters are always intersected, as one wallet's\n"},
		{"a command of flags alone says no more", []string{"demo", "x"},
			`spvfilter: unexpected argument "x": spvfilter demo takes no arguments` + "\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, stderr, status := runCLI(t, "", tc.args...)
			if status != exitBadInput || stderr != tc.want {
				t.Errorf("status %d, stderr\n %q\nwant 2 and\n %q", status, stderr, tc.want)
			}
		})
	}
}
