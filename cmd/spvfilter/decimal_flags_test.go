package main

import (
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// wholeFlags returns the key ("privacy simulate --seed") of every
// whole-number flag of the command tree under root, with the flag.
func wholeFlags(root *cobra.Command) map[string]*pflag.Flag {
	flags := map[string]*pflag.Flag{}
	walkCommands(root, func(c *cobra.Command) {
		c.LocalFlags().VisitAll(func(f *pflag.Flag) {
			if isWholeType(f.Value.Type()) {
				flags[strings.TrimPrefix(c.CommandPath()+" --"+f.Name, "spvfilter ")] = f
			}
		})
	})
	return flags
}

// TestWholeFlagsDecimal: every whole-number flag of the command tree
// (found by walking it: a new one is covered) reads its value in decimal
// digits, a leading zero as written (--seed 010 is --seed 10, as lab's
// --wallets 010 is 10), and refuses Go's other notations (0x10, 0o7,
// 0b1, 1_000). Before, pflag read them all: --seed 010 ran seed 8, and
// --tweak 08 was refused.
func TestWholeFlagsDecimal(t *testing.T) {
	rows := []struct {
		given, as string // as: the decimal value it is, or "" if refused
	}{
		{"010", "10"},
		{"08", "8"},
		{"0", "0"},
		{"00", "0"},
		{"+7", "7"},
		{"0x10", ""},
		{"0X10", ""},
		{"0o7", ""},
		{"0b1", ""},
		{"1_000", ""},
		{"--5", ""},
		{"", ""},
	}
	keys := wholeFlags(newRootCommand(&app{}))
	if len(keys) == 0 {
		t.Fatal("no whole-number flag found in the command tree")
	}
	for key := range keys {
		for _, r := range rows {
			t.Run(key+" "+r.given, func(t *testing.T) {
				f := wholeFlags(newRootCommand(&app{}))[key]
				err := f.Value.Set(r.given)
				if r.as == "" {
					if err == nil {
						t.Fatalf("Set(%q) = nil (value %s): want it refused", r.given, f.Value)
					}
					return
				}
				want := wholeFlags(newRootCommand(&app{}))[key]
				if werr := want.Value.Set(r.as); werr != nil {
					t.Fatalf("Set(%q): %v", r.as, werr)
				}
				if err != nil || f.Value.String() != want.Value.String() {
					t.Errorf("Set(%q): value %s, error %v; want %s, as Set(%q)", r.given, f.Value, err, want.Value, r.as)
				}
			})
		}
	}
}

// TestWholeFlagsDecimalRun: a seed or tweak with a leading zero runs as
// the decimal number written, and one in another notation is bad input
// that says how to write it.
func TestWholeFlagsDecimalRun(t *testing.T) {
	bloom := []string{"bloom", "new", "--elements", "3", "--fprate", "0.01", "--tweak"}
	same := []struct{ given, as string }{
		{"010", "10"},
		{"08", "8"},
	}
	for _, r := range same {
		t.Run("--tweak "+r.given, func(t *testing.T) {
			got, stderr, status := runCLI(t, "", append(bloom, r.given)...)
			want, _, _ := runCLI(t, "", append(bloom, r.as)...)
			if status != exitOK || got != want {
				t.Errorf("status %d, stdout %q, stderr %q: want status 0 and %q, as --tweak %s", status, got, stderr, want, r.as)
			}
		})
	}
	refused := []struct {
		args []string
		want string
	}{
		{append(bloom, "0x10"), `--tweak "0x10": want a whole number from 0 to 4294967295 (0x10 is 16: write it in decimal digits), such as --tweak 0`},
		{[]string{"demo", "--seed", "1_000"}, `--seed "1_000": want a whole number, at least 0 (1_000 is 1000: write it in decimal digits), such as --seed`},
	}
	for _, r := range refused {
		t.Run(strings.Join(r.args, " "), func(t *testing.T) {
			_, stderr, status := runCLI(t, "", r.args...)
			if status != exitBadInput || !strings.Contains(stderr, r.want) {
				t.Errorf("status %d, stderr %q: want status %d and %q", status, stderr, exitBadInput, r.want)
			}
		})
	}
}
