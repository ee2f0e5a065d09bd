package main

import (
	"fmt"
	"math"
	"math/rand/v2"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

type adviceRowOut struct {
	Filters                  uint32  `json:"filter_count"`
	Reachable                bool    `json:"reachable"`
	FPRate                   float64 `json:"fp_rate"`
	FPRateText               string  `json:"fp_rate_text"`
	FPRateMin                float64 `json:"fp_rate_min"`
	FPRateMax                float64 `json:"fp_rate_max"`
	FilterBytes              uint32  `json:"filter_bytes"`
	HashFuncs                uint32  `json:"hash_function_count"`
	PH1Exact                 float64 `json:"p_h_1_exact"`
	PHAllExact               float64 `json:"p_h_all_exact"`
	PH1OverFills             float64 `json:"p_h_1_over_fills"`
	PHAllOverFills           float64 `json:"p_h_all_over_fills"`
	FalsePositiveTxsPerBlock float64 `json:"expected_false_positive_transactions_per_block"`
	CoreLargest              bool    `json:"core_largest"`
	BloomNew                 string  `json:"bloom_new"`
}

type adviceOut struct {
	SizingElements  uint32         `json:"sizing_element_count"`
	SizingsSearched int            `json:"sizings_searched"`
	Rows            []adviceRowOut `json:"rows"`
	Warnings        []string       `json:"warnings"`
}

// modelAt runs the plain model command at a rate and returns its JSON.
func modelAt(t *testing.T, wallet []string, rate float64, filters uint32) map[string]any {
	t.Helper()
	// The row's --filters, not the wallet's: a flag is given once.
	args := []string{"privacy", "model", "--json"}
	for i := 0; i < len(wallet); i++ {
		if wallet[i] == "--filters" {
			i++
			continue
		}
		args = append(args, wallet[i])
	}
	args = append(args, "--fprate", strconv.FormatFloat(rate, 'g', -1, 64), "--filters", strconv.Itoa(int(filters)))
	stdout, stderr, status := runCLI(t, "", args...)
	if status != exitOK {
		t.Fatalf("%q: status %d: %s", args, status, stderr)
	}
	var m map[string]any
	decodeJSON(t, stdout, &m)
	return m
}

// bloomNewFilter runs the row's bloom new command and returns the size
// and hash-function count of the filter it builds.
func bloomNewFilter(t *testing.T, command string) (bytes, hashFuncs uint32) {
	t.Helper()
	args := strings.Fields(command)
	if len(args) < 3 || args[0] != "spvfilter" {
		t.Fatalf("command %q", command)
	}
	stdout, stderr, status := runCLI(t, "", append(args[1:], "--json")...)
	if status != exitOK {
		t.Fatalf("%q: status %d: %s", command, status, stderr)
	}
	var f struct {
		Stats struct {
			FilterBytes uint32 `json:"filter_bytes"`
			HashFuncs   uint32 `json:"hash_function_count"`
		} `json:"bloom_filter"`
	}
	decodeJSON(t, stdout, &f)
	return f.Stats.FilterBytes, f.Stats.HashFuncs
}

// The advice's rate, given back to the model command, builds the filter
// advised and meets the target; the rate just below its interval builds a
// larger filter; the bloom new command printed builds the filter.
func TestPrivacyModelTargetAgreesWithModel(t *testing.T) {
	tests := []struct {
		wallet    []string
		target    string // flag name
		x         float64
		key       string // the model's key the target bounds
		rows      int
		reachable bool
	}{
		{[]string{"--addresses", "20", "--universe-size", "10000000", "--filters", "3"}, "target-p-h-all", 0.5, "p_h_all_exact", 2, true},
		{[]string{"--addresses", "20", "--universe-size", "10000000"}, "target-p-h-1", 0.5, "p_h_1_exact", 1, true},
		{[]string{"--addresses", "20", "--universe-size", "10000000", "--sizing", "bitcoinj", "--filters", "3"}, "target-p-h-1", 0.5, "p_h_1_exact", 2, true},
		{[]string{"--addresses", "100", "--universe-size", "1000000000"}, "target-p-h-1", 0.1, "p_h_1_exact", 1, true},
		{[]string{"--addresses", "1000", "--universe-size", "10000000", "--filters", "2", "--pair-test"}, "target-p-h-1", 0.5, "p_h_1_exact", 2, true},
		{[]string{"--addresses", "266", "--universe-size", "100000000", "--sizing", "bitcoinj", "--filters", "2"}, "target-p-h-all", 0.5, "p_h_all_exact", 2, true},
		{[]string{"--addresses", "100", "--universe-size", "1000"}, "target-p-h-1", 0.01, "p_h_1_exact", 1, false},
	}
	for _, tc := range tests {
		name := strings.Join(append(tc.wallet, tc.target), " ")
		t.Run(name, func(t *testing.T) {
			args := append([]string{"privacy", "model", "--json", "--" + tc.target, strconv.FormatFloat(tc.x, 'g', -1, 64)}, tc.wallet...)
			stdout, stderr, status := runCLI(t, "", args...)
			if status != exitOK {
				t.Fatalf("status %d: %s", status, stderr)
			}
			var a adviceOut
			decodeJSON(t, stdout, &a)
			if len(a.Rows) != tc.rows || a.SizingsSearched == 0 || a.Warnings == nil {
				t.Fatalf("advice %+v", a)
			}
			if stderr != "" {
				t.Errorf("--json: standard error %q, want the warnings in the JSON alone", stderr)
			}
			if !tc.reachable && !strings.Contains(strings.Join(a.Warnings, "\n"), "no filter Bitcoin Core builds") {
				t.Errorf("unreachable target without a warning: %q / %s", a.Warnings, stderr)
			}
			for _, row := range a.Rows {
				if row.Reachable != tc.reachable {
					t.Fatalf("row %+v: reachable %v, want %v", row, row.Reachable, tc.reachable)
				}
				if b, k := bloomNewFilter(t, row.BloomNew); b != row.FilterBytes || k != row.HashFuncs {
					t.Fatalf("%q builds %d bytes k=%d, advice %d, %d", row.BloomNew, b, k, row.FilterBytes, row.HashFuncs)
				}
				if !strings.Contains(row.BloomNew, fmt.Sprintf("--elements %d --fprate %s ", a.SizingElements, row.FPRateText)) {
					t.Fatalf("command %q for rate %s", row.BloomNew, row.FPRateText)
				}
				m := modelAt(t, tc.wallet, row.FPRate, row.Filters)
				if uint32(m["filter_bytes"].(float64)) != row.FilterBytes || uint32(m["hash_function_count"].(float64)) != row.HashFuncs {
					t.Fatalf("rate %v: model builds %v bytes k=%v, advice %d, %d", row.FPRate, m["filter_bytes"], m["hash_function_count"], row.FilterBytes, row.HashFuncs)
				}
				if got := m[tc.key].(float64) < tc.x; got != tc.reachable {
					t.Fatalf("rate %v: model %s = %v against target %v", row.FPRate, tc.key, m[tc.key], tc.x)
				}
				if !tc.reachable || row.CoreLargest {
					continue
				}
				below := modelAt(t, tc.wallet, math.Nextafter(row.FPRateMin, 0), row.Filters)
				if uint32(below["filter_bytes"].(float64)) <= row.FilterBytes {
					t.Fatalf("the rate below %v builds %v bytes, not a larger filter than %d", row.FPRateMin, below["filter_bytes"], row.FilterBytes)
				}
			}
		})
	}
}

// A property over random wallets, universes, targets and sizing rules:
// the rate the text output prints, the JSON rate and the rate in the
// printed bloom new command are one number, and it builds the advised
// filter.
func TestPrivacyModelTargetPrintedRate(t *testing.T) {
	rng := rand.New(rand.NewPCG(18, 3))
	for i := 0; i < 12; i++ {
		args := []string{"privacy", "model",
			"--addresses", strconv.Itoa(1 + rng.IntN(1500)),
			"--universe-size", strconv.FormatUint(uint64(2000+rng.Float64()*1e9), 10),
			"--filters", strconv.Itoa(1 + rng.IntN(3)),
			"--sizing", []string{"core", "bitcoinj"}[rng.IntN(2)],
			[]string{"--target-p-h-1", "--target-p-h-all"}[rng.IntN(2)], strconv.FormatFloat(0.05+0.9*rng.Float64(), 'f', 3, 64),
		}
		if rng.IntN(3) == 0 {
			args = append(args, "--pair-test")
		}
		text, stderr, status := runCLI(t, "", args...)
		if status != exitOK {
			t.Fatalf("%q: status %d: %s", args, status, stderr)
		}
		js, _, _ := runCLI(t, "", append(args, "--json")...)
		var a adviceOut
		decodeJSON(t, js, &a)
		commands := regexp.MustCompile(`spvfilter bloom new --elements (\d+) --fprate (\S+) --sizing (\S+)`).FindAllStringSubmatch(text, -1)
		if len(commands) != len(a.Rows) {
			t.Fatalf("%q: %d commands in the text, %d rows:\n%s", args, len(commands), len(a.Rows), text)
		}
		for j, row := range a.Rows {
			printed, err := strconv.ParseFloat(commands[j][2], 64)
			if err != nil || printed != row.FPRate || commands[j][2] != row.FPRateText || !strings.Contains(text, "  "+row.FPRateText+" ") {
				t.Fatalf("%q row %d: text prints %q, JSON %v (%q):\n%s", args, j, commands[j][2], row.FPRate, row.FPRateText, text)
			}
			if b, k := bloomNewFilter(t, commands[j][0]); b != row.FilterBytes || k != row.HashFuncs {
				t.Fatalf("%q row %d: %q builds %d bytes k=%d, advice %d, %d", args, j, commands[j][0], b, k, row.FilterBytes, row.HashFuncs)
			}
		}
	}
}

func TestPrivacyModelTargetText(t *testing.T) {
	stdout, stderr, status := runCLI(t, "", "privacy", "model", "--addresses", "20", "--universe-size", "10000000",
		"--target-p-h-all", "0.5", "--filters", "3", "--block-txs", "2000", "--tx-elements", "5")
	if status != exitOK {
		t.Fatalf("status %d: %s", status, stderr)
	}
	for _, want := range []string{"fp rate", "E[P_h(N)] < 0.5", "2000 transactions, 5 elements", "With 1 filter,", "With 3 filters,",
		"false-positive transactions per block of 2000", "spvfilter bloom new --elements 140 --fprate 0.00106 --sizing core", "249 bytes with 9 hash functions", "95% of filters"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("text lacks %q:\n%s", want, stdout)
		}
	}
	stdout, _, status = runCLI(t, "", "privacy", "model", "--addresses", "100", "--universe-size", "1000", "--target-p-h-1", "0.01")
	if status != exitOK || !strings.Contains(stdout, "(unreachable)") || !strings.Contains(stdout, "no filter Bitcoin Core builds reaches") {
		t.Errorf("status %d, unreachable text:\n%s", status, stdout)
	}
	// 40,100 elements: Core caps the filter at 36,000 bytes, and a
	// universe of 10^12 hides the wallet in it.
	stdout, stderr, status = runCLI(t, "", "privacy", "model", "--addresses", "20000", "--universe-size", "1000000000000", "--target-p-h-all", "0.5")
	if status != exitOK || !strings.Contains(stdout, "every rate meets") || !strings.Contains(stdout, "36000 bytes") || !strings.Contains(stderr, "even the largest filter") {
		t.Errorf("status %d, every-rate text:\n%s\n%s", status, stdout, stderr)
	}
}

