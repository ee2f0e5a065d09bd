package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestNewcomerErrorsSayWhatWorks: mistakes a newcomer makes first (text
// that is no hex, hex read from a file, a block or transaction cut short,
// a block that announces more transactions than a block holds, a text
// file given as a capture) are refused naming the flag or argument (and
// the file read) and saying what would work. Before, hex read from @FILE
// or - was named by the flag alone, a character that is no hex got no
// word on what is wanted, a block or transaction cut short no word on
// where to get a whole one, a block's count was btcd's "too many
// transactions to fit into a block [count ...]", and a capture that is no
// JSON no word on what --capture takes, a --to below --from and a timeout
// of 0 no word on what would do.
func TestNewcomerErrorsSayWhatWorks(t *testing.T) {
	dir := t.TempDir()
	garbage := filepath.Join(dir, "garbage.txt")
	if err := os.WriteFile(garbage, []byte("garbage\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	const zeroFilter = "00000000000000000000"
	for _, tc := range []struct {
		name  string
		stdin string
		args  []string
		want  string // in standard error
	}{
		{"hex of a file", "", []string{"bloom", "match", "--filter", "@" + garbage, "00"},
			"spvfilter: --filter @" + garbage + ": invalid hex character 'g' at offset 0 (want hex digits, 0-9 and a-f)\n"},
		{"hex of standard input", "zz\n", []string{"bloom", "inspect", "--filter", "-"},
			"spvfilter: --filter (standard input): invalid hex character 'z' at offset 0 (want hex digits, 0-9 and a-f)\n"},
		{"a transaction argument that is no hex", "", []string{"send", "--connect", "127.0.0.1:1", "--network", "regtest", "zz"},
			"spvfilter: TX_HEX: invalid hex character 'z' at offset 0 (want hex digits, 0-9 and a-f)\n"},
		{"a block cut short", "", []string{"gcs", "build", "--block", "00", "--no-prevouts"},
			"spvfilter: --block: 1 byte, not a whole block: the data end too early, after byte 1 (give a whole block's hex, as getblock HASH 0 prints it)\n"},
		{"a transaction cut short", "", []string{"bloom", "tx", "--filter", zeroFilter, "--tx", "00"},
			"spvfilter: --tx: 1 byte is not a whole transaction: the data end too early, after byte 1 (give a whole transaction's hex, as getrawtransaction TXID prints it)\n"},
		{"a block of too many transactions", "", []string{"merkleblock", "build", "--block", strings.Repeat("ff", 89), "--txid", strings.Repeat("11", 32)},
			"spvfilter: --block: not a serialized block: it announces 18446744073709551615 transactions, more than a block can hold (at most 400001) (give a whole block's hex, as getblock HASH 0 prints it)\n"},
		{"a text file as the capture", "", []string{"privacy", "analyze", "--capture", garbage, "--universe", garbage},
			"spvfilter: --capture " + garbage + ", line 1: not JSON: 'g' at byte 1 cannot be there; want the JSON lines privacy capture writes, one record per line\n"},
		{"scan --to below --from", "", []string{"scan", "--connect", "127.0.0.1:1", "--network", "regtest", "--watch", "51", "--from", "10", "--to", "5"},
			"spvfilter: --to 5 is below --from 10: give --to 10 or above, or leave --to out for the tip\n"},
		{"lab --to below --from", "", []string{"lab", "--connect", "127.0.0.1:1", "--network", "regtest", "--from", "5", "--to", "4"},
			"spvfilter: --to 4 is below --from 5: give --to 5 or above, or leave --to out for the tip\n"},
		{"universe --to below --from", "", []string{"privacy", "universe", "--peer", "127.0.0.1:1", "--network", "regtest", "--out", filepath.Join(dir, "u.txt"), "--from", "5", "--to", "4"},
			"spvfilter: --to 4 is below --from 5: give --to 5 or above, or leave --to out for the tip\n"},
		{"scan --timeout 0s", "", []string{"scan", "--connect", "127.0.0.1:1", "--network", "regtest", "--watch", "51", "--timeout", "0s"},
			"spvfilter: --timeout 0s: want a duration above 0, such as --timeout 30s\n"},
		{"send --timeout below 0", "", []string{"send", "--connect", "127.0.0.1:1", "--network", "regtest", "--timeout", "-1s", "00"},
			"spvfilter: --timeout -1s: want a duration above 0, such as --timeout 30s\n"},
		{"capture --idle-timeout 0s", "", []string{"privacy", "capture", "--listen", "127.0.0.1:0", "--upstream", "127.0.0.1:1", "--network", "regtest", "--out", filepath.Join(dir, "c.jsonl"), "--idle-timeout", "0s"},
			"spvfilter: --idle-timeout 0s: want a duration above 0, such as --idle-timeout 10m\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, stderr, status := runCLI(t, tc.stdin, tc.args...)
			if status != exitBadInput || stderr != tc.want {
				t.Errorf("status %d, stderr\n %q\nwant 2 and\n %q", status, stderr, tc.want)
			}
		})
	}
}
