package main

import (
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// goTypeNames are the names pflag shows as a flag's value when its usage
// has no back-quoted word (pflag.UnquoteUsage): Go's and pflag's names
// of the flag's type, not the tool's words for what to give.
var goTypeNames = map[string]bool{
	"int": true, "int8": true, "int16": true, "int32": true, "int64": true,
	"uint": true, "uint8": true, "uint16": true, "uint32": true, "uint64": true,
	"float": true, "float32": true, "float64": true, "string": true, "duration": true,
	"strings": true, "stringArray": true, "stringSlice": true, "ints": true, "intSlice": true,
	"uints": true, "uintSlice": true, "bools": true, "boolSlice": true, "value": true,
	"int32Slice": true, "int64Slice": true, "float32Slice": true, "float64Slice": true,
	"durationSlice": true, "ip": true, "ipSlice": true, "ipMask": true, "ipNet": true,
	"bytesHex": true, "bytesBase64": true, "count": true, "stringToString": true,
	"stringToInt": true, "stringToInt64": true,
}

// TestFlagPlaceholders: every flag of every command (found by walking
// the command tree) that takes a value shows, in --help, a placeholder
// in the tool's words ("--out FILE", "--blocks N"), not the name of its
// Go type ("--out string", "--blocks int"). Before, most flags showed
// their type: int, uint32, float, string, stringArray, duration. A
// usage holds one back-quoted word at most: pflag shows the others'
// back quotes.
func TestFlagPlaceholders(t *testing.T) {
	seen := 0
	walkCommands(newRootCommand(&app{}), func(c *cobra.Command) {
		c.LocalFlags().VisitAll(func(f *pflag.Flag) {
			seen++
			name, usage := pflag.UnquoteUsage(f)
			where := strings.TrimPrefix(c.CommandPath(), "spvfilter ") + " --" + f.Name
			if goTypeNames[name] {
				t.Errorf("%s shows %q, its Go type, as its value: back-quote the word for it in its usage (%q)", where, name, f.Usage)
			}
			if strings.Contains(usage, "`") {
				t.Errorf("%s: its help shows a back quote, one pflag does not take as the placeholder's: %q", where, usage)
			}
		})
	})
	if seen == 0 {
		t.Fatal("no flag found")
	}
}