func TestPrivacyModelTargetRefused(t *testing.T) {
	tests := []struct {
		args   []string
		stderr string
	}{
		{[]string{"--target-p-h-all", "0"}, "want a probability in (0, 1), a bound on the model's confidence, such as --target-p-h-"},
		{[]string{"--target-p-h-all", "1"}, "want a probability in (0, 1), a bound on the model's confidence, such as --target-p-h-"},
		{[]string{"--target-p-h-1", "-0.2"}, "want a probability in (0, 1), a bound on the model's confidence, such as --target-p-h-"},
		{[]string{"--target-p-h-1", "NaN"}, "want a probability in (0, 1), a bound on the model's confidence, such as --target-p-h-"},
		{[]string{"--target-p-h-1", "0.5", "--target-p-h-all", "2"}, "want a probability in (0, 1), a bound on the model's confidence, such as --target-p-h-"},
		{[]string{"--target-p-h-1", "0.5", "--fprate", "0.01"}, "--fprate cannot be combined"},
		{[]string{"--target-p-h-1", "0.5", "--sweep", "addresses=1..3"}, "--sweep cannot be combined"},
		{[]string{"--target-p-h-1", "0.5", "--monte-carlo", "3"}, "--monte-carlo cannot be combined"},
		{[]string{"--target-p-h-1", "0.5", "--block-txs", "0"}, "--block-txs 0"},
		{[]string{"--target-p-h-1", "0.5", "--filters", "0"}, "--filters 0"},
		{[]string{"--block-txs", "2000"}, "used only with --target"},
		{[]string{"--addresses", "20", "--tx-elements", "5"}, "used only with --target"},
		{[]string{"--target-p-h-1", "0.5", "--addresses", "20", "--universe-size", "10"}, "--universe-size 10: smaller than the wallet's 20 addresses"},
		{[]string{"--target-p-h-1", "0.5", "--sizing", "electrum"}, `--sizing "electrum": want core or bitcoinj`},
		{[]string{"--sizing", "electrum"}, `--sizing "electrum": want core or bitcoinj`},
	}
	for _, tc := range tests {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			args := append([]string{"privacy", "model"}, tc.args...)
			stdout, stderr, status := runCLI(t, "", args...)
			if status != exitBadInput || stdout != "" || !strings.Contains(stderr, tc.stderr) {
				t.Errorf("status %d, stdout %q, stderr %q; want status 2 and %q", status, stdout, stderr, tc.stderr)
			}
			_, stderr, status = runCLI(t, "", append(args, "--json")...)
			var e struct {
				Error    string `json:"error"`
				ExitCode int    `json:"exit_code"`
			}
			decodeJSON(t, stderr, &e)
			if status != exitBadInput || e.ExitCode != exitBadInput || !strings.Contains(e.Error, tc.stderr) {
				t.Errorf("--json: status %d, error %+v", status, e)
			}
		})
	}
}
