package main

import (
	"encoding/json"
	"fmt"
)

// printJSON writes v as one indented JSON object followed by a newline.
func (a *app) printJSON(v any) error {
	enc := json.NewEncoder(a.stdout)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// warn writes each warning on a line of its own on standard error.
func (a *app) warn(warnings []string) {
	for _, w := range warnings {
		fmt.Fprintf(a.stderr, "spvfilter: warning: %s\n", oneLine(w))
	}
}

// orEmpty returns warnings, or an empty list for none, so that JSON shows
// "warnings": [] rather than null.
func orEmpty(warnings []string) []string {
	if warnings == nil {
		return []string{}
	}
	return warnings
}
