package main

import (
	"encoding/json"
)

// printJSON writes v as one indented JSON object followed by a newline.
func (a *app) printJSON(v any) error {
	enc := json.NewEncoder(a.stdout)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}
