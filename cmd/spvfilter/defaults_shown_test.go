package main

import (
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// TestEveryFlagShowsItsDefault: the help line of every flag that takes a
// value says what the flag does when it is not given: pflag's "(default
// X)" for a default other than zero, or the flag's own words ("default",
// "(required)") where the default is zero or empty, which pflag does not
// print (privacy simulate --extra-elements, whose default 0 its help left
// to be guessed from "(bitcoinj: 100)", and scan --from, whose 0 is the
// genesis block). A boolean flag is off unless given.
func TestEveryFlagShowsItsDefault(t *testing.T) {
	walkCommands(newRootCommand(&app{}), func(c *cobra.Command) {
		c.LocalFlags().VisitAll(func(f *pflag.Flag) {
			if f.Hidden || f.Value.Type() == "bool" {
				return
			}
			line := flagHelpLine(c, f)
			if !strings.Contains(line, "default") && !strings.Contains(line, "(required") {
				t.Errorf("%s --%s: its help does not say its default: %q", c.CommandPath(), f.Name, strings.TrimSpace(line))
			}
		})
	})
}

// flagHelpLine returns the help line of f as c's --help prints it, on one
// line.
func flagHelpLine(c *cobra.Command, f *pflag.Flag) string {
	fs := pflag.NewFlagSet(c.Name(), pflag.ContinueOnError)
	fs.AddFlag(f)
	markRequired(f)
	return strings.ReplaceAll(fs.FlagUsagesWrapped(0), "\n", " ")
}
