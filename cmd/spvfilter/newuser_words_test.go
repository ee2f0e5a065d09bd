package main

import "testing"

// TestNewUserErrorsTeach: what a first-time user of demo and of the
// commands that take their input by flags gets wrong is refused saying
// which number is wanted and how to give the input. Before, demo's
// --universe-size error read "want --used 20 to 100000000", as if --used
// were wrong, --used's "want 0 to --keys 10", and an argument given to
// such a command got no word on the flags that take it, and privacy
// analyze's --client, --link or --intersect without --capture was told
// "--intersect, --link and --client need --capture", whichever was given,
// and a --prev-header of "0" or "00", which the help called "zero for the
// genesis block", no word on the 64 zeros the zero hash takes, and a
// whole number written as 1e6 to a flag of whole numbers no word on
// writing it in digits.
func TestNewUserErrorsTeach(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
		want string // standard error
	}{
		{"demo universe below the used", []string{"demo", "--universe-size", "5"},
			"spvfilter: --universe-size 5: want a whole number from 20, the --used, to 100000000 (the universe holds the used addresses), such as --universe-size 1000000\n"},
		{"demo universe above the most", []string{"demo", "--used", "3", "--universe-size", "100000001"},
			"spvfilter: --universe-size 100000001: want a whole number from 3, the --used, to 100000000 (the universe holds the used addresses), such as --universe-size 1000000\n"},
		{"demo used beyond keys", []string{"demo", "--used", "300", "--keys", "10"},
			"spvfilter: --used 300: want a whole number from 0 to 10, the --keys (the used addresses are some of the wallet's keys), such as --used 10\n"},
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
		{"gcs header --prev-header 0 for the genesis block", []string{"gcs", "header", "--filter", "017fa880", "--prev-header", "0"},
			"spvfilter: --prev-header: odd number of hex digits (1): a hash has 64 hex digits (32 bytes, as RPC shows it); the zero hash (the genesis block's previous header) is 64 zeros\n"},
		{"gcs header --prev-header 00", []string{"gcs", "header", "--filter", "017fa880", "--prev-header", "00"},
			"spvfilter: --prev-header: 1 byte, a hash has 32 (64 hex digits, as RPC shows it); the zero hash (the genesis block's previous header) is 64 zeros\n"},
		{"a short hash of other digits gets no word on zeros", []string{"gcs", "header", "--filter", "017fa880", "--prev-header", "12"},
			"spvfilter: --prev-header: 1 byte, a hash has 32 (64 hex digits, as RPC shows it)\n"},
		{"a whole number in exponent form", []string{"demo", "--universe-size", "1e6"},
			"spvfilter: --universe-size \"1e6\": want a whole number from the --used to 100000000 (1e6 is 1000000: write it in digits), such as --universe-size 1000000\n"},
		{"a whole number with a point", []string{"privacy", "model", "--universe-size", "3.2e7"},
			"spvfilter: --universe-size \"3.2e7\": want a whole number, at least the --addresses (3.2e7 is 32000000: write it in digits), such as --universe-size 10000000\n"},
		{"a height in exponent form", []string{"scan", "--connect", "127.0.0.1:1", "--network", "regtest", "--watch", "51", "--from", "1e5"},
			"spvfilter: --from \"1e5\": want a height, a whole number from 0 to 2147483647 (1e5 is 100000: write it in digits), such as --from 0\n"},
		{"a fraction gets no word on digits", []string{"demo", "--keys", "2.5"},
			"spvfilter: --keys \"2.5\": want a whole number from 1 to 100000, such as --keys 266\n"},
		{"digits beyond the type get no word on digits", []string{"privacy", "model", "--addresses", "5000000000"},
			"spvfilter: --addresses \"5000000000\": want a whole number from 1 to 4294967295, such as --addresses 100\n"},
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
