package main

import (
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/btcsuite/btcd/chaincfg"
	"github.com/btcsuite/btcd/wire"
	"github.com/spf13/pflag"

	"github.com/spvfilter/spvfilter/peer/store"
	"github.com/spvfilter/spvfilter/privacy/leak"
)

// badInputCase is a command line that must be refused as bad input.
type badInputCase struct {
	name  string
	stdin string
	args  []string
}

// contractFiles are the files the bad-input cases read: a directory, a
// file of two lines, an empty one and one that does not exist.
type contractFiles struct {
	dir, twoLines, empty, comments, missing string
	// plotDir is a directory named as a plot file.
	plotDir string
}

func newContractFiles(t *testing.T) contractFiles {
	t.Helper()
	dir := t.TempDir()
	f := contractFiles{
		dir:      dir,
		twoLines: filepath.Join(dir, "two-lines.hex"),
		empty:    filepath.Join(dir, "empty.hex"),
		comments: filepath.Join(dir, "comments.hex"),
		missing:  filepath.Join(dir, "missing.hex"),
		plotDir:  filepath.Join(dir, "plots.svg"),
	}
	if err := os.Mkdir(f.plotDir, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, text := range map[string]string{
		f.twoLines: corePayload + "\n" + corePayload + "\n",
		f.empty:    "",
		f.comments: "# nothing but a comment\n\n",
	} {
		if err := os.WriteFile(name, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return f
}

// badInputCases runs through every command: each must exit with status 2,
// print one line on standard error and nothing on standard output.
func badInputCases(t *testing.T, f contractFiles) []badInputCase {
	blockHex := vectorBlockHex(t, block13b8a)
	const hash = "000000006c02c8ea6e4ff69651f7fcde348fb9d557a06e6957b65552002a7820"
	const node = "127.0.0.1:1" // never reached: every case fails first
	c := func(name string, args ...string) badInputCase { return badInputCase{name: name, args: args} }
	cases := []badInputCase{
		// root, help, completion, version
		c("unknown command", "frobnicate"),
		c("unknown global flag", "--nope"),
		c("unknown help topic", "help", "frobnicate"),
		c("unknown nested help topic", "help", "bloom", "frobnicate"),
		c("unknown completion shell", "completion", "frobnicate"),
		c("completion extra argument", "completion", "bash", "extra"),
		c("version argument", "version", "extra"),
		c("version unknown flag", "version", "--nope"),
		c("--json with a value that is no boolean", "version", "--json=maybe"),
		// bloom
		c("bloom unknown subcommand", "bloom", "frobnicate"),
		c("bloom new without --elements", "bloom", "new", "--fprate", "0.01"),
		c("bloom new without --fprate", "bloom", "new", "--elements", "3"),
		c("bloom new zero elements", "bloom", "new", "--elements", "0", "--fprate", "0.01"),
		c("bloom new fprate 0", "bloom", "new", "--elements", "3", "--fprate", "0"),
		c("bloom new fprate 1", "bloom", "new", "--elements", "3", "--fprate", "1"),
		c("bloom new fprate not a number", "bloom", "new", "--elements", "3", "--fprate", "x"),
		c("bloom new --fp-rate alias checked too", "bloom", "new", "--elements", "3", "--fp-rate", "2"),
		c("bloom new unknown flags", "bloom", "new", "--elements", "3", "--fprate", "0.01", "--flags", "some"),
		c("bloom new 0 hash functions", "bloom", "new", "--elements", "1000000", "--fprate", "0.01"),
		c("bloom new 0 bytes", "bloom", "new", "--elements", "1", "--fprate", "0.5"),
		c("bloom new rate too high for a hash function", "bloom", "new", "--elements", "1000", "--fprate", "0.9"),
		c("bloom new bad element hex", "bloom", "new", "--elements", "3", "--fprate", "0.01", "zz"),
		c("bloom new odd element hex", "bloom", "new", "--elements", "3", "--fprate", "0.01", "abc"),
		c("bloom new element file missing", "bloom", "new", "--elements", "3", "--fprate", "0.01", "@"+f.missing),
		c("bloom new element file is a directory", "bloom", "new", "--elements", "3", "--fprate", "0.01", "@"+f.dir),
		c("bloom new element file empty", "bloom", "new", "--elements", "3", "--fprate", "0.01", "@"+f.empty),
		c("bloom new element file only comments", "bloom", "new", "--elements", "3", "--fprate", "0.01", "@"+f.comments),
		c("bloom add without --filter", "bloom", "add", coreElem1),
		c("bloom add without elements", "bloom", "add", "--filter", corePayload),
		c("bloom add bad filter", "bloom", "add", "--filter", "0300", coreElem1),
		c("bloom add filter file of two lines", "bloom", "add", "--filter", "@"+f.twoLines, coreElem1),
		c("bloom add filter file is a directory", "bloom", "add", "--filter", "@"+f.dir, coreElem1),
		c("bloom match without elements", "bloom", "match", "--filter", corePayload),
		c("bloom match filter file missing", "bloom", "match", "--filter", "@"+f.missing, coreElem1),
		c("bloom match two standard inputs", "bloom", "match", "--filter", "-", "-"),
		c("bloom inspect argument", "bloom", "inspect", "--filter", corePayload, "extra"),
		c("bloom inspect empty filter hex", "bloom", "inspect", "--filter", ""),
		c("bloom inspect too many hash functions", "bloom", "inspect", "--filter", "010033000000000000000000"),
		c("bloom tx without --tx", "bloom", "tx", "--filter", corePayload),
		c("bloom tx not a transaction", "bloom", "tx", "--filter", corePayload, "--tx", "00"),
		c("bloom tx trailing bytes", "bloom", "tx", "--filter", corePayload, "--tx", coreTx+"00"),
		// gcs
		c("gcs unknown subcommand", "gcs", "frobnicate"),
		c("gcs build without --block", "gcs", "build"),
		c("gcs build not a block", "gcs", "build", "--block", "00"),
		c("gcs build block file is a directory", "gcs", "build", "--block", "@"+f.dir),
		c("gcs build without prevout scripts", "gcs", "build", "--block", blockHex),
		c("gcs build too many prevout scripts", "gcs", "build", "--block", blockHex, "--prevout-script", "51", "--prevout-script", "52"),
		c("gcs build prevouts and --no-prevouts", "gcs", "build", "--block", blockHex, "--no-prevouts", "--prevout-script", "51"),
		c("gcs build bad prev header", "gcs", "build", "--block", blockHex, "--no-prevouts", "--prev-header", "00"),
		c("gcs match without elements", "gcs", "match", "--filter", "0174a170", "--block-hash", hash),
		c("gcs match short block hash", "gcs", "match", "--filter", "0174a170", "--block-hash", "00", "51"),
		c("gcs match malformed filter", "gcs", "match", "--filter", "05", "--block-hash", hash, "51"),
		c("gcs header without --prev-header", "gcs", "header", "--filter", "0174a170"),
		c("gcs header prev header file of two lines", "gcs", "header", "--filter", "0174a170", "--prev-header", "@"+f.twoLines),
		c("gcs inspect missing file", "gcs", "inspect", "--filter", "@"+f.missing),
		// merkleblock
		c("merkleblock unknown subcommand", "merkleblock", "frobnicate"),
		c("merkleblock build without --block", "merkleblock", "build", "--txid", txid13b8a1),
		c("merkleblock build neither filter nor txid", "merkleblock", "build", "--block", blockHex),
		c("merkleblock build filter and txid", "merkleblock", "build", "--block", blockHex, "--filter", corePayload, "--txid", txid13b8a1),
		c("merkleblock build short txid", "merkleblock", "build", "--block", blockHex, "--txid", "00"),
		c("merkleblock build txid file is a directory", "merkleblock", "build", "--block", blockHex, "--txid", "@"+f.dir),
		c("merkleblock build txid file empty", "merkleblock", "build", "--block", blockHex, "--txid", "@"+f.empty),
		c("merkleblock build stray argument", "merkleblock", "build", "--block", blockHex, "extra"),
		c("merkleblock verify not a payload", "merkleblock", "verify", "--merkleblock", "00"),
		c("merkleblock verify without --merkleblock", "merkleblock", "verify"),
		// scan: flag-level errors, found before any connection
		c("scan on regtest without --peer", "scan", "--network", "regtest", "--watch", "51"),
		c("scan with --peer and --connect", "scan", "--peer", node, "--connect", node, "--watch", "51"),
		c("scan with a proxy that is not socks5", "scan", "--connect", node, "--proxy", "http://127.0.0.1:1", "--watch", "51"),
		c("scan with a proxy and no peer", "scan", "--proxy", "socks5://127.0.0.1:1", "--watch", "51"),
		c("send on regtest without --peer", "send", "--network", "regtest", "00"),
		c("scan without --watch", "scan", "--peer", node),
		c("scan peer without port", "scan", "--peer", "127.0.0.1", "--watch", "51"),
		c("scan peer port out of range", "scan", "--peer", "127.0.0.1:99999", "--watch", "51"),
		c("scan peer port 0", "scan", "--peer", "127.0.0.1:0", "--watch", "51"),
		c("scan peer bad host", "scan", "--peer", "bad_host!:8333", "--watch", "51"),
		c("scan unknown network", "scan", "--peer", node, "--network", "frobnet", "--watch", "51"),
		c("scan unknown mode", "scan", "--peer", node, "--mode", "bip38", "--watch", "51"),
		c("scan negative from", "scan", "--peer", node, "--from", "-1", "--watch", "51"),
		c("scan to below from", "scan", "--peer", node, "--from", "5", "--to", "2", "--watch", "51"),
		c("scan zero timeout", "scan", "--peer", node, "--timeout", "0s", "--watch", "51"),
		c("scan fp-rate out of range", "scan", "--peer", node, "--mode", "bip37", "--fp-rate", "2", "--watch", "51"),
		c("scan fprate out of range", "scan", "--peer", node, "--mode", "bip37", "--fprate", "0", "--watch", "51"),
		c("scan bad watch hex", "scan", "--peer", node, "--network", "regtest", "--watch", "zz"),
		// privacy
		c("privacy unknown subcommand", "privacy", "frobnicate"),
		c("privacy model zero addresses", "privacy", "model", "--addresses", "0"),
		c("privacy model fprate 1", "privacy", "model", "--fprate", "1"),
		c("privacy model universe smaller than wallet", "privacy", "model", "--addresses", "20", "--universe-size", "10"),
		c("privacy model bad sweep", "privacy", "model", "--sweep", "frob=1..2"),
		c("privacy model bad plot format", "privacy", "model", "--plot", filepath.Join(f.dir, "leak.txt")),
		c("privacy model monte carlo with sweep", "privacy", "model", "--monte-carlo", "2", "--sweep", "addresses=1..3"),
		c("privacy analyze without filters", "privacy", "analyze", "--universe", "-"),
		c("privacy analyze without --universe", "privacy", "analyze", "--filter", corePayload),
		c("privacy analyze bad filter", "privacy", "analyze", "--filter", "00", "--universe", "-"),
		c("privacy analyze missing universe", "privacy", "analyze", "--filter", corePayload, "--universe", f.missing),
		c("privacy analyze filter and capture", "privacy", "analyze", "--filter", corePayload, "--capture", f.missing, "--universe", "-"),
		c("privacy analyze missing capture", "privacy", "analyze", "--capture", f.missing, "--universe", "-"),
		c("privacy analyze negative workers", "privacy", "analyze", "--filter", corePayload, "--universe", "-", "--workers", "-1"),
		c("privacy analyze zero max matches", "privacy", "analyze", "--filter", corePayload, "--universe", "-", "--max-matches", "0"),
		c("privacy compare zero addresses", "privacy", "compare", "--addresses", "0"),
		c("privacy capture without --listen", "privacy", "capture", "--upstream", node, "--out", "-"),
		c("privacy capture bad upstream", "privacy", "capture", "--listen", "127.0.0.1:0", "--upstream", "nowhere", "--out", "-"),
		c("privacy capture bad listen", "privacy", "capture", "--listen", "127.0.0.1:http2", "--upstream", node, "--out", "-"),
		c("privacy capture unknown network", "privacy", "capture", "--listen", "127.0.0.1:0", "--upstream", node, "--network", "testnet", "--out", "-"),
		c("privacy capture negative max clients", "privacy", "capture", "--listen", "127.0.0.1:0", "--upstream", node, "--out", "-", "--max-clients", "-1"),
		c("privacy capture out is a directory", "privacy", "capture", "--listen", "127.0.0.1:0", "--upstream", node, "--out", f.dir),
		c("privacy universe without --peer", "privacy", "universe", "--out", "-"),
		c("privacy universe bad peer", "privacy", "universe", "--peer", "localhost", "--out", "-"),
		c("privacy universe negative from", "privacy", "universe", "--peer", node, "--from", "-1", "--out", "-"),
		c("privacy universe unknown network", "privacy", "universe", "--peer", node, "--network", "frobnet", "--out", "-"),
		c("privacy universe negative to", "privacy", "universe", "--peer", node, "--to", "-5", "--out", "-"),
		c("privacy universe zero timeout", "privacy", "universe", "--peer", node, "--timeout", "0s", "--out", "-"),
		c("privacy universe to below from", "privacy", "universe", "--peer", node, "--from", "10", "--to", "5", "--out", "-"),
		c("privacy universe out in a missing directory", "privacy", "universe", "--peer", node, "--out", filepath.Join(f.missing, "u.txt")),
		c("privacy universe out exists without --force", "privacy", "universe", "--peer", node, "--out", f.twoLines),
		c("privacy universe index exists without --force", "privacy", "universe", "--peer", node, "--out", "-", "--index", f.empty),
		c("privacy model plot is a directory", "privacy", "model", "--plot", f.plotDir),
		c("privacy model plot in a missing directory", "privacy", "model", "--plot", filepath.Join(f.missing, "leak.svg")),
		c("privacy model plot-j in a missing directory", "privacy", "model", "--plot-j", filepath.Join(f.missing, "j.svg")),
		c("privacy capture out in a missing directory", "privacy", "capture", "--listen", "127.0.0.1:0", "--upstream", node, "--out", filepath.Join(f.missing, "c.jsonl")),
		// a single-value flag given twice
		c("bloom new repeated --elements", "bloom", "new", "--elements", "3", "--elements", "4", "--fprate", "0.01", coreElem1),
		c("bloom inspect repeated --filter", "bloom", "inspect", "--filter", corePayload, "--filter", corePayload),
		c("gcs build repeated --block", "gcs", "build", "--block", blockHex, "--block", blockHex, "--no-prevouts"),
		c("scan repeated --network", "scan", "--peer", node, "--network", "regtest", "--network", "mainnet", "--watch", "51"),
		c("privacy model repeated --fprate spelled both ways", "privacy", "model", "--fprate", "0.01", "--fp-rate", "0.02"),
		// demo
		c("demo plot in a missing directory", "demo", "--plot", filepath.Join(f.missing, "demo.svg")),
		c("demo bad plot format", "demo", "--plot", filepath.Join(f.dir, "demo.txt")),
		c("demo unknown flag", "demo", "--nope"),
		c("demo argument", "demo", "extra"),
	}
	cases = append(cases, badInputCase{name: "bloom match second standard input", stdin: corePayload,
		args: []string{"bloom", "match", "--filter", "-", "-"}})
	return cases
}

// TestBadInputContract: every bad input, in every command, exits with
// status 2, one line on standard error and nothing on standard output;
// with --json the line is the object {"error": ..., "exit_code": 2}.
func TestBadInputContract(t *testing.T) {
	cases := badInputCases(t, newContractFiles(t))
	if len(cases) < 60 {
		t.Fatalf("only %d cases", len(cases))
	}
	commands := map[string]bool{}
	for _, tc := range cases {
		commands[tc.args[0]] = true
		t.Run(tc.name, func(t *testing.T) {
			stdout, stderr, status := runCLI(t, tc.stdin, tc.args...)
			checkOneErrorLine(t, stdout, stderr, status)
			if strings.HasPrefix(stderr, "{") {
				t.Errorf("stderr is JSON without --json: %q", stderr)
			}
			stdout, stderr, status = runCLI(t, tc.stdin, append(tc.args, "--json")...)
			checkOneErrorLine(t, stdout, stderr, status)
			var obj map[string]any
			if err := json.Unmarshal([]byte(stderr), &obj); err != nil {
				t.Fatalf("with --json, stderr is not one JSON object: %v: %q", err, stderr)
			}
			msg, _ := obj["error"].(string)
			code, _ := obj["exit_code"].(float64)
			if msg == "" || code != exitBadInput || len(obj) != 2 {
				t.Fatalf("with --json, stderr %q: want error and exit_code 2", stderr)
			}
		})
	}
	for _, name := range []string{"bloom", "gcs", "merkleblock", "scan", "privacy", "demo", "help", "completion", "version"} {
		if !commands[name] {
			t.Errorf("no bad-input case for %s", name)
		}
	}
}

func checkOneErrorLine(t *testing.T, stdout, stderr string, status int) {
	t.Helper()
	if status != exitBadInput {
		t.Fatalf("status %d, want %d; stderr %q", status, exitBadInput, stderr)
	}
	if stdout != "" {
		t.Fatalf("stdout %q, want nothing", stdout)
	}
	if strings.Count(stderr, "\n") != 1 || !strings.HasSuffix(stderr, "\n") || len(stderr) < 10 {
		t.Fatalf("stderr %q, want one line", stderr)
	}
}

// TestFailureJSON: an error that is not bad input exits with 1, also as
// a JSON object with --json.
func TestFailureJSON(t *testing.T) {
	// A merkleblock payload whose proof does not verify: one transaction,
	// one hash that is not the header's merkle root.
	mb := strings.Repeat("00", 80) + "01000000" + "01" + strings.Repeat("11", 32) + "01" + "01"
	_, stderr, status := runCLI(t, "", "merkleblock", "verify", "--merkleblock", mb, "--json")
	var obj struct {
		Error    string `json:"error"`
		ExitCode int    `json:"exit_code"`
	}
	if status != exitFailure || json.Unmarshal([]byte(stderr), &obj) != nil || obj.ExitCode != exitFailure || !strings.Contains(obj.Error, "invalid proof") {
		t.Fatalf("status %d, stderr %q", status, stderr)
	}
}

// retiredKeys must appear in no command's JSON: each names what took its
// place.
var retiredKeys = map[string]string{
	"payload":    `"filterload" or "merkleblock"`,
	"warning":    `"warnings", an array`,
	"size_bits":  `"filter_bits"`,
	"bytes":      `"serialized_bytes"`,
	"size_bytes": `"filter_bytes"`,
	"pf":         `"false_positive_rate", the rate at the filter's fill, as bloom and gcs name it`,
	"pf_approx":  `"approx_false_positive_rate"`,
	// The keys renamed when the CLI's JSON was made one vocabulary.
	"block_fp_rate":               `"block_false_positive_rate"`,
	"fetched_blocks":              `"blocks_fetched" (a count) or "expected_blocks_fetched" (compare)`,
	"scanned_blocks":              `"blocks_scanned"`,
	"fetched_unknown":             `"unknown_blocks_fetched"`,
	"matches_found":               `"matched_count"`,
	"false_positive_blocks":       `"false_positive_block_count"`,
	"false_positive_transactions": `"false_positive_transaction_count"`,
	"filter_reloads":              `"filter_reload_count"`,
	"confident":                   `"confident_count"`,
	"confident_groups":            `"confident_group_count"`,
	"confident_claims":            `"confident_bin"`,
	"candidates":                  `"candidate_score"`,
	"links":                       `"link_report" (analyze) or "link_score" (evaluate)`,
	"link_groups":                 `"link_group_score"`,
	"candidate_groups":            `"candidate_group_score"`,
	"wallet_candidates":           `"wallet_candidate_count"`,
	"wallet_sizes":                `"wallet_size_prior"`,
	"merged_address_lines":        `"address_lines_merged"`,
	"bip157_fetches":              `"block_download_attack"`,
	"watch_items":                 `"watch_item_count"`,
	"wallet_exposed":              `"expected_wallet_exposed"`,
	"elements":                    `"element_count"`,
	"sizing_elements":             `"sizing_element_count"`,
	"trials":                      `"trial_count"`,
	"attempts":                    `"failed_attempt_count"`,
	"hashes":                      `"hash_count"`,
	"files":                       `the "*_file" keys, at the top level`,
	// The keys renamed after a newcomer's review of the vocabulary.
	"hash_funcs":                   `"hash_function_count"`,
	"merkleblocks_received":        `"merkle_block_count", as each peer's in scan's leak`,
	"block_txs":                    `"block_tx_count", as scan --privacy-target names it`,
	"tx_elements":                  `"tx_element_count", as scan --privacy-target names it`,
	"n":                            `"item_count"`,
	"stats":                        `"bloom_filter", an object named in the singular by what it is`,
	"false_positive_rate_approx":   `"approx_false_positive_rate"`,
	"pf_candidate":                 `"candidate_false_positive_rate"`,
	"measured_pf_candidate":        `"measured_candidate_false_positive_rate"`,
	"model_pf_candidate":           `"expected_candidate_false_positive_rate"`,
	"mean_false_positives":         `"measured_false_positives"`,
	"model_false_positives":        `"expected_false_positives"`,
	"model_p_h_1":                  `"expected_p_h_1"`,
	"false_positive_txs_per_block": `"expected_false_positive_transactions_per_block"`,
	"transactions_recorded":        `"has_transactions"`,
	"attempt_count":                `"failed_attempt_count", the failed attempts since the last success`,
	"tried":                        `"served", an address that served the client well once`,
}

// pluralAllowed says whether key, whose value is no list and whose
// object is under parent, may have a plural name: sizes in their unit,
// counts of what a command did (<nouns>_<done>), expected values and
// estimates, rates per something, probabilities, the BIP 37 message's
// own field names, and the flags a result echoes under params and
// options, which keep their flags' names.
func pluralAllowed(parent, key string) bool {
	switch {
	case echoes(parent):
		return true
	case echoes(key):
		return true // a record of named values
	case key == "seconds" || strings.HasSuffix(key, "_bytes") || strings.HasSuffix(key, "_bits"):
		return true
	case doneCount.MatchString(key):
		return true
	case regexp.MustCompile(`^(expected|estimated|measured|p|probability)_`).MatchString(key):
		return true
	case strings.Contains(key, "_per_"), key == "flags":
		return true // a rate; the name of the field of BIP 37's filterload
	}
	return false
}

// echoes reports whether key is an object that echoes the flags a result
// was computed with.
func echoes(key string) bool {
	return key == "params" || key == "model_params" || key == "options"
}

// echoesFlag reports whether key, in an object that echoes the flags of a
// command, is the name of one of them (flags, with - written _): the
// flag's own, or with its unit (timing_seconds for --timing) or as a
// count (peer_count for --peers, whose name is a list of peers elsewhere;
// watched_counts for the list --watched); fp_rate is --fprate, the
// contract's name for the rate a filter is sized for.
func echoesFlag(key string, flags map[string]bool) bool {
	if key == "fp_rate" {
		return flags["fprate"]
	}
	for f := range flags {
		switch key {
		case f, f + "_count", f + "_counts", f + "_seconds", strings.TrimSuffix(f, "s") + "_count":
			return true
		}
	}
	return false
}

// checkEcho checks that the objects at the top of a command's document
// that echo its flags (params, options, and model_params within them)
// name each flag as the command does.
func (v *vocabulary) checkEcho(where string, doc any) {
	v.t.Helper()
	top, _ := doc.(map[string]any)
	for key, value := range top {
		echo, ok := value.(map[string]any)
		if !echoes(key) || !ok {
			continue
		}
		for k, val := range echo {
			if inner, ok := val.(map[string]any); ok && echoes(k) {
				v.checkEcho(where, map[string]any{k: inner})
				continue
			}
			if !echoesFlag(k, v.flags) {
				v.t.Errorf("%s: %s.%s echoes no flag of the command: the flags a result echoes keep their names", where, key, k)
			}
		}
	}
}

// letterKeys are the one-letter keys the vocabulary keeps: the
// parameters BIP 158 names P and M, the j of the papers' P_h(j), and the
// two sessions of a pair.
var letterKeys = map[string]bool{"p": true, "m": true, "j": true, "a": true, "b": true}

// abbreviations are words the vocabulary spells out (hash_function_count,
// transactions, false_positive_rate).
var abbreviations = map[string]bool{"funcs": true, "txs": true, "stats": true, "pf": true, "num": true, "cnt": true}

// btcdConstant finds a name of btcd's constants (SFNodeNetwork) in a
// value: the services are shown by their BIP names (NODE_NETWORK).
var btcdConstant = regexp.MustCompile(`\bSF[A-Z][A-Za-z0-9]+`)

// doneCount matches the name of a count of what a command did: its noun
// in the plural, then what was done to them.
var doneCount = regexp.MustCompile(`^[a-z_]+s_(scanned|fetched|received|read|skipped|tested|compared|searched|seen|merged|listed|written|rejected|evicted|indexed|unattributed)$`)

// isPlural reports whether a key's last word is a plural noun.
func isPlural(key string) bool {
	word := key[strings.LastIndexByte(key, '_')+1:]
	return strings.HasSuffix(word, "s") && !strings.HasSuffix(word, "ss") && !strings.HasSuffix(word, "us") &&
		!strings.HasSuffix(word, "is") && word != "agrees"
}

// vocabulary gathers the keys of the JSON documents of every command and
// checks the rules of one vocabulary (cmd/spvfilter/README.md, "JSON
// keys").
type vocabulary struct {
	t     *testing.T
	types map[string]map[string]string // key -> JSON type -> a command showing it
	// flags are the flags of the command whose document is checked, with
	// - written _, as the flags it echoes are named; nil when not known.
	flags map[string]bool
	// real is set for a document a command printed (not one encoded from
	// its output type, whose strings are left empty): an empty string is
	// then an undefined value that should be null.
	real bool
}

// add checks one command's document and notes its keys' types.
func (v *vocabulary) add(where string, doc any, top bool) {
	v.t.Helper()
	if obj, ok := doc.(map[string]any); top && (!ok || func() bool { _, w := obj["warnings"].([]any); return !w }()) {
		v.t.Errorf("%s: no \"warnings\" list at the top", where)
	}
	walkJSONIn(doc, "", func(parent, key string, value any) {
		typ := jsonType(value)
		if typ == "" {
			return
		}
		if v.types[key] == nil {
			v.types[key] = map[string]string{}
		}
		if _, ok := v.types[key][typ]; !ok {
			v.types[key][typ] = where
		}
		n, isNumber := value.(float64)
		str, isString := value.(string)
		switch {
		case typ != "array" && typ != "bool" && isPlural(key) && !pluralAllowed(parent, key):
			v.t.Errorf("%s: %s.%s is a %s with a plural name: plural names are for lists (a count is <noun>_count)", where, parent, key, typ)
		case typ == "bool" && slices.ContainsFunc(strings.Split(key, "_"), isPlural) && !strings.HasPrefix(key, "has_"):
			v.t.Errorf("%s: %s.%s is a yes or no with a plural name: name it as a predicate (has_<nouns>, an adjective)", where, parent, key)
		case strings.HasSuffix(key, "_count") && (!isNumber || n != math.Trunc(n)):
			v.t.Errorf("%s: %s.%s = %v: a count is a whole number (an expected one is expected_<nouns>)", where, parent, key, value)
		case strings.Contains(key, "fp_rate") && key != "fp_rate" && !strings.HasPrefix(key, "fp_rate_"),
			strings.Contains(key, "false_positive_rate") && !strings.HasSuffix(key, "false_positive_rate"):
			v.t.Errorf("%s: %s: a false-positive rate is false_positive_rate, qualified before it (block_false_positive_rate); fp_rate is the rate asked for", where, key)
		case !echoes(parent) && abbreviated(key):
			v.t.Errorf("%s: %s.%s: a word of the key is an abbreviation the vocabulary spells out", where, parent, key)
		case len(key) == 1 && !letterKeys[key]:
			v.t.Errorf("%s: %s.%s: a key is a word, not a formula's letter (item_count, not n)", where, parent, key)
		case isString && btcdConstant.MatchString(str):
			v.t.Errorf("%s: %s.%s = %q: btcd's constant names, where the BIPs' are the vocabulary", where, parent, key, str)
		case isString && str == "" && v.real:
			v.t.Errorf("%s: %s.%s = \"\": an undefined value is null", where, parent, key)
		case isNumber && n == -1:
			v.t.Errorf("%s: %s.%s = -1: an undefined value is null", where, parent, key)
		}
	})
	if v.flags != nil {
		v.checkEcho(where, doc)
	}
	// A thing named in the singular beside the list of its kind (peer
	// beside peers) says one of several where there are more.
	walkObjects(doc, func(obj map[string]any) {
		for key, value := range obj {
			if _, isString := value.(string); !isString {
				continue
			}
			if _, list := obj[key+"s"].([]any); list {
				v.t.Errorf("%s: %q, one string, beside the list %q: name what it is of the list (filtering_peer)", where, key, key+"s")
			}
		}
	})
}

// abbreviated reports whether a word of key is one the vocabulary spells
// out.
func abbreviated(key string) bool {
	for _, w := range strings.Split(key, "_") {
		if abbreviations[w] {
			return true
		}
	}
	return false
}

// walkObjects calls fn on every object of a decoded JSON document.
func walkObjects(doc any, fn func(map[string]any)) {
	switch d := doc.(type) {
	case map[string]any:
		fn(d)
		for _, v := range d {
			walkObjects(v, fn)
		}
	case []any:
		for _, v := range d {
			walkObjects(v, fn)
		}
	}
}

// TestJSONKeysOneType runs every command and mode with --json (and encodes
// the outputs of those that need a node from their types) and checks the
// vocabulary: a key has one JSON type wherever it appears, no retired key
// is left, every result carries "warnings", plural names are lists (or a
// size in its unit, a count of what was done, an expected value or an
// estimate, a rate per something, a flag echoed), a count is a whole
// number, a false-positive rate has one name, and undefined is null.
func TestJSONKeysOneType(t *testing.T) {
	dir := t.TempDir()
	v := gcsVectorAt(t, 49291)
	blockHex := vectorBlockHex(t, block13b8a)
	universe := filepath.Join(dir, "universe.txt")
	var u strings.Builder
	for i := range 2000 {
		fmt.Fprintf(&u, "%040x\n", i*7919+1)
	}
	if err := os.WriteFile(universe, []byte(u.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	gcsBuild := []string{"gcs", "build", "--block", v.Block, "--prev-header", v.PrevHeader}
	for _, s := range v.PrevScripts {
		gcsBuild = append(gcsBuild, "--prevout-script", s)
	}
	runs := [][]string{
		{"version"},
		{"help"},
		{"help", "scan"},
		{"privacy"},
		{"completion", "bash"},
		{"bloom", "new", "--elements", "3", "--fprate", "0.01", coreElem1},
		{"bloom", "new", "--elements", "10", "--fprate", "1e-300"},
		{"bloom", "add", "--filter", corePayload, coreElem1},
		{"bloom", "match", "--filter", corePayload, coreElem1, coreMiss},
		{"bloom", "inspect", "--filter", corePayload},
		{"bloom", "inspect", "--filter", strings.Repeat("00", 10)}, // 0 bytes: undefined figures, null
		{"bloom", "tx", "--filter", corePayload, "--tx", coreTx},
		gcsBuild,
		{"gcs", "match", "--filter", v.Filter, "--block-hash", v.BlockHash, "51"},
		{"gcs", "header", "--filter", v.Filter, "--prev-header", v.PrevHeader},
		{"gcs", "inspect", "--filter", v.Filter},
		{"gcs", "inspect", "--filter", "00"},
		{"merkleblock", "build", "--block", blockHex, "--txid", txid13b8a8},
		{"merkleblock", "build", "--block", blockHex, "--filter", corePayload},
		{"merkleblock", "verify", "--merkleblock", payloadDc45},
		{"privacy", "model", "--addresses", "20", "--filters", "2"},
		{"privacy", "model", "--addresses", "20", "--filters", "3", "--target-p-h-all", "0.5"},
		{"privacy", "model", "--sweep", "addresses=1..3"},
		{"privacy", "model", "--addresses", "5", "--universe-size", "20000", "--monte-carlo", "2"},
		{"privacy", "compare", "--addresses", "20"},
		{"privacy", "compare", "--addresses", "20", "--decoys", "2", "--peers", "3"},
		{"privacy", "analyze", "--filter", corePayload, "--filter", "03ce4299050000000100008001", "--universe", universe},
		{"demo", "--universe-size", "20000", "--plot", filepath.Join(dir, "demo.svg")},
		{"lab", "--vectors", labVectors, "--probes", "1000", "--timing", "0", "--wallets", "1,1000"},
	}
	voc := &vocabulary{t: t, types: map[string]map[string]string{}}
	runJSON := func(args []string) string {
		t.Helper()
		stdout, stderr, status := runCLI(t, "", append(args, "--json")...)
		if status != exitOK {
			t.Fatalf("%v: status %d, %s", args, status, stderr)
		}
		var doc any
		if err := json.Unmarshal([]byte(stdout), &doc); err != nil {
			t.Fatalf("%v: %v", args, err)
		}
		voc.flags, voc.real = commandFlags(t, args), true
		voc.add(strings.Join(args[:min(3, len(args))], " "), doc, true)
		voc.flags, voc.real = nil, false
		return stdout
	}
	for _, args := range runs {
		runJSON(args)
	}
	// The privacy commands that read a capture and the labels of a
	// simulation, on a small one, in every mode.
	sim := filepath.Join(dir, "sim")
	runJSON(smallSimulation("7", sim))
	at := func(name string) string { return filepath.Join(sim, name) }
	report := runJSON([]string{"privacy", "analyze", "--capture", at("capture.jsonl"), "--universe", at("universe.txt"), "--link", "--intersect"})
	reportFile := filepath.Join(dir, "report.json")
	fetchesFile := filepath.Join(dir, "fetches.json")
	fetches := runJSON([]string{"privacy", "fetches", "--capture", at("fetch-capture.jsonl"), "--index", at("chain.idx"), "--intersect"})
	for file, text := range map[string]string{reportFile: report, fetchesFile: fetches} {
		if err := os.WriteFile(file, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	runJSON([]string{"privacy", "evaluate", "--labels", at("labels.json"), "--report", reportFile})
	runJSON([]string{"privacy", "evaluate", "--labels", at("labels.json"), "--report", fetchesFile})
	runJSON([]string{"privacy", "fetches", "--capture", at("fetch-capture.jsonl"), "--index", at("chain.idx"), "--client", "127.1.0.1"})
	// The outputs of the commands that need a node, from their types,
	// every list and pointer filled.
	tip, one, text := int32(5), true, "x"
	peer := scanPeerJSON{Tip: &tip, Branch: &branchJSON{}, UserAgent: &text, Reason: &text}
	p, group := 0.5, 1
	peerLeak := leak.PeerLeak{Address: &text, FetchedHeights: []int32{1}, Highest: &p, HighestHigh: &p,
		Scripts: []leak.ScriptLeak{{Group: &group}}}
	for where, value := range map[string]any{
		"scan": scanJSON{FilteringPeer: &text, Matches: []scanMatchJSON{{Watch: []string{"51"}}}, Peers: []scanPeerJSON{peer},
			OnePeerHeights: []onePeerJSON{{}}, Conflicts: []conflictJSON{{Sides: [][]string{{text}}}}, Disconnected: []string{}, SpendOnlyBlocks: []int32{}, Warnings: []string{},
			Leak: &leak.Leak{Peers: []leak.PeerLeak{peerLeak}, Collusion: peerLeak, Warnings: []string{}}},
		"scan bip37": scanJSON{Matches: []scanMatchJSON{}, Peers: []scanPeerJSON{}, OnePeerHeights: []onePeerJSON{}, Conflicts: []conflictJSON{}, Disconnected: []string{},
			SpendOnlyBlocks: []int32{}, Warnings: []string{}, FilteringPeer: &text,
			Leak: &bip37LeakJSON{Peers: []bip37PeerLeakJSON{{Address: &text}}, Target: &bip37TargetJSON{}, Warnings: []string{}}},
		"scan --follow event":   followEvent{Watch: []string{"51"}, FalsePositive: &one},
		"scan --follow summary": followSummary{Peers: []scanPeerJSON{peer}, Warnings: []string{}},
		"peers": peersOutput{Peers: []scanPeerJSON{peer}, Unbanned: []string{}, Bans: []banJSON{{}}, Warnings: []string{},
			Known: []knownJSON{{Services: serviceNames(wire.SFNodeNetwork | wire.SFNodeCF | 1<<20), LastSeen: &text, LastAttempt: &text, LastSuccess: &text}}},
		"send":             sendJSON{Mined: &minedJSON{}, Peers: []sendPeerJSON{{Error: &text}}, Warnings: []string{}},
		"privacy universe": universeStatsJSON{Warnings: []string{}},
		"privacy capture":  captureStatsJSON{Warnings: []string{}},
	} {
		b, err := json.Marshal(value)
		if err != nil {
			t.Fatal(err)
		}
		var doc any
		if err := json.Unmarshal(b, &doc); err != nil {
			t.Fatal(err)
		}
		voc.add(where, doc, where != "scan --follow event")
	}
	if len(voc.types) < 150 {
		t.Fatalf("only %d keys seen", len(voc.types))
	}
	for key, byType := range voc.types {
		if len(byType) > 1 {
			t.Errorf("key %q has several JSON types: %v", key, byType)
		}
		if instead, retired := retiredKeys[key]; retired {
			t.Errorf("retired key %q printed by %v: use %s", key, byType, instead)
		}
	}
}

// commandFlags returns the flags of the command args runs, with - written
// _, as the flags a result echoes are named.
func commandFlags(t *testing.T, args []string) map[string]bool {
	t.Helper()
	cmd, _, err := newRootCommand(&app{stdout: io.Discard, stderr: io.Discard}).Find(args)
	if err != nil {
		t.Fatalf("%v: %v", args, err)
	}
	flags := map[string]bool{}
	visit := func(f *pflag.Flag) { flags[strings.ReplaceAll(f.Name, "-", "_")] = true }
	cmd.Flags().VisitAll(visit)
	cmd.InheritedFlags().VisitAll(visit)
	return flags
}

// walkJSONIn calls fn with every object key of a decoded JSON document,
// the key of the object it is in ("" at the top, the list's key for an
// element of a list) and its value.
func walkJSONIn(doc any, parent string, fn func(parent, key string, value any)) {
	switch d := doc.(type) {
	case map[string]any:
		for k, v := range d {
			fn(parent, k, v)
			walkJSONIn(v, k, fn)
		}
	case []any:
		for _, v := range d {
			walkJSONIn(v, parent, fn)
		}
	}
}

// walkJSON calls fn with every object key of a decoded JSON document and
// the JSON type of its value; null counts as nothing (it stands for an
// undefined number).
func walkJSON(doc any, fn func(key, typ string)) {
	switch d := doc.(type) {
	case map[string]any:
		for k, v := range d {
			if typ := jsonType(v); typ != "" {
				fn(k, typ)
			}
			walkJSON(v, fn)
		}
	case []any:
		for _, v := range d {
			walkJSON(v, fn)
		}
	}
}

func jsonType(v any) string {
	switch v.(type) {
	case map[string]any:
		return "object"
	case []any:
		return "array"
	case string:
		return "string"
	case float64:
		return "number"
	case bool:
		return "bool"
	}
	return ""
}

// contractRow is a command line and what its outputs must and must not
// hold: the contract's rows for wording, hints and the results of flags.
type contractRow struct {
	name     string
	args     []string
	status   int
	stdout   []string // each must appear on standard output
	stderr   []string // each must appear on standard error
	notInErr []string // none may appear on standard error
}

// TestContractRows: errors are in the tool's own words and name what is
// wrong; hints point at a byte order or a network mistake; --version, @FILE,
// completion and help keep the contract every command keeps.
func TestContractRows(t *testing.T) {
	dir := t.TempDir()
	binary := filepath.Join(dir, "filter.bin")
	if err := os.WriteFile(binary, mustHex(t, corePayload), 0o600); err != nil {
		t.Fatal(err)
	}
	universe := filepath.Join(dir, "universe.txt")
	if err := os.WriteFile(universe, []byte(coreElem1+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	// A store held by this process: a scan on its directory finds it
	// in use.
	locked := t.TempDir()
	st, err := store.Open(locked, &chaincfg.RegressionNetParams)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	v := gcsVectorAt(t, 49291)
	blockHex := vectorBlockHex(t, block13b8a)
	const node = "127.0.0.1:1"
	internals := []string{"strconv.", "time: ", "invalid argument", "unknown command"}
	in := newRowFiles(t)
	rows := []contractRow{
		{name: "number flag in the tool's words", args: []string{"bloom", "new", "--elements", "-5", "--fprate", "0.01", coreElem1},
			status: exitBadInput, stderr: []string{`--elements "-5": want a whole number`}, notInErr: internals},
		{name: "rate flag in the tool's words", args: []string{"bloom", "new", "--elements", "3", "--fprate", "x", coreElem1},
			status: exitBadInput, stderr: []string{`--fprate "x": want a number`}, notInErr: internals},
		{name: "duration flag in the tool's words", args: []string{"scan", "--peer", node, "--timeout", "5", "--watch", "51"},
			status: exitBadInput, stderr: []string{`--timeout "5": want a duration`}, notInErr: internals},
		{name: "height flag in the tool's words", args: []string{"privacy", "universe", "--peer", node, "--to", "x", "--out", "-"},
			status: exitBadInput, stderr: []string{`--to "x": want a height, a whole number`}, notInErr: internals},
		{name: "repeated flag named", args: []string{"bloom", "new", "--elements", "3", "--elements", "4", "--fprate", "0.01", coreElem1},
			status: exitBadInput, stderr: []string{"--elements", "given twice", `"3"`}},
		{name: "surplus argument named as such", args: []string{"bloom", "inspect", "--filter", corePayload, "extra"},
			status: exitBadInput, stderr: []string{`unexpected argument "extra"`, "takes no arguments"}, notInErr: internals},
		{name: "surplus argument of a command of the root", args: []string{"demo", "extra"},
			status: exitBadInput, stderr: []string{`unexpected argument "extra"`}, notInErr: internals},
		{name: "unknown subcommand still named as a command", args: []string{"gcs", "frobnicate"},
			status: exitBadInput, stderr: []string{`unknown command "frobnicate"`}},
		{name: "binary input named as binary", args: []string{"bloom", "inspect", "--filter", "@" + binary},
			status: exitBadInput, stderr: []string{"binary data, not hex"}, notInErr: []string{"invalid hex character", "odd number"}},
		{name: "binary element file named as binary", args: []string{"bloom", "match", "--filter", corePayload, "@" + binary},
			status: exitBadInput, stderr: []string{"binary data, not hex"}},
		{name: "a data directory in use named by its flag", args: []string{"scan", "--connect", node, "--network", "regtest", "--watch", "51", "--datadir", locked},
			status: exitFailure, stderr: []string{"spvfilter: --datadir " + locked + ": in use by another spvfilter"}, notInErr: []string{"store:", "client:", "LOCK"}},
		{name: "testnet address on regtest named as testnet", args: []string{"scan", "--peer", node, "--network", "regtest", "--watch", "tb1qw508d6qejxtdg4y5r3zarvary0c5xw7kxpjzsx"},
			status: exitBadInput, stderr: []string{"is a testnet (testnet3, testnet4 and signet) address, not a regtest one"}},
		{name: "universe range checked before connecting", args: []string{"privacy", "universe", "--peer", node, "--from", "10", "--to", "5", "--out", "-"},
			status: exitBadInput, stderr: []string{"--to 5 is below --from 10"}, notInErr: []string{"outside", "connect"}},
		{name: "a failure names its object, not the command", args: []string{"privacy", "universe", "--peer", node, "--network", "regtest", "--out", "-"},
			status: exitFailure, stderr: []string{"spvfilter: --peer " + node}, notInErr: []string{"universe:"}},
		{name: "an upstream failure names its flag", args: []string{"privacy", "capture", "--listen", "127.0.0.1:0", "--upstream", node, "--network", "regtest", "--out", "-"},
			status: exitFailure, stderr: []string{"spvfilter: --upstream " + node + ": ", "is a regtest node running at " + node}, notInErr: []string{"capture:"}},
		{name: "universe refuses to replace its output", args: []string{"privacy", "universe", "--peer", node, "--out", universe},
			status: exitBadInput, stderr: []string{"exists", "--force"}},
		{name: "universe as @FILE", args: []string{"privacy", "analyze", "--filter", corePayload, "--universe", "@" + universe},
			status: exitOK, stdout: []string{"universe: 1 candidate"}},
		{name: "--version --json is JSON", args: []string{"--version", "--json"},
			status: exitOK, stdout: []string{`"version": "` + buildVersion() + `"`}},
		{name: "--version is the user agent's version", args: []string{"--version"},
			status: exitOK, stdout: []string{"spvfilter " + userAgentVersion()}},
		{name: "version command is the user agent's version", args: []string{"version"},
			status: exitOK, stdout: []string{"spvfilter " + userAgentVersion()}},
		{name: "privacy help lists fetches", args: []string{"privacy", "--help"},
			status: exitOK, stdout: []string{"  fetches   what a BIP 157 client's block downloads give away", "  simulate  ", "  evaluate  "}},
		{name: "completion of --network", args: []string{"__complete", "scan", "--network", ""},
			status: exitOK, stdout: []string{"regtest\n", "testnet4\n"}},
		{name: "completion of --network in privacy capture", args: []string{"__complete", "privacy", "capture", "--network", "reg"},
			status: exitOK, stdout: []string{"regtest\n"}},
		{name: "completion of --mode", args: []string{"__complete", "scan", "--mode", ""},
			status: exitOK, stdout: []string{"bip157\n", "bip37\n"}},
		{name: "completion of scan --flags", args: []string{"__complete", "scan", "--flags", ""},
			status: exitOK, stdout: []string{"p2pubkey-only\n"}},
		{name: "reversed block hash hinted", args: []string{"gcs", "match", "--filter", v.Filter, "--block-hash", reverseHex(v.BlockHash), "51"},
			status: exitOK, stderr: []string{"warning: --block-hash", "display byte order"}},
		{name: "a one-character txid counted in the singular", args: []string{"scan", "--connect", "127.0.0.1:1", "--network", "regtest", "--watch", "a:0"},
			status: exitBadInput, stderr: []string{"the txid has 1 character, want 64 hex digits"}},
		{name: "a one-byte block hash counted in the singular", args: []string{"gcs", "match", "--filter", v.Filter, "--block-hash", "00", "51"},
			status: exitBadInput, stderr: []string{"--block-hash: 1 byte, a hash has 32"}},
		{name: "a one-byte txid counted in the singular", args: []string{"merkleblock", "build", "--block", blockHex, "--txid", "11"},
			status: exitBadInput, stderr: []string{": 1 byte, a txid has 32"}},
		{name: "one byte after a block counted in the singular", args: []string{"merkleblock", "build", "--block", blockHex + "00", "--txid", txid13b8a8},
			status: exitBadInput, stderr: []string{"--block: 1 byte after the end of the block"}},
		{name: "one byte after a transaction counted in the singular", args: []string{"bloom", "tx", "--filter", corePayload, "--tx", coreTx + "00"},
			status: exitBadInput, stderr: []string{"--tx: 1 byte after the end of the transaction"}},
		{name: "block hash in display order not hinted", args: []string{"gcs", "match", "--filter", v.Filter, "--block-hash", v.BlockHash, "51"},
			status: exitOK, notInErr: []string{"warning"}},
		{name: "reversed txid hinted", args: []string{"merkleblock", "build", "--block", blockHex, "--txid", reverseHex(txid13b8a8)},
			status: exitOK, stderr: []string{"byte-reversed form " + txid13b8a8 + " is"}},
		{name: "txid absent from the block warned", args: []string{"merkleblock", "build", "--block", blockHex, "--txid", strings.Repeat("11", 32)},
			status: exitOK, stderr: []string{"is not in the block"}, notInErr: []string{"byte-reversed"}},
	}
	rows = append(rows, argumentRows()...)
	rows = append(rows, libraryRows(in)...)
	rows = append(rows, nodeRows(in, node)...)
	rows = append(rows, contractBreakRows(in)...)
	rows = append(rows, reviewRows(in, blockHex)...)
	runRows(t, rows)
}

// runRows runs each row as a subtest: its exit status, and the words its
// standard output and error must and must not hold.
func runRows(t *testing.T, rows []contractRow) {
	t.Helper()
	for _, r := range rows {
		t.Run(r.name, func(t *testing.T) {
			stdout, stderr, status := runCLI(t, "", r.args...)
			if status != r.status {
				t.Fatalf("status %d, want %d; stderr %q", status, r.status, stderr)
			}
			for _, want := range r.stdout {
				if !strings.Contains(stdout, want) {
					t.Errorf("stdout %q lacks %q", stdout, want)
				}
			}
			for _, want := range r.stderr {
				if !strings.Contains(stderr, want) {
					t.Errorf("stderr %q lacks %q", stderr, want)
				}
			}
			for _, not := range r.notInErr {
				if strings.Contains(stderr, not) {
					t.Errorf("stderr %q holds %q", stderr, not)
				}
			}
		})
	}
}

// rowFiles are the inputs of the contract rows: a small simulation (its
// labels, captures, index and an analyze report), files that are not what
// a flag wants, and a file where a directory is wanted.
type rowFiles struct {
	dir                          string
	labels, report, capture      string
	fetchCapture, index, sim     string
	empty, object, garbage, file string
	badTime, badHex              string
	// truncated is a report cut short.
	truncated string
	// bip37Fetches is a capture of a BIP 37 client that loaded a filter
	// and asked for filtered blocks.
	bip37Fetches string
	// damagedIndex is the simulation's index with one byte of a block
	// hash changed.
	damagedIndex string
}

func newRowFiles(t *testing.T) rowFiles {
	t.Helper()
	dir := t.TempDir()
	sim := filepath.Join(dir, "sim")
	runOK(t, smallSimulation("7", sim)...)
	f := rowFiles{
		dir: dir, sim: sim,
		labels: filepath.Join(sim, "labels.json"), report: filepath.Join(dir, "report.json"),
		capture: filepath.Join(sim, "capture.jsonl"), fetchCapture: filepath.Join(sim, "fetch-capture.jsonl"),
		index: filepath.Join(sim, "chain.idx"),
		empty: filepath.Join(dir, "empty.txt"), object: filepath.Join(dir, "object.json"), garbage: filepath.Join(dir, "garbage.txt"),
		file: filepath.Join(dir, "file.txt"), badTime: filepath.Join(dir, "bad-time.jsonl"), badHex: filepath.Join(dir, "bad-hex.jsonl"),
		truncated: filepath.Join(dir, "truncated.json"), bip37Fetches: filepath.Join(dir, "bip37-fetches.jsonl"),
		damagedIndex: filepath.Join(dir, "damaged.idx"),
	}
	idx, err := os.ReadFile(f.index)
	if err != nil {
		t.Fatal(err)
	}
	idx[30] ^= 1 // in the first block's hash (after the magic, "regtest" and two counts)
	if err := os.WriteFile(f.damagedIndex, idx, 0o600); err != nil {
		t.Fatal(err)
	}
	report := runOK(t, "privacy", "analyze", "--capture", f.capture, "--universe", filepath.Join(sim, "universe.txt"), "--json")
	for name, text := range map[string]string{
		f.report: report, f.empty: "", f.object: `{"a": 1}` + "\n", f.garbage: "garbage\n", f.file: "a file\n",
		f.badTime:   `{"time":"x","client":"127.0.0.1:5","command":"filterload","filterload":"` + corePayload + `"}` + "\n",
		f.badHex:    `{"time":"2024-01-01T00:00:00Z","client":"127.0.0.1:5","command":"filterload","filterload":"zz"}` + "\n",
		f.truncated: report[:len(report)/2],
		f.bip37Fetches: `{"time":"2024-01-01T00:00:00Z","client":"127.0.0.1:5","session":"s-1","command":"filterload","filterload":"` + corePayload + `"}` + "\n" +
			`{"time":"2024-01-01T00:00:01Z","client":"127.0.0.1:5","session":"s-1","command":"getdata","blocks":[{"hash":"` + strings.Repeat("11", 32) + `","type":"filtered_block"}]}` + "\n",
	} {
		if err := os.WriteFile(name, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return f
}

// argumentRows: cobra's words for arguments, flag groups, required and
// unknown flags are replaced by the tool's, which name the flag or the
// argument and say what is wanted.
func argumentRows() []contractRow {
	cobraWords := []string{"arg(s)", "if any flags in the group", "required flag(s)", "flag needs an argument", "unknown flag", "unknown shorthand"}
	return []contractRow{
		{name: "send without its transaction", args: []string{"send", "--connect", "127.0.0.1:1", "--network", "regtest"},
			status: exitBadInput, stderr: []string{"TX_HEX: give the signed transaction"}, notInErr: cobraWords},
		{name: "send with two transactions", args: []string{"send", "--connect", "127.0.0.1:1", "--network", "regtest", "00", "11"},
			status: exitBadInput, stderr: []string{`unexpected argument "11"`}, notInErr: cobraWords},
		{name: "gcs match without elements", args: []string{"gcs", "match", "--filter", "0174a170", "--block-hash", strings.Repeat("00", 32)},
			status: exitBadInput, stderr: []string{"ELEMENT_HEX: give at least one element"}, notInErr: cobraWords},
		{name: "analyze --filter and --capture", args: []string{"privacy", "analyze", "--filter", corePayload, "--capture", "x", "--universe", "-"},
			status: exitBadInput, stderr: []string{"--filter and --capture: give one or the other, not both"}, notInErr: cobraWords},
		{name: "gcs build --prevout-script and --no-prevouts", args: []string{"gcs", "build", "--block", "00", "--no-prevouts", "--prevout-script", "51"},
			status: exitBadInput, stderr: []string{"--prevout-script and --no-prevouts: give one or the other"}, notInErr: cobraWords},
		{name: "a required flag named with what it takes", args: []string{"bloom", "inspect"},
			status: exitBadInput, stderr: []string{"--filter is required: filterload payload as HEX"}, notInErr: cobraWords},
		{name: "two required flags", args: []string{"privacy", "evaluate"},
			status: exitBadInput, stderr: []string{"--labels is required", "--report is required"}, notInErr: cobraWords},
		{name: "a flag without its value", args: []string{"bloom", "inspect", "--filter"},
			status: exitBadInput, stderr: []string{"--filter needs a value: filterload payload"}, notInErr: cobraWords},
		{name: "a flag that took the next flag as its value", args: []string{"privacy", "analyze", "--capture", "--universe", "u.txt"},
			status: exitBadInput, stderr: []string{"--capture needs a value, not the flag --universe (was its value left out?): give --capture FILE (capture FILE written by"}, notInErr: []string{"unexpected argument"}},
		{name: "a typed flag that took the next flag", args: []string{"bloom", "new", "--elements", "--fprate", "0.1", "aa"},
			status: exitBadInput, stderr: []string{"--elements needs a value, not the flag --fprate"}, notInErr: []string{"want a whole number"}},
		{name: "a checked flag that took the next flag", args: []string{"scan", "--network", "--watch", "51"},
			status: exitBadInput, stderr: []string{"--network needs a value, not the flag --watch"}, notInErr: []string{"want one of"}},
		{name: "a list flag that took the next flag", args: []string{"scan", "--network", "regtest", "--watch", "--connect", "127.0.0.1:1"},
			status: exitBadInput, stderr: []string{"--watch needs a value, not the flag --connect"}, notInErr: []string{"unexpected argument"}},
		{name: "a flag that took the global --json", args: []string{"bloom", "inspect", "--filter", "--json"},
			status: exitBadInput, stderr: []string{"--filter needs a value, not the flag --json"}},
		{name: "a misspelt flag gets the flag meant", args: []string{"bloom", "new", "--elements", "3", "--fp_rate", "0.01"},
			status: exitBadInput, stderr: []string{"--fp_rate: no such flag (did you mean --fprate?)"}, notInErr: cobraWords},
		{name: "an unknown shorthand", args: []string{"demo", "-x"},
			status: exitBadInput, stderr: []string{"-x: no such flag"}, notInErr: cobraWords},
		{name: "scan: a second item after one --watch", args: []string{"scan", "--network", "regtest", "--connect", "127.0.0.1:1", "--watch", "51", "52"},
			status: exitBadInput, stderr: []string{`spvfilter: unexpected argument "52": each item to watch takes its own --watch: give --watch 52` + "\n"}, notInErr: []string{"ITEM..."}},
		{name: "scan: an item without --watch", args: []string{"scan", "--network", "regtest", "51"},
			status: exitBadInput, stderr: []string{`unexpected argument "51"`, "spvfilter scan --watch ITEM [--watch ITEM ...] [--peer"}, notInErr: []string{"ITEM..."}},
		{name: "completion script with an argument", args: []string{"completion", "zsh", "extra"},
			status: exitBadInput, stderr: []string{`unexpected argument "extra"`}, notInErr: []string{"unknown command"}},
	}
}

// libraryRows: errors of the libraries name the flag (or file) at fault
// and say what is wrong in the tool's words, without the libraries' kinds
// ("bad model parameters") or Go's ("EOF", "json:", "parsing time").
func libraryRows(in rowFiles) []contractRow {
	libraryWords := []string{"privacy:", "bad model parameters", "bad simulation options", "bad sweep", "bad plot", "bad labels",
		"bad capture", "EOF", " json: ", "parsing time", "encoding/hex", "gcs:", "MsgTx", "open "}
	out := filepath.Join(in.dir, "new-sim")
	rows := []contractRow{
		{name: "demo used beyond keys", args: []string{"demo", "--used", "300", "--keys", "10"}, stderr: []string{"--used 300: want a whole number from 0 to 10, the --keys", "such as --used 10"}},
		{name: "model addresses", args: []string{"privacy", "model", "--addresses", "0"}, stderr: []string{"--addresses 0: want a whole number from 1 to 4294967295, such as --addresses 100"}},
		{name: "model rate", args: []string{"privacy", "model", "--fprate", "1"}, stderr: []string{"--fprate 1: want a rate in (0, 1), such as --fprate 0.0005"}},
		{name: "model universe below the wallet", args: []string{"privacy", "model", "--addresses", "5", "--universe-size", "3"}, stderr: []string{"--universe-size 3: smaller than the wallet's 5 addresses"}},
		{name: "model pair test", args: []string{"privacy", "model", "--elements-per-address", "1", "--pair-test"}, stderr: []string{"--pair-test: needs 2 elements per address"}},
		{name: "model Monte Carlo trials", args: []string{"privacy", "model", "--monte-carlo", "1"}, stderr: []string{"--monte-carlo 1: want 0 (the default) for none, or at least 2 trials"}},
		{name: "model sweep variable", args: []string{"privacy", "model", "--sweep", "frob=1..2"}, stderr: []string{`--sweep "frob=1..2": unknown variable "frob"`}},
		{name: "model plot format", args: []string{"privacy", "model", "--plot", "leak.txt"}, stderr: []string{"--plot leak.txt: want a file name ending in .svg or .png"}},
		{name: "demo plot format", args: []string{"demo", "--plot", "demo.gif"}, stderr: []string{"--plot demo.gif: want a file name ending in .svg or .png"}},
		{name: "compare peers", args: []string{"privacy", "compare", "--peers", "0"}, stderr: []string{"--peers 0: want a whole number from 1 to 4294967295, such as --peers 1"}},
		{name: "compare blocks", args: []string{"privacy", "compare", "--blocks", "0"}, stderr: []string{"--blocks 0: want a whole number, at least 1, such as --blocks 52560"}},
		{name: "compare rate", args: []string{"privacy", "compare", "--fprate", "5"}, stderr: []string{"--fprate 5: want a rate in (0, 1), such as --fprate 0.0005"}},
		{name: "simulate wallets", args: []string{"privacy", "simulate", "--wallets", "-1", "--out", out}, stderr: []string{"--wallets -1: want a whole number from 0 to 10000, such as --wallets 50"}},
		{name: "simulate blocks", args: []string{"privacy", "simulate", "--blocks", "5", "--out", out}, stderr: []string{"--blocks 5: want a whole number from 10 to 1000000, such as --blocks 1000"}},
		{name: "analyze filter short of a payload", args: []string{"privacy", "analyze", "--filter", corePayload, "--filter", "00", "--universe", in.garbage},
			stderr: []string{"--filter 2: 1 byte is no filterload payload: the length says 0 bytes of filter, so 9 bytes should follow it"}, notInErr: []string{"payload truncated"}},
		{name: "model sweep without its value", args: []string{"privacy", "model", "--sweep"}, stderr: []string{"--sweep needs a value: vary one parameter: VAR=VALUES, VAR one of addresses"}, notInErr: []string{"see above"}},
		{name: "an index given as the universe", args: []string{"privacy", "analyze", "--capture", in.capture, "--universe", in.index},
			stderr: []string{"--universe " + in.index + ": an appearance index of privacy universe --index, not what --universe takes: give it to privacy fetches --index"}, notInErr: []string{"neither an address nor hex"}},
		{name: "an index given as the capture", args: []string{"privacy", "fetches", "--capture", in.index, "--index", in.index},
			stderr: []string{"--capture " + in.index + ": an appearance index of privacy universe --index, not what --capture takes"}},
		{name: "an index given as the labels", args: []string{"privacy", "evaluate", "--labels", in.index, "--report", in.report},
			stderr: []string{"--labels " + in.index + ": an appearance index of privacy universe --index, not what --labels takes"}},
		{name: "the labels given as the universe", args: []string{"privacy", "analyze", "--capture", in.capture, "--universe", in.labels},
			stderr: []string{"--universe " + in.labels + ": the labels of privacy simulate, not what --universe takes: give it to privacy evaluate --labels"}},
		{name: "lab vectors given as blocks", args: []string{"lab", "--blocks", labVectors}, stderr: []string{"--blocks " + labVectors + ": BIP 158's test vectors, not a block file: give it to --vectors"}},
		{name: "lab blocks of another kind", args: []string{"lab", "--blocks", in.garbage}, stderr: []string{"--blocks " + in.garbage + ": ", "(want a block file that lab --save-blocks writes)"}},
		{name: "lab wallet sizes", args: []string{"lab", "--vectors", labVectors, "--wallets", "1,x"}, stderr: []string{`--wallets "1,x": want whole numbers from 1 to 10000000, separated by commas, such as --wallets 100,1000`}},
		{name: "simulate regime", args: []string{"privacy", "simulate", "--regime", "x", "--out", out}, stderr: []string{`--regime "x": want one of standard, payments`}, notInErr: []string{`regime "x": regime`}},
		{name: "lab vectors of another kind", args: []string{"lab", "--vectors", in.object},
			stderr: []string{"--vectors " + in.object + ": it holds a JSON object where a list is wanted (want the JSON file of BIP 158's test vectors"}, notInErr: []string{`field ""`}},
		{name: "simulate range", args: []string{"privacy", "simulate", "--sessions", "3..1", "--out", out}, stderr: []string{`--sessions "3..1": want N or MIN..MAX, whole numbers with MIN <= MAX (one count, or a range drawn from), such as --sessions 1..4`}},
		{name: "simulate nothing", args: []string{"privacy", "simulate", "--wallets", "0", "--noise", "0", "--degenerate", "0", "--fetch-wallets", "0", "--fetch-noise", "0", "--out", out},
			stderr: []string{"--wallets, --noise, --degenerate, --fetch-wallets and --fetch-noise are all 0"}},
		{name: "sizing", args: []string{"bloom", "new", "--elements", "3", "--fprate", "0.01", "--sizing", "foo"}, stderr: []string{`--sizing "foo": want core or bitcoinj`}},
		{name: "bloom new update flags", args: []string{"bloom", "new", "--elements", "3", "--fprate", "0.01", "--flags", "ALL"}, stderr: []string{`--flags "ALL": want none, all or p2pubkey-only`}},
		{name: "bloom new rate", args: []string{"bloom", "new", "--elements", "3", "--fprate", "NaN"}, stderr: []string{"--fprate NaN: want a rate in (0, 1), such as --fprate 0.001"}},
		{name: "labels empty", args: []string{"privacy", "evaluate", "--labels", in.empty, "--report", in.report}, stderr: []string{"--labels " + in.empty + ": empty: want the labels.json"}},
		{name: "labels of another kind", args: []string{"privacy", "evaluate", "--labels", in.object, "--report", in.report}, stderr: []string{"--labels " + in.object + `: field "a": no labels.json has this field; want the labels.json`}},
		{name: "labels not JSON", args: []string{"privacy", "evaluate", "--labels", in.garbage, "--report", in.report}, stderr: []string{"--labels " + in.garbage + ": not JSON"}},
		{name: "a report given as labels", args: []string{"privacy", "evaluate", "--labels", in.report, "--report", in.report}, stderr: []string{"not the labels: give it to --report"}},
		{name: "labels given as a report", args: []string{"privacy", "evaluate", "--labels", in.labels, "--report", in.labels}, stderr: []string{"--report " + in.labels + ": the labels of privacy simulate, not a report: give it to --labels"}},
		{name: "report empty", args: []string{"privacy", "evaluate", "--labels", in.labels, "--report", in.empty}, stderr: []string{"--report " + in.empty + ": empty"}},
		{name: "labels missing", args: []string{"privacy", "evaluate", "--labels", filepath.Join(in.dir, "none.json"), "--report", in.report}, stderr: []string{"--labels " + filepath.Join(in.dir, "none.json") + ": no such file"}},
		{name: "capture time", args: []string{"privacy", "analyze", "--capture", in.badTime, "--universe", in.garbage}, stderr: []string{"--capture " + in.badTime + `, line 1, field "time": time "x": want an RFC 3339 time`}},
		{name: "capture hex", args: []string{"privacy", "analyze", "--capture", in.badHex, "--universe", in.garbage}, stderr: []string{"--capture " + in.badHex + `, line 1, field "filterload": invalid hex character 'z'`}},
		{name: "capture of downloads given to analyze", args: []string{"privacy", "analyze", "--capture", in.fetchCapture, "--universe", in.garbage}, stderr: []string{"no filterload recorded: the file holds BIP 157 downloads: give it to privacy fetches --capture"}},
		{name: "capture of filters given to fetches", args: []string{"privacy", "fetches", "--capture", in.capture, "--index", in.index}, stderr: []string{"give it to privacy analyze --capture"}},
		{name: "capture empty", args: []string{"privacy", "fetches", "--capture", in.empty, "--index", in.index}, stderr: []string{"--capture " + in.empty + ": no record at all"}},
		{name: "client unknown", args: []string{"privacy", "fetches", "--capture", in.fetchCapture, "--index", in.index, "--client", "nobody"}, stderr: []string{"--client nobody: no block request or filter range recorded from it", "whose clients are 127."}},
		{name: "index of another kind", args: []string{"privacy", "fetches", "--capture", in.fetchCapture, "--index", in.garbage}, stderr: []string{"--index " + in.garbage + ": not an appearance index"}},
		{name: "index damaged", args: []string{"privacy", "fetches", "--capture", in.fetchCapture, "--index", in.damagedIndex}, stderr: []string{"--index " + in.damagedIndex + ": a damaged appearance index: checksum", "the file is damaged"}},
		{name: "fetches cover target", args: []string{"privacy", "fetches", "--capture", in.fetchCapture, "--index", in.index, "--cover-target", "1"}, stderr: []string{"--cover-target 1: want 0 (the default) for none, or a probability in (0, 1)"}},
		{name: "fetches collude with intersect", args: []string{"privacy", "fetches", "--capture", in.fetchCapture, "--index", in.index, "--collude", "--intersect"}, stderr: []string{"--collude and --intersect: ", "ask for one"}},
		{name: "fetches second capture missing", args: []string{"privacy", "fetches", "--capture", in.fetchCapture, "--capture", filepath.Join(in.dir, "none.jsonl"), "--index", in.index, "--collude"}, stderr: []string{"--capture " + filepath.Join(in.dir, "none.jsonl") + ": no such file"}},
		{name: "universe line", args: []string{"privacy", "analyze", "--filter", corePayload, "--universe", in.garbage, "--strict"}, stderr: []string{"--universe " + in.garbage + `: universe line 1: "garbage" is neither an address nor hex`}},
		{name: "universe a directory", args: []string{"privacy", "analyze", "--filter", corePayload, "--universe", in.dir}, stderr: []string{"--universe " + in.dir + ": a directory, not a file"}},
		{name: "transaction that ends early", args: []string{"bloom", "tx", "--filter", corePayload, "--tx", "00"}, stderr: []string{"--tx: 1 byte is not a whole transaction: the data end too early, after byte 1"}},
		{name: "transaction with a bad witness flag", args: []string{"send", "--connect", "127.0.0.1:1", "--network", "regtest", "0100000000000000000000"}, stderr: []string{"TX_HEX: 11 bytes are not a whole transaction: byte 6 is 00 where the flag 01 of a segwit transaction must be"}, notInErr: []string{"witness tx"}},
		{name: "filter of a short stream", args: []string{"gcs", "inspect", "--filter", "05"}, stderr: []string{"--filter: the data end too early: the filter counts 5 items (N=5), at least 100 bits of data, and 0 bits follow"}, notInErr: []string{"too large"}},
		{name: "filters to analyze", args: []string{"privacy", "analyze", "--universe", in.garbage}, stderr: []string{"--filter or --capture: give the filters to analyze"}},
		{name: "a swept value out of its domain named under --sweep", args: []string{"privacy", "model", "--sweep", "universe-size=1..3"},
			stderr: []string{`--sweep "universe-size=1..3": universe-size=1: smaller than the wallet's 100 addresses`}, notInErr: []string{"--universe-size 10000000"}},
		{name: "demo without a plot file", args: []string{"demo", "--plot", ""}, stderr: []string{`--plot "": want a file name ending in .svg or .png`}},
		{name: "simulate into a path under a file", args: []string{"privacy", "simulate", "--out", filepath.Join(in.file, "sim")}, stderr: []string{"--out " + filepath.Join(in.file, "sim") + ": " + in.file + " is a file, not a directory"}},
		{name: "a universe that is no list of candidates", args: []string{"privacy", "analyze", "--filter", corePayload, "--universe", in.object}, stderr: []string{"want one candidate per line"}},
		{name: "merkleblock build with a filter and txids", args: []string{"merkleblock", "build", "--block", "00", "--filter", corePayload, "--txid", strings.Repeat("00", 32)}, stderr: []string{"--filter and --txid: give one or the other, not both"}},
		{name: "an empty watch item", args: []string{"scan", "--connect", "127.0.0.1:1", "--network", "regtest", "--watch", ""}, stderr: []string{"--watch 1: empty: give an address"}, notInErr: []string{"empty hex"}},
		{name: "testnet is no network", args: []string{"scan", "--connect", "127.0.0.1:1", "--network", "testnet", "--watch", "51"}, stderr: []string{"(testnet is testnet3 or testnet4)"}},
		{name: "--isolate without a proxy", args: []string{"scan", "--connect", "127.0.0.1:1", "--network", "regtest", "--watch", "51", "--isolate"}, stderr: []string{"--isolate without --proxy: ", "give --proxy"}},
		{name: "a privacy target of 1", args: []string{"scan", "--connect", "127.0.0.1:1", "--network", "regtest", "--watch", "51", "--privacy-target", "1", "--datadir", in.dir}, stderr: []string{"--privacy-target 1: want a probability in (0, 1)"}},
		{name: "a negative privacy target", args: []string{"scan", "--connect", "127.0.0.1:1", "--network", "regtest", "--watch", "51", "--privacy-target", "-0.5", "--datadir", in.dir}, stderr: []string{"--privacy-target -0.5: want a probability in (0, 1)"}},
		{name: "a privacy target that is no number", args: []string{"scan", "--connect", "127.0.0.1:1", "--network", "regtest", "--watch", "51", "--privacy-target", "half"}, stderr: []string{"--privacy-target"}},
		{name: "a privacy target without a data directory", args: []string{"scan", "--connect", "127.0.0.1:1", "--network", "regtest", "--watch", "51", "--privacy-target", "0.5"}, stderr: []string{"--privacy-target without a data directory", "give --datadir"}},
		{name: "a privacy target and a rate in BIP 37", args: []string{"scan", "--connect", "127.0.0.1:1", "--network", "regtest", "--watch", "51", "--mode", "bip37", "--privacy-target", "0.5", "--fprate", "0.001"}, stderr: []string{"--fprate 0.001 and --privacy-target 0.5: give one"}},
		{name: "covers in BIP 37", args: []string{"scan", "--connect", "127.0.0.1:1", "--network", "regtest", "--watch", "51", "--mode", "bip37", "--privacy-target", "0.5", "--new-covers"}, stderr: []string{"--new-covers is for --mode bip157"}, notInErr: []string{"--max-cover-blocks"}},
		{name: "a cover bound in BIP 37", args: []string{"scan", "--connect", "127.0.0.1:1", "--network", "regtest", "--watch", "51", "--mode", "bip37", "--max-cover-blocks", "5"}, stderr: []string{"--max-cover-blocks is for --mode bip157"}, notInErr: []string{"--new-covers"}},
		{name: "all cover flags in BIP 37", args: []string{"scan", "--connect", "127.0.0.1:1", "--network", "regtest", "--watch", "51", "--mode", "bip37", "--max-cover-blocks", "5", "--new-covers", "--allow-short-covers"}, stderr: []string{"--new-covers, --max-cover-blocks and --allow-short-covers are for --mode bip157"}},
		{name: "a negative universe in BIP 37", args: []string{"scan", "--connect", "127.0.0.1:1", "--network", "regtest", "--watch", "51", "--mode", "bip37", "--universe-size", "-5"}, stderr: []string{"--universe-size", "want a whole number of scripts, more than the watch list's"}, notInErr: []string{"at least 0"}},
		{name: "an empty universe in BIP 37", args: []string{"scan", "--connect", "127.0.0.1:1", "--network", "regtest", "--watch", "51", "--mode", "bip37", "--universe-size", "0"}, stderr: []string{"--universe-size 0", "want more than 1"}},
		{name: "advise as a subcommand", args: []string{"privacy", "model", "advise"}, stderr: []string{`unexpected argument "advise"`, "--target-p-h-all", "--target-p-h-1"}},
		{name: "a universe in BIP 157", args: []string{"scan", "--connect", "127.0.0.1:1", "--network", "regtest", "--watch", "51", "--universe-size", "1000"}, stderr: []string{"--universe-size needs --mode bip37"}},
		{name: "--new-covers without a target", args: []string{"scan", "--connect", "127.0.0.1:1", "--network", "regtest", "--watch", "51", "--new-covers"}, stderr: []string{"--new-covers is for --privacy-target"}, notInErr: []string{"--max-cover-blocks"}},
		{name: "a cover bound without a target", args: []string{"scan", "--connect", "127.0.0.1:1", "--network", "regtest", "--watch", "51", "--max-cover-blocks", "5"}, stderr: []string{"--max-cover-blocks is for --privacy-target"}, notInErr: []string{"--new-covers"}},
		{name: "--isolate in BIP 37", args: []string{"scan", "--connect", "127.0.0.1:1", "--network", "regtest", "--watch", "51", "--mode", "bip37", "--isolate", "--proxy", "socks5://127.0.0.1:9050"}, stderr: []string{"--isolate with --mode bip37: "}},
		{name: "a negative height", args: []string{"scan", "--connect", "127.0.0.1:1", "--network", "regtest", "--from", "-1", "--watch", "51"}, stderr: []string{"--from -1: want a height, a whole number from 0 to 2147483647"}},
		{name: "an index file that is a directory", args: []string{"privacy", "universe", "--peer", "127.0.0.1:1", "--network", "regtest", "--out", "-", "--index", in.dir}, stderr: []string{"--index " + in.dir + ": a directory, not a file"}},
		{name: "a typo in an address", args: []string{"scan", "--connect", "127.0.0.1:1", "--network", "regtest", "--watch", "tb1qw508d6qejxtdg4y5r3zarvary0c5xw7kxpjzsy"},
			stderr: []string{"--watch 1: tb1qw508d6qejxtdg4y5r3zarvary0c5xw7kxpjzsy is not a valid address: its bech32 checksum does not match: a character is wrong, missing or swapped (a typo?)"}, notInErr: []string{"expected"}},
	}
	for i := range rows {
		rows[i].status, rows[i].notInErr = exitBadInput, append(rows[i].notInErr, libraryWords...)
		rows[i].name = "library error in the tool's words: " + rows[i].name
	}
	return rows
}

// nodeRows: failures to reach a node, and flags about nodes, in the
// tool's words; a --proxy that cannot be one is refused before anything
// connects.
func nodeRows(in rowFiles, node string) []contractRow {
	goWords := []string{"dial tcp", "peer disconnected", "client:", "finding peers", "DNS seeds", "mkdir", "first path segment", "privacy:"}
	return []contractRow{
		{name: "a node that refuses", args: []string{"scan", "--connect", node, "--network", "regtest", "--watch", "51"},
			status: exitFailure, stderr: []string{"spvfilter: --connect " + node + ": connection refused: nothing listens there (is a regtest node listening on " + node + "?)"}, notInErr: goWords},
		{name: "--peer on regtest without the seeds it has not", args: []string{"scan", "--peer", node, "--peer", "127.0.0.1:2", "--network", "regtest", "--watch", "51"},
			status: exitFailure, stderr: []string{"spvfilter: no node could be reached: --peer " + node + ": connection refused", "; --peer 127.0.0.1:2: connection refused"}, notInErr: goWords},
		{name: "send to a node that refuses", args: []string{"send", "--connect", node, "--network", "regtest", coreTx},
			status: exitFailure, stderr: []string{"spvfilter: --connect " + node + ": connection refused"}, notInErr: goWords},
		{name: "peers from a node that refuses", args: []string{"peers", "--peer", node, "--network", "regtest"},
			status: exitFailure, stderr: []string{"spvfilter: --peer " + node + ": connection refused: nothing listens there"}, notInErr: goWords},
		{name: "lab from a node that refuses", args: []string{"lab", "--connect", node, "--network", "regtest"},
			status: exitFailure, stderr: []string{"spvfilter: --connect " + node + ": connection refused: nothing listens there"}, notInErr: goWords},
		{name: "universe from its node alone", args: []string{"privacy", "universe", "--peer", node, "--network", "regtest", "--out", "-"},
			status: exitFailure, stderr: []string{"peer " + node + ": connection refused"}, notInErr: goWords},
		{name: "an upstream that refuses", args: []string{"privacy", "capture", "--listen", "127.0.0.1:0", "--upstream", node, "--network", "regtest", "--out", "-"},
			status: exitFailure, stderr: []string{"spvfilter: --upstream " + node + ": connection refused"}, notInErr: goWords},
		{name: "a proxy port out of range refused before connecting", args: []string{"scan", "--connect", node, "--network", "regtest", "--watch", "51", "--proxy", "socks5://127.0.0.1:99999"},
			status: exitBadInput, stderr: []string{`--proxy socks5://127.0.0.1:99999: port "99999" is not a number from 1 to 65535`}, notInErr: append(goWords, "peer "+node)},
		{name: "a proxy without its scheme", args: []string{"scan", "--connect", node, "--network", "regtest", "--watch", "51", "--proxy", "127.0.0.1:9050"},
			status: exitBadInput, stderr: []string{"(the scheme socks5:// is missing)"}, notInErr: goWords},
		{name: "a proxy's password never shown", args: []string{"scan", "--connect", node, "--network", "regtest", "--watch", "51", "--proxy", "u:secret@127.0.0.1:9050"},
			status: exitBadInput, stderr: []string{"(the scheme socks5:// is missing)"}, notInErr: []string{"secret"}},
		{name: "a proxy that refuses", args: []string{"scan", "--connect", node, "--network", "regtest", "--watch", "51", "--proxy", "socks5://127.0.0.1:1"},
			status: exitFailure, stderr: []string{"spvfilter: --connect " + node + ": the --proxy is unreachable: connection refused"}, notInErr: goWords},
		{name: "a data directory under a file", args: []string{"scan", "--connect", node, "--network", "regtest", "--watch", "51", "--datadir", filepath.Join(in.file, "sub")},
			status: exitBadInput, stderr: []string{"--datadir " + filepath.Join(in.file, "sub") + ": " + in.file + " is a file, not a directory"}, notInErr: goWords},
		{name: "peers offline with a file for a data directory", args: []string{"peers", "--network", "regtest", "--datadir", in.file},
			status: exitBadInput, stderr: []string{"spvfilter: --datadir " + in.file + ": a file, not a directory"}, notInErr: goWords},
		{name: "peers offline with a data directory under a file", args: []string{"peers", "--network", "regtest", "--datadir", filepath.Join(in.file, "sub")},
			status: exitBadInput, stderr: []string{"spvfilter: --datadir " + filepath.Join(in.file, "sub") + ": " + in.file + " is a file, not a directory"}, notInErr: goWords},
		{name: "peers with a file for a data directory", args: []string{"peers", "--connect", node, "--network", "regtest", "--datadir", in.file},
			status: exitBadInput, stderr: []string{"--datadir " + in.file + ": a file, not a directory"}, notInErr: goWords},
		{name: "no node on regtest", args: []string{"scan", "--network", "regtest", "--watch", "51"},
			status: exitBadInput, stderr: []string{"no node given: regtest has no DNS seeds to find nodes with; give a node with --connect HOST:PORT"}, notInErr: []string{"--connect:"}},
		{name: "an onion address without a proxy refused before connecting", args: []string{"scan", "--connect", "abcdefghijklmnop.onion:8333", "--network", "regtest", "--watch", "51"},
			status: exitBadInput, stderr: []string{"--connect abcdefghijklmnop.onion:8333: an onion address needs --proxy"}, notInErr: []string{"Config.Proxy", "client:"}},
		{name: "a node's URL", args: []string{"scan", "--connect", "http://127.0.0.1:18444", "--network", "regtest", "--watch", "51"},
			status: exitBadInput, stderr: []string{`--connect "http://127.0.0.1:18444": a URL (http://): give the address alone; want HOST:PORT`}, notInErr: []string{"too many colons in address"}},
		{name: "an IPv6 address without brackets", args: []string{"peers", "--peer", "::1:18444", "--network", "regtest"},
			status: exitBadInput, stderr: []string{`--peer "::1:18444": too many colons: an IPv6 address goes in brackets; want HOST:PORT, such as 127.0.0.1:8333 or [::1]:8333`}},
		{name: "--connect checked as --peer is", args: []string{"scan", "--connect", "127.0.0.1", "--network", "regtest", "--watch", "51"},
			status: exitBadInput, stderr: []string{`--connect "127.0.0.1": no port; want HOST:PORT`}},
	}
}

// contractBreakRows: --json is honoured by every command, help and
// completion included, and carries warnings; simulate does not write
// over an earlier simulation; a filter that cannot reach its rate says
// so; usage lines and examples say what the README says.
func contractBreakRows(in rowFiles) []contractRow {
	return []contractRow{
		{name: "version --json carries warnings", args: []string{"version", "--json"}, stdout: []string{`"warnings": []`}},
		{name: "--version --json carries warnings", args: []string{"--version", "--json"}, stdout: []string{`"warnings": []`}},
		{name: "help --json", args: []string{"help", "--json"}, stdout: []string{`"command": "spvfilter"`, `"help": "spvfilter builds`, `"warnings": []`}},
		{name: "--json alone", args: []string{"--json"}, stdout: []string{`"command": "spvfilter"`, `"warnings": []`}},
		{name: "privacy --json", args: []string{"privacy", "--json"}, stdout: []string{`"command": "spvfilter privacy"`}},
		{name: "scan --help --json", args: []string{"scan", "--help", "--json"}, stdout: []string{`"command": "spvfilter scan"`, `"help": "scan connects`}},
		{name: "completion --json", args: []string{"completion", "bash", "--json"}, stdout: []string{`"shell": "bash"`, `"script": "# bash completion`, `"warnings": []`}},
		{name: "simulate refuses to write over an earlier simulation", args: []string{"privacy", "simulate", "--out", in.sim},
			status: exitBadInput, stderr: []string{"--out " + in.sim + ": holds universe.txt, capture.jsonl, labels.json, chain.idx, fetch-capture.jsonl of an earlier simulation: give --force"}},
		{name: "a rate beyond 50 hash functions warned", args: []string{"bloom", "new", "--elements", "10", "--fprate", "1e-300"},
			stderr: []string{"spvfilter: warning: --elements 10 at --fprate 1e-300: the rate needs about 996 hash functions and a filter has at most 50"}},
		{name: "send's network is optional in its usage", args: []string{"send", "--help"}, stdout: []string{"[--network NET] TX_HEX"}},
		{name: "regtest examples use --connect", args: []string{"--help"}, stdout: []string{"spvfilter scan --connect 127.0.0.1:18444 --network regtest"}},
	}
}

// reverseHex reverses the bytes of a hex string: a hash in the other
// byte order.
func reverseHex(s string) string {
	var b strings.Builder
	for i := len(s); i >= 2; i -= 2 {
		b.WriteString(s[i-2 : i])
	}
	return b.String()
}

func mustHex(t *testing.T, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(s)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// reviewRows: what a newcomer's review of the tool found still said in
// the libraries' or Go's words, blaming the wrong cause or flag, or
// accepted without a word.
func reviewRows(in rowFiles, blockHex string) []contractRow {
	const node = "127.0.0.1:1"
	return []contractRow{
		{name: "a header not asked for is null", args: []string{"gcs", "build", "--block", blockHex, "--no-prevouts", "--json"},
			status: exitOK, stdout: []string{`"header": null`}},
		{name: "a transaction that ends after its segwit marker", args: []string{"bloom", "tx", "--filter", corePayload, "--tx", "0100000000"},
			status: exitBadInput, stderr: []string{"--tx: 5 bytes are not a whole transaction: the data end after the segwit marker 00"}, notInErr: []string{"empty", "no data at all"}},
		{name: "send names its argument TX_HEX", args: []string{"send", "--connect", node, "--network", "regtest", "0100000000"},
			status: exitBadInput, stderr: []string{"TX_HEX: 5 bytes are not a whole transaction: the data end after the segwit marker"}, notInErr: []string{"spvfilter: transaction:", "no data at all"}},
		{name: "send's bad hex names TX_HEX", args: []string{"send", "--connect", node, "--network", "regtest", "zz"},
			status: exitBadInput, stderr: []string{"TX_HEX: invalid hex character 'z'"}, notInErr: []string{"spvfilter: transaction:"}},
		{name: "a count not in its shortest form", args: []string{"bloom", "tx", "--filter", corePayload, "--tx", "01000000fd0000"},
			status: exitBadInput, stderr: []string{"the count (CompactSize) ending at byte 7 is not written in its shortest form"}, notInErr: []string{"varint", "discriminant"}},
		{name: "a count of inputs no transaction holds", args: []string{"bloom", "tx", "--filter", corePayload, "--tx", "01000000ffffffffffffffffff"},
			status: exitBadInput, stderr: []string{"it announces 18446744073709551615 inputs, more than a transaction can hold (at most"}, notInErr: []string{"input transactions", "max message size"}},
		{name: "a filter cut short after its count", args: []string{"gcs", "inspect", "--filter", "01"},
			status: exitBadInput, stderr: []string{"--filter: the data end too early: the filter counts 1 item (N=1), at least 20 bits of data"}, notInErr: []string{"too large", "1 items"}},
		{name: "a bech32 checksum that does not match", args: []string{"scan", "--connect", node, "--network", "regtest", "--watch", "bcrt1qw508d6qejxtdg4y5r3zarvary0c5xw7kygt08x"},
			status: exitBadInput, stderr: []string{"is not a valid address: its bech32 checksum does not match: a character is wrong"}, notInErr: []string{"ygt080", "expected"}},
		{name: "a character bech32 has not", args: []string{"scan", "--connect", node, "--network", "regtest", "--watch", "bcrt1qw508d6qejxtdg4y5r3zarvary0c5xw7kygt081"},
			status: exitBadInput, stderr: []string{"'1' at character 44 is not one of bech32's"}, notInErr: []string{"unknown format"}},
		{name: "a capture line that is no JSON", args: []string{"privacy", "analyze", "--capture", in.garbage, "--universe", in.garbage},
			status: exitBadInput, stderr: []string{"--capture " + in.garbage + ", line 1: not JSON: 'g' at byte 1 cannot be there"}, notInErr: []string{"invalid character", "looking for"}},
		{name: "a capture given as the labels", args: []string{"privacy", "evaluate", "--labels", in.capture, "--report", in.report},
			status: exitBadInput, stderr: []string{"--labels " + in.capture + ": a capture of privacy capture (JSON lines), not what --labels takes"}, notInErr: []string{"unknown field"}},
		{name: "the labels given to analyze as a capture", args: []string{"privacy", "analyze", "--capture", in.labels, "--universe", in.garbage},
			status: exitBadInput, stderr: []string{"--capture " + in.labels + ": the labels of privacy simulate, not what --capture takes: give it to privacy evaluate --labels"}, notInErr: []string{"too early"}},
		{name: "the labels given to fetches as a capture", args: []string{"privacy", "fetches", "--capture", in.labels, "--index", in.index},
			status: exitBadInput, stderr: []string{"the labels of privacy simulate, not what --capture takes"}, notInErr: []string{"too early"}},
		{name: "a report given to fetches as a capture", args: []string{"privacy", "fetches", "--capture", in.report, "--index", in.index},
			status: exitBadInput, stderr: []string{"a report of privacy analyze or fetches, not what --capture takes: give it to privacy evaluate --report"}},
		{name: "a report cut short", args: []string{"privacy", "evaluate", "--labels", in.labels, "--report", in.truncated},
			status: exitBadInput, stderr: []string{"--report " + in.truncated + ": not JSON: the data end too early"}, notInErr: []string{"not a JSON object"}},
		{name: "capture does not append to the labels", args: []string{"privacy", "capture", "--listen", "127.0.0.1:0", "--upstream", node, "--network", "regtest", "--out", in.labels},
			status: exitBadInput, stderr: []string{"--out " + in.labels + ": holds the labels of privacy simulate, not capture records"}},
		{name: "capture does not append to a text", args: []string{"privacy", "capture", "--listen", "127.0.0.1:0", "--upstream", node, "--network", "regtest", "--out", in.garbage},
			status: exitBadInput, stderr: []string{"holds something other than capture records"}},
		{name: "simulate without a directory", args: []string{"privacy", "simulate", "--out", ""},
			status: exitBadInput, stderr: []string{`--out "": give the directory to write the files into`}},
		{name: "compare refuses a wallet of no block", args: []string{"privacy", "compare", "--blocks", "100", "--wallet-blocks", "0"},
			status: exitBadInput, stderr: []string{"--wallet-blocks 0: fewer than the 2 blocks each of the wallet's scripts appears in (--appearances)"}},
		{name: "compare refuses appearances beyond the blocks", args: []string{"privacy", "compare", "--appearances", "100000"},
			status: exitBadInput, stderr: []string{"--appearances 100000: more than the 52560 blocks scanned (--blocks): give --appearances 52560 at most"}},
		{name: "compare blames the blocks given, not the default appearances", args: []string{"privacy", "compare", "--blocks", "1", "--wallet-blocks", "1"},
			status: exitBadInput, stderr: []string{"--blocks 1: fewer than the --appearances 2 blocks each script appears in"}},
		{name: "compare's default wallet blocks hold each script's appearances", args: []string{"privacy", "compare", "--addresses", "1"},
			status: exitOK, stdout: []string{"2 with wallet transactions"}},
		{name: "demo blames the extra elements given, not the keys", args: []string{"demo", "--extra-elements", "4294967295"},
			status: exitBadInput, stderr: []string{"--extra-elements 4294967295: the filter would be sized for more than the 4294967295 elements a filter counts"}, notInErr: []string{"--keys"}},
		{name: "model blames the extra elements given, not the addresses", args: []string{"privacy", "model", "--extra-elements", "4294967295"},
			status: exitBadInput, stderr: []string{"--extra-elements 4294967295: the filter would be sized for"}, notInErr: []string{"--addresses"}},
		{name: "model blames the addresses given, not the default universe", args: []string{"privacy", "model", "--addresses", "4294967295"},
			status: exitBadInput, stderr: []string{"--addresses 4294967295: more than the --universe-size 10000000 candidates"}, notInErr: []string{"--universe-size 10000000:"}},
		{name: "a sweep's decimal steps shown as given", args: []string{"privacy", "model", "--sweep", "fprate=0.1..0.9:0.1"},
			status: exitOK, stdout: []string{"\n     0.3     93 "}, notInErr: []string{"0.7000000000000001", "0.30000000000000004"}},
		{name: "an unknown command gets the commands meant, on one line", args: []string{"scna"},
			status: exitBadInput, stderr: []string{`unknown command "scna" for "spvfilter" (did you mean scan or send?)`}, notInErr: []string{"Did you mean this"}},
		{name: "an unknown subcommand gets the one meant", args: []string{"privacy", "modle"},
			status: exitBadInput, stderr: []string{`unknown command "modle" for "spvfilter privacy" (did you mean model?)`}},
		{name: "a range message says what the command takes", args: []string{"bloom", "new", "--elements", "-1", "--fprate", "0.1"},
			status: exitBadInput, stderr: []string{`--elements "-1": want a whole number from 1 to 4294967295`}},
		{name: "a height out of int32 said as a height", args: []string{"scan", "--connect", node, "--network", "regtest", "--watch", "51", "--from", "2147483648"},
			status: exitBadInput, stderr: []string{`--from "2147483648": want a height, a whole number from 0 to 2147483647`}, notInErr: []string{"-2147483648"}},
		{name: "fetches names the downloads of BIP 37 clients as such", args: []string{"privacy", "fetches", "--capture", in.bip37Fetches, "--index", in.index},
			status: exitBadInput, stderr: []string{"--capture " + in.bip37Fetches + ": its 1 session with downloads is a BIP 37 client: it loaded a filter", "give the capture to privacy analyze --capture"}, notInErr: []string{"reveal nothing"}},
		{name: "bloom add warns of an element too large for a filteradd", args: []string{"bloom", "add", "--filter", corePayload, strings.Repeat("aa", 600)},
			status: exitOK, stderr: []string{"warning: element 1 is 600 bytes: added here, but a node refuses a filteradd element of more than 520 bytes"}},
		{name: "scan refuses an OP_RETURN script in bip157", args: []string{"scan", "--connect", node, "--network", "regtest", "--watch", "6a"},
			status: exitBadInput, stderr: []string{"--watch 1: script 6a begins with OP_RETURN: BIP 158 filters leave such outputs out"}},
		{name: "scan refuses a BIP 37 filter that matches everything, as bloom new does", args: []string{"scan", "--connect", node, "--network", "regtest", "--mode", "bip37", "--fprate", "0.9", "--watch", "0014751e76e8199196d454941c45d1b3a323f1433bd6"},
			status: exitBadInput, stderr: []string{"--fprate 0.9: the BIP 37 filter of the watch list would match everything"}, notInErr: []string{"matches everything: no hash functions: the filter"}},
		{name: "--link-threshold without --link", args: []string{"privacy", "analyze", "--capture", in.capture, "--universe", in.garbage, "--link-threshold", "0.9"},
			status: exitBadInput, stderr: []string{"--link-threshold 0.9 needs --link"}},
		{name: "link warnings name sessions by their ids", args: []string{"privacy", "analyze", "--capture", in.capture, "--universe", filepath.Join(in.sim, "universe.txt"), "--link"},
			status: exitOK, stderr: []string{"warning: link: session sim7-"}, notInErr: []string{"link: session 2:", "link: session 12:"}},
		{name: "a data directory that reads as @FILE", args: []string{"scan", "--connect", node, "--network", "regtest", "--watch", "51", "--datadir", "@st"},
			status: exitBadInput, stderr: []string{`--datadir "@st": a path to write to, not @FILE (for a name that begins with @, write ./@st)`}},
		{name: "simulate checks its options before --out", args: []string{"privacy", "simulate", "--payers", "0", "--out", in.sim},
			status: exitBadInput, stderr: []string{"--payers 0: "}, notInErr: []string{"--force"}},
	}
}
