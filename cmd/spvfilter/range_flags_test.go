package main

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/spvfilter/spvfilter/privacy/model"
)

// rangeRow is a run of a command with one of its number flags (a count,
// a size, a rate, a duration, a height) given a value outside its range,
// and the range its error must state.
type rangeRow struct {
	args  []string // the command line without the flag
	value string   // the value given, as the error names it
	want  string   // the range stated, after "want "
}

// numberFlagRows are the rows of TestNumberFlagRanges, by the command
// and flag ("privacy simulate --wallets"), with dir a directory of the
// test's to name files in.
func numberFlagRows(dir string) map[string]rangeRow {
	missing := filepath.Join(dir, "missing")
	node := []string{"--network", "regtest", "--connect", "127.0.0.1:1"}
	scan := append([]string{"scan", "--watch", "51", "--datadir", dir}, node...)
	bip37 := append(append([]string{}, scan...), "--mode", "bip37")
	capture := []string{"privacy", "capture", "--listen", "127.0.0.1:0", "--upstream", "127.0.0.1:1", "--network", "regtest", "--out", filepath.Join(dir, "c.jsonl")}
	universe := []string{"privacy", "universe", "--peer", "127.0.0.1:1", "--network", "regtest", "--out", "-"}
	analyze := []string{"privacy", "analyze", "--filter", corePayload, "--universe", missing}
	fetches := []string{"privacy", "fetches", "--capture", missing, "--index", missing}
	evaluate := []string{"privacy", "evaluate", "--labels", missing, "--report", missing}
	simulate := []string{"privacy", "simulate", "--out", filepath.Join(dir, "sim")}
	model := []string{"privacy", "model"}
	target := []string{"privacy", "model", "--target-p-h-all", "0.01"}
	trials := []string{"privacy", "model", "--monte-carlo", "2"}
	compare := []string{"privacy", "compare"}
	lab := append([]string{"lab"}, node...)
	return map[string]rangeRow{
		"bloom new --elements":                    {[]string{"bloom", "new", "--fprate", "0.01"}, "0", "a whole number from 1 to 4294967295"},
		"bloom new --fprate":                      {[]string{"bloom", "new", "--elements", "3"}, "1", "a rate in (0, 1)"},
		"bloom new --tweak":                       {[]string{"bloom", "new", "--elements", "3", "--fprate", "0.01"}, "-1", "a whole number from 0 to 4294967295"},
		"demo --extra-elements":                   {[]string{"demo"}, "-1", "a whole number from 0 to 4294967295"},
		"demo --filters":                          {[]string{"demo"}, "0", "a whole number from 1 to 64"},
		"demo --fprate":                           {[]string{"demo"}, "0", "a rate in (0, 1)"},
		"demo --keys":                             {[]string{"demo"}, "0", "a whole number from 1 to 100000"},
		"demo --seed":                             {[]string{"demo"}, "-1", "a whole number, at least 0"},
		"demo --universe-size":                    {[]string{"demo"}, "0", "a whole number from 20"},
		"demo --used":                             {[]string{"demo"}, "-1", "a whole number from 0 to 266"},
		"lab --from":                              {lab, "-1", "a height, a whole number from 0 to 2147483647"},
		"lab --p-max":                             {lab, "0", "a whole number from 1 to 32"},
		"lab --p-min":                             {lab, "0", "a whole number from 1 to 32"},
		"lab --probes":                            {lab, "-1", "a whole number from 0 to 1000000000"},
		"lab --seed":                              {lab, "-1", "a whole number, at least 0"},
		"lab --timeout":                           {lab, "0s", "a duration above 0"},
		"lab --timing":                            {lab, "-1s", "a duration, at least 0"},
		"lab --to":                                {lab, "-1", "a height, a whole number from 0 to 2147483647"},
		"lab --wallets":                           {lab, "-1", "whole numbers from 1 to 10000000, separated by commas"},
		"lab --watched":                           {lab, "0", "whole numbers from 1 to 10000000, separated by commas"},
		"peers --timeout":                         {append([]string{"peers"}, node...), "0s", "a duration above 0"},
		"privacy analyze --link-threshold":        {[]string{"privacy", "analyze", "--capture", missing, "--universe", missing, "--link"}, "0.2", "a probability in [0.5, 1)"},
		"privacy analyze --max-matches":           {analyze, "0", "a whole number, at least 1"},
		"privacy analyze --show":                  {analyze, "-1", "a whole number, at least 0"},
		"privacy analyze --workers":               {analyze, "-1", "a whole number from 0 to 64"},
		"privacy capture --duration":              {capture, "-1s", "a duration, at least 0"},
		"privacy capture --handshake-timeout":     {capture, "0s", "a duration above 0"},
		"privacy capture --idle-timeout":          {capture, "0s", "a duration above 0"},
		"privacy capture --max-clients":           {capture, "-1", "a whole number, at least 0"},
		"privacy compare --addresses":             {compare, "0", "a whole number from 1 to 4294967295"},
		"privacy compare --appearances":           {compare, "0", "a whole number from 1 to 4294967295"},
		"privacy compare --blocks":                {compare, "0", "a whole number, at least 1"},
		"privacy compare --decoys":                {compare, "-1", "a number, at least 0"},
		"privacy compare --elements-per-address":  {compare, "0", "a whole number from 1 to 4294967295"},
		"privacy compare --elements-per-block":    {compare, "0", "a whole number from 1 to 4294967295"},
		"privacy compare --extra-elements":        {compare, "-1", "a whole number from 0 to 4294967295"},
		"privacy compare --filters":               {compare, "0", "a whole number from 1 to 1000"},
		"privacy compare --fprate":                {compare, "0", "a rate in (0, 1)"},
		"privacy compare --peers":                 {compare, "0", "a whole number from 1 to 4294967295"},
		"privacy compare --universe-size":         {compare, "-1", "a whole number, at least the --addresses"},
		"privacy compare --wallet-blocks":         {compare, "-1", "a whole number, at least 0"},
		"privacy compare --watch-per-address":     {compare, "0", "a whole number from 1 to 4294967295"},
		"privacy evaluate --show":                 {evaluate, "-1", "a whole number, at least 0"},
		"privacy evaluate --threshold":            {evaluate, "0", "a probability in (0, 1]"},
		"privacy fetches --cover-target":          {fetches, "1", "0 (the default) for none, or a probability in (0, 1)"},
		"privacy fetches --max-matches":           {fetches, "0", "a whole number, at least 1"},
		"privacy fetches --show":                  {fetches, "-1", "a whole number, at least 0"},
		"privacy model --addresses":               {model, "0", "a whole number from 1 to 4294967295"},
		"privacy model --block-txs":               {target, "0", "a whole number from 1 to 4294967295"},
		"privacy model --elements-per-address":    {model, "0", "a whole number from 1 to 4294967295"},
		"privacy model --extra-elements":          {model, "-1", "a whole number from 0 to 4294967295"},
		"privacy model --filters":                 {model, "0", "a whole number from 1 to 1000"},
		"privacy model --fprate":                  {model, "0", "a rate in (0, 1)"},
		"privacy model --monte-carlo":             {model, "1", "0 (the default) for none, or at least 2 trials"},
		"privacy model --monte-carlo-sample":      {trials, "-1", "a whole number, at least 0"},
		"privacy model --seed":                    {trials, "-1", "a whole number, at least 0"},
		"privacy model --target-p-h-1":            {model, "1", "a probability in (0, 1)"},
		"privacy model --target-p-h-all":          {model, "1", "a probability in (0, 1)"},
		"privacy model --tx-elements":             {target, "0", "a whole number from 1 to 4294967295"},
		"privacy model --universe-size":           {model, "-1", "a whole number, at least the --addresses"},
		"privacy simulate --addresses":            {simulate, "0", "N or MIN..MAX, whole numbers from 1 to 100000"},
		"privacy simulate --blocks":               {simulate, "5", "a whole number from 10 to 1000000"},
		"privacy simulate --cover-target":         {append(simulate, "--regime", "covered"), "1", "a probability in (0, 1)"},
		"privacy simulate --decoys":               {simulate, "-1", "a whole number from 0 to 499"},
		"privacy simulate --degenerate":           {simulate, "-1", "a whole number from 0 to 10000"},
		"privacy simulate --elements-per-address": {simulate, "3", "1 or 2"},
		"privacy simulate --extra-elements":       {simulate, "-1", "a whole number from 0 to 100000"},
		"privacy simulate --fetch-noise":          {simulate, "-1", "a whole number from 0 to 10000"},
		"privacy simulate --fetch-sessions":       {simulate, "0", "N or MIN..MAX, whole numbers from 1 to 64"},
		"privacy simulate --fetch-wallets":        {simulate, "-1", "a whole number from 0 to 1000"},
		"privacy simulate --filteradd-fraction":   {simulate, "2", "a share from 0 to 1"},
		"privacy simulate --fprate":               {simulate, "0", "X or MIN..MAX with 0 < MIN <= MAX < 1"},
		"privacy simulate --noise":                {simulate, "-1", "a whole number from 0 to 10000"},
		"privacy simulate --pay-fraction":         {simulate, "-1", "a share from 0 to 1"},
		"privacy simulate --payers":               {simulate, "0", "N or MIN..MAX, whole numbers from 1 to 1000"},
		"privacy simulate --payments":             {simulate, "0", "N or MIN..MAX, whole numbers from 1 to 1000"},
		"privacy simulate --seed":                 {simulate, "-1", "a whole number, at least 0"},
		"privacy simulate --sessions":             {simulate, "0", "N or MIN..MAX, whole numbers from 1 to 64"},
		"privacy simulate --txs-per-block":        {simulate, "0", "a whole number from 1 to 1000"},
		"privacy simulate --wallets":              {simulate, "-1", "a whole number from 0 to 10000"},
		"privacy universe --from":                 {universe, "-1", "a height, a whole number from 0 to 2147483647"},
		"privacy universe --index-memory":         {append(universe, "--index", filepath.Join(dir, "u.idx")), "100", "a number of bytes, a whole number without a unit, at least 65536"},
		"privacy universe --timeout":              {universe, "0s", "a duration above 0"},
		"privacy universe --to":                   {universe, "-1", "a height, a whole number from 0 to 2147483647"},
		"scan --filter-cache":                     {scan, "-1", "a number of bytes, a whole number without a unit"},
		"scan --fprate":                           {bip37, "1", "a rate in (0, 1)"},
		"scan --from":                             {scan, "-1", "a height, a whole number from 0 to 2147483647"},
		"scan --max-cover-blocks":                 {append(scan, "--privacy-target", "0.5"), "-2", "-1 for no bound, 0 (the default) for 4 times the wallet's, or a whole number of blocks"},
		"scan --max-reloads":                      {bip37, "-1", "a whole number, at least 0"},
		"scan --privacy-target":                   {scan, "1", "a probability in (0, 1)"},
		"scan --timeout":                          {scan, "0s", "a duration above 0"},
		"scan --to":                               {scan, "-1", "a height, a whole number from 0 to 2147483647"},
		"scan --tweak":                            {bip37, "-1", "a whole number from 0 to 4294967295"},
		"scan --universe-size":                    {bip37, "-1", "a whole number of scripts"},
		"send --timeout":                          {append([]string{"send"}, append(node, "00")...), "0s", "a duration above 0"},
	}
}

