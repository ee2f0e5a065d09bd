package main

import (
	"os"
	"path/filepath"
	"testing"
)

// TestWrongFilesSayWhatWritesThem: a file of the wrong kind (JSON where
// hex is wanted, a JSON object where a capture is, a damaged index) or an
// @ that names no file is bad input in the tool's words, naming the flag
// or argument, the file and what to give or what writes such a file.
// Before: "invalid hex character '[' at offset 0" for a JSON list or a
// JSON document cut short; a field of no capture record was "field "a":
// unknown field "a"", named twice, with nothing said of captures; a
// damaged index said nothing of how to get a whole one; "@" alone was
// "@: no such file or directory".
func TestWrongFilesSayWhatWritesThem(t *testing.T) {
	in := newRowFiles(t)
	list, cut := filepath.Join(in.dir, "list.json"), filepath.Join(in.dir, "cut.json")
	for name, text := range map[string]string{list: "[1, 2]\n", cut: `{"hex": "00"`} {
		if err := os.WriteFile(name, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	const notHex = "JSON, not hex (a command's --json output?): give hex, as the command prints it without --json"
	node := []string{"--network", "regtest", "--connect", "127.0.0.1:1"}
	hexWords := []string{"invalid hex character"}
	runRows(t, []contractRow{
		{name: "a JSON list as --filter", args: []string{"bloom", "inspect", "--filter", "@" + list},
			status: exitBadInput, stderr: []string{"--filter: @" + list + " holds " + notHex}, notInErr: hexWords},
		{name: "JSON cut short as the transaction", args: append([]string{"send", "@" + cut}, node...),
			status: exitBadInput, stderr: []string{"TX_HEX: @" + cut + " holds " + notHex}, notInErr: hexWords},
		{name: "a JSON list as elements", args: []string{"bloom", "match", "--filter", corePayload, "@" + list},
			status: exitBadInput, stderr: []string{"element 1 (@" + list + " line 1): " + notHex}, notInErr: hexWords},
		{name: "a JSON object as a capture", args: []string{"privacy", "analyze", "--capture", in.object, "--universe", filepath.Join(in.sim, "universe.txt")},
			status: exitBadInput, stderr: []string{"--capture " + in.object + `, line 1, field "a": no capture record has this field; want the JSON lines privacy capture writes, one record per line`},
			notInErr: []string{"unknown field"}},
		{name: "a damaged index", args: []string{"privacy", "fetches", "--capture", in.fetchCapture, "--index", in.damagedIndex},
			status: exitBadInput, stderr: []string{"--index " + in.damagedIndex + ": a damaged appearance index: ", "(write it again: privacy universe --index or privacy simulate writes one)"}},
		{name: "@ alone as an element", args: []string{"bloom", "match", "--filter", corePayload, "@"},
			status: exitBadInput, stderr: []string{"element 1: @ alone names no file: give @FILE, or the value itself"}, notInErr: []string{"no such file"}},
		{name: "@ alone as --filter", args: []string{"bloom", "inspect", "--filter", "@"},
			status: exitBadInput, stderr: []string{"--filter: @ alone names no file: give @FILE, or the value itself"}, notInErr: []string{"no such file"}},
	})
}
