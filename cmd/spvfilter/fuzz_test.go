package main

import (
	"strings"
	"testing"

	"github.com/btcsuite/btcd/chaincfg"
)

// FuzzParseWatch feeds arbitrary --watch values (literal, and as a file's
// lines through standard input): each is parsed or refused as bad input,
// never a panic and never another kind of error.
func FuzzParseWatch(f *testing.F) {
	for _, s := range []string{
		"bcrt1qw508d6qejxtdg4y5r3zarvary0c5xw7kygt080",
		"76a914000000000000000000000000000000000000000088ac",
		strings.Repeat("ab", 32) + ":0",
		strings.Repeat("ab", 32) + ":4294967295:bcrt1qw508d6qejxtdg4y5r3zarvary0c5xw7kygt080",
		strings.Repeat("ab", 32) + ":1:0014" + strings.Repeat("00", 20),
		strings.Repeat("ab", 32) + ":-1", ":", "0x51", "zz", "",
	} {
		f.Add(s, "51\n# comment\n\r\n"+s+"\n")
	}
	f.Fuzz(func(t *testing.T, value, stdin string) {
		for _, values := range [][]string{{value}, {"-"}} {
			a := &app{stdin: strings.NewReader(stdin)}
			items, err := a.parseWatch(values, &chaincfg.RegressionNetParams)
			if err != nil {
				if !isUsageError(err) {
					t.Fatalf("%q: error %v is not bad input", values, err)
				}
				continue
			}
			for _, it := range items {
				if len(it.item.Script) == 0 && !it.item.IsOutPoint {
					t.Fatalf("%q: a script item without a script", values)
				}
			}
		}
	})
}