// TestNumberFlagRanges: a number flag of any command (found by walking
// the command tree: a new one has no row and fails) given a value
// outside its range is bad input that names the flag, the value given,
// the range it takes and an example of the flag with a value it takes
// ("--wallets -1: want a whole number from 0 to 10000, such as --wallets
// 50"). Before, the range was said in a library's words or not at all
// ("--wallets -1: not in 0..10000", "--show -1: must be at least 0",
// "--timeout 0s: must be positive"), and no error gave an example.
func TestNumberFlagRanges(t *testing.T) {
	dir := t.TempDir()
	missing := filepath.Join(dir, "missing")
	rows := numberFlagRows(dir)
	// A value above the range, and a range another flag bounds, whose
	// example must lie in it (not the flag's default).
	above := []struct {
		args []string
		want string
	}{
		{[]string{"privacy", "model", "--filters", "5000"}, "--filters 5000: want a whole number from 1 to 1000, such as --filters 1"},
		{[]string{"privacy", "compare", "--filters", "5000"}, "--filters 5000: want a whole number from 1 to 1000, such as --filters 1"},
		{[]string{"lab", "--network", "regtest", "--connect", "127.0.0.1:1", "--wallets", "100,1e3"}, `--wallets "100,1e3": want whole numbers from 1 to 10000000, separated by commas (1e3 is 1000: write it in digits), such as --wallets 100,1000`},
		{[]string{"demo", "--keys", "10", "--used", "11"}, "--used 11: want a whole number from 0 to 10, the --keys (the used addresses are some of the wallet's keys), such as --used 10"},
		{[]string{"privacy", "simulate", "--out", missing, "--blocks", "20", "--decoys", "15"}, "--decoys 15: want a whole number from 0 to 9 (a session's decoys are fewer than half the --blocks 20), such as --decoys 3"},
	}
	for _, r := range above {
		t.Run(strings.Join(r.args, " "), func(t *testing.T) {
			_, stderr, status := runCLI(t, "", r.args...)
			if status != exitBadInput || !strings.Contains(stderr, r.want) {
				t.Errorf("status %d, stderr %q: want status %d and %q", status, stderr, exitBadInput, r.want)
			}
		})
	}
	found := map[string]bool{}
	walkCommands(newRootCommand(&app{}), func(c *cobra.Command) {
		c.LocalFlags().VisitAll(func(f *pflag.Flag) {
			key := strings.TrimPrefix(c.CommandPath()+" --"+f.Name, "spvfilter ")
			found[key] = true
			if _, ok := rows[key]; !ok && isNumberFlag(f) {
				t.Errorf("%s (%s) takes a number: no row says what its error out of range is", key, f.Value.Type())
			}
		})
	})
	for key, r := range rows {
		t.Run(key, func(t *testing.T) {
			if !found[key] {
				t.Fatalf("no such flag in the command tree")
			}
			flag := key[strings.LastIndex(key, " --")+1:]
			_, stderr, status := runCLI(t, "", append(append([]string{}, r.args...), flag, r.value)...)
			if status != exitBadInput {
				t.Fatalf("status %d, stderr %q: want status %d", status, stderr, exitBadInput)
			}
			// A value that does not parse is quoted, as given.
			want := flag + " " + r.value + ": want " + r.want
			quoted := flag + ` "` + r.value + `": want ` + r.want
			if !strings.Contains(stderr, want) && !strings.Contains(stderr, quoted) {
				t.Errorf("stderr %q lacks %q", stderr, want)
			}
			if example := ", such as " + flag + " "; !strings.Contains(stderr, example) {
				t.Errorf("stderr %q lacks %q", stderr, example)
			}
		})
	}
}

// TestRangeErrorKeepsItsCause: the range error of a flag a library found
// out of range is a rangeError that names the flag and its value, and
// still wraps the library's error, so its kind stays checkable.
func TestRangeErrorKeepsItsCause(t *testing.T) {
	fl := pflag.NewFlagSet("model", pflag.ContinueOnError)
	p := model.Params{FPRate: 2}
	addModelFlags(fl, &p)
	bad := model.DefaultParams()
	bad.FPRate = 2
	_, cause := model.Evaluate(bad)
	err := modelFields.badParams(cause, fl)
	var re *rangeError
	if !errors.As(err, &re) || re.Flag != "--fprate" || re.Value != "2" || re.Want != "a rate in (0, 1)" {
		t.Fatalf("badParams: %#v, want a rangeError of --fprate 2", err)
	}
	if !errors.Is(err, model.ErrBadParams) || !isUsageError(err) {
		t.Errorf("%v: the cause model.ErrBadParams lost, or not bad input", err)
	}
}

// TestUnparsedNumberKeepsRange: a whole-number flag given a number too
// large for its type (or a negative one, to an unsigned flag) states the
// range its check states for a value out of it, as TestNumberFlagRanges
// has it, not its type's ("--wallets 99999999999999999999: want a whole
// number, such as --wallets 50" before). A range that another flag bounds
// is stated by that flag's name.
func TestUnparsedNumberKeepsRange(t *testing.T) {
	bounded := map[string]string{
		"demo --used":               "a whole number from 0 to the --keys",
		"demo --universe-size":      "a whole number from the --used to 100000000",
		"privacy simulate --decoys": "a whole number, fewer than half the --blocks",
	}
	rows := numberFlagRows(t.TempDir())
	for key, f := range wholeFlags(newRootCommand(&app{})) {
		r, ok := rows[key]
		if !ok {
			continue // TestNumberFlagRanges fails on it
		}
		want := r.want
		if w, ok := bounded[key]; ok {
			want = w
		}
		flag := key[strings.LastIndex(key, " --")+1:]
		values := []string{"99999999999999999999"}
		if strings.HasPrefix(f.Value.Type(), "uint") {
			values = append(values, "-1")
		}
		for _, v := range values {
			t.Run(key+" "+v, func(t *testing.T) {
				_, stderr, status := runCLI(t, "", append(append([]string{}, r.args...), flag, v)...)
				quoted := flag + ` "` + v + `": want ` + want
				example := ", such as " + flag + " "
				if status != exitBadInput || !strings.Contains(stderr, quoted) || !strings.Contains(stderr, example) {
					t.Errorf("status %d, stderr %q: want status %d, %q and %q", status, stderr, exitBadInput, quoted, example)
				}
			})
		}
	}
}
