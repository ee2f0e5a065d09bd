package main

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/spvfilter/spvfilter/privacy/model"
)

// errGivenTwice is the cause of a flag given a second value.
var errGivenTwice = errors.New("given twice")

// errFlagAsValue is the cause of a flag that took the next flag of the
// command line as its value: its own was left out.
var errFlagAsValue = errors.New("took a flag as its value")

// onceValue is a flag that takes one value: given twice on a command line
// it is bad input, instead of the last value silently winning. A value
// that is a flag of its command (isFlag) is refused: the flag's own value
// was left out, and the next flag taken in its place.
type onceValue struct {
	pflag.Value
	given  bool
	isFlag func(string) bool
}

func (v *onceValue) Set(s string) error {
	if v.given {
		return fmt.Errorf("%w (it was %q): give it once", errGivenTwice, v.String())
	}
	if v.isFlag != nil && v.isFlag(s) {
		return errFlagAsValue
	}
	if v.Value.Type() == "float64" {
		if err := model.FloatHolds(s); err != nil {
			return err
		}
	}
	v.given = true
	return v.Value.Set(s)
}

// listValue is a repeatable flag that refuses a value that is another of
// its command's flags (isFlag), as onceValue does.
type listValue struct {
	pflag.Value
	isFlag func(string) bool
}

func (v listValue) Set(s string) error {
	if v.isFlag(s) {
		return errFlagAsValue
	}
	return v.Value.Set(s)
}

// errNotDecimal is the cause of a whole-number flag given a number in
// another form than decimal digits: 0x10, 0o7, 0b1, 1_000.
var errNotDecimal = errors.New("not in decimal digits")

// decimalValue is a whole-number flag read in decimal digits only, with
// an optional sign: pflag reads its integers in Go's notations, where
// 010 is 8 and 0x10 16, and a seed or tweak copied from notes with a
// leading zero would silently become another. A leading zero is read as
// written, 010 as 10; any other notation is refused.
type decimalValue struct {
	pflag.Value
}

func (v decimalValue) Set(s string) error {
	digits := strings.TrimLeft(s, "+-")
	sign := s[:len(s)-len(digits)]
	if len(sign) > 1 || digits == "" || strings.Trim(digits, "0123456789") != "" {
		return errNotDecimal
	}
	if digits = strings.TrimLeft(digits, "0"); digits == "" {
		digits = "0"
	}
	if sign == "+" {
		sign = "" // as unsigned types parse it too
	}
	return v.Value.Set(sign + digits)
}

// isWholeType reports whether typ, a pflag type, is a whole number's.
func isWholeType(typ string) bool {
	switch typ {
	case "int", "int8", "int16", "int32", "int64", "uint", "uint8", "uint16", "uint32", "uint64":
		return true
	}
	return false
}

// decimalOnly makes a whole-number flag f read its value in decimal
// digits (decimalValue).
func decimalOnly(f *pflag.Flag) {
	if _, done := f.Value.(decimalValue); done || !isWholeType(f.Value.Type()) {
		return
	}
	f.Value = decimalValue{f.Value}
}

// flagOf returns whether s, a flag's value, names a flag of c, as in
// "--network --watch x" (where --network took "--watch"): the flag it
// names, without its "=VALUE", or "".
func flagOf(c *cobra.Command, s string) string {
	name, ok := strings.CutPrefix(s, "--")
	if !ok {
		return ""
	}
	name, _, _ = strings.Cut(name, "=")
	if name == "" || c.Flag(name) == nil {
		return ""
	}
	return "--" + name
}

// refuseRepeats makes every single-value flag of c refuse a second value,
// and a value that is another of c's flags. A repeatable flag (a list)
// and a switch (a bool, where --json --json means what --json means) are
// left as they are.
func refuseRepeats(c *cobra.Command, f *pflag.Flag) {
	v := f.Value
	if c, ok := v.(checkedValue); ok {
		v = c.Value
	}
	isFlag := func(s string) bool { return flagOf(c, s) != "" }
	if _, list := v.(pflag.SliceValue); list {
		if _, done := f.Value.(listValue); !done {
			f.Value = listValue{f.Value, isFlag}
		}
		// pflag knows the empty default of a list by its value's type,
		// which the wrapper hides: say it is empty the way it knows.
		if f.DefValue == "[]" {
			f.DefValue = ""
		}
		return
	}
	if v.Type() == "bool" {
		return
	}
	if _, done := f.Value.(*onceValue); done {
		return
	}
	f.Value = &onceValue{Value: f.Value, isFlag: isFlag}
	// pflag knows a zero duration as no default by its value's type,
	// which the wrapper hides ("(default 0s)" after the flag's own words
	// for it): say it is zero the way it knows for any type.
	if v.Type() == "duration" && f.DefValue == "0s" {
		f.DefValue = "0"
	}
}

// flagError is a command-line error of pflag in the tool's own words,
// for the command c: a flag that does not exist (with the flag meant, when
// the name is close to one), a flag without its value, a value that does
// not parse (what the flag wants, not which Go function failed); for a
// command of subcommands, the unknown command given before the flag.
// Every such error is bad input.
func flagError(c *cobra.Command, err error) error {
	var (
		notExist *pflag.NotExistError
		noValue  *pflag.ValueRequiredError
		syntax   *pflag.InvalidSyntaxError
		iv       *pflag.InvalidValueError
	)
	if args := c.Flags().Args(); len(args) > 0 && c.HasSubCommands() {
		// A word a command of subcommands does not know, then a flag
		// ("scna --network regtest"): the word is the mistake, not the
		// flag, which is the named command's.
		return unknownCommand(c, args[0])
	}
	switch {
	case errors.As(err, &notExist):
		name := "--" + notExist.GetSpecifiedName()
		if s := notExist.GetSpecifiedShortnames(); s != "" {
			name = "-" + notExist.GetSpecifiedName()
			if long := strings.SplitN(s, "=", 2)[0]; len(long) > 1 && lookupFlag(c, long) {
				// -json: a long flag with one dash, read as -j -s -o -n.
				return usageError{&restated{fmt.Sprintf("-%s: a flag's name takes two dashes: --%s; see %s --help", long, long, c.CommandPath()), err}}
			}
		}
		msg := fmt.Sprintf("%s: no such flag", name)
		if near := nearestFlag(c, notExist.GetSpecifiedName()); near != "" {
			msg += fmt.Sprintf(" (did you mean --%s?)", near)
		}
		return usageError{&restated{msg + "; see " + c.CommandPath() + " --help", err}}
	case errors.As(err, &noValue):
		f := noValue.GetFlag()
		return usageError{&restated{fmt.Sprintf("--%s needs a value: %s", f.Name, flagPurpose(f)), err}}
	case errors.As(err, &syntax):
		return usageError{&restated{fmt.Sprintf("%q is not a flag: write --NAME or --NAME=VALUE", syntax.GetSpecifiedFlag()), err}}
	case !errors.As(err, &iv):
		return usageError{err}
	}
	f := iv.GetFlag()
	cause := iv.Unwrap()
	if next := flagOf(c, iv.GetValue()); next != "" {
		placeholder, _ := pflag.UnquoteUsage(f)
		return usageError{&restated{fmt.Sprintf("--%s needs a value, not the flag %s (was its value left out?): give --%s %s (%s)", f.Name, next, f.Name, cmp.Or(placeholder, "VALUE"), flagPurpose(f)), err}}
	}
	var fr *model.FloatRangeError
	if errors.As(cause, &fr) {
		return usageError{&restated{fmt.Sprintf("--%s %q: %v", f.Name, iv.GetValue(), fr), err}}
	}
	// A number or duration flag fails only to parse, unless it was
	// given twice or its number is one a float cannot hold.
	if want := flagWant(f); want != "" && !errors.Is(cause, errGivenTwice) {
		example := suchAs(f)
		if strings.Contains(want, "such as") {
			example = "" // the type's own
		}
		return usageError{&restated{fmt.Sprintf("--%s %q: %s%s%s", f.Name, iv.GetValue(), want, inDigits(want, iv.GetValue()), example), err}}
	}
	var rs *restated
	if errors.As(cause, &rs) && strings.HasPrefix(rs.msg, "want ") && !errors.Is(cause, errGivenTwice) {
		// A number flag's own words for what it wants: its example too.
		return usageError{&restated{fmt.Sprintf("--%s %q: %s%s", f.Name, iv.GetValue(), rs.msg, suchAs(f)), err}}
	}
	return badInputWords(fmt.Sprintf("--%s %q", f.Name, iv.GetValue()), cause)
}

// inDigits says how to write, for a flag that wants a whole number, a
// whole number given in another form (1e6, 2.0, 0x10, 1_000): " (1e6 is
// 1000000: write it in digits)", " (0x10 is 16: write it in decimal
// digits)"; for a list of them, of its first such number; "" for any
// other value or flag.
func inDigits(want, value string) string {
	if strings.Contains(want, "separated by commas") {
		for _, item := range strings.Split(value, ",") {
			if strings.Trim(item, "0123456789") != "" {
				return inDigits(strings.Replace(want, "separated by commas", "", 1), item)
			}
		}
		return ""
	}
	if !strings.Contains(want, "whole number") || strings.Trim(value, "0123456789") == "" {
		return ""
	}
	if n, err := strconv.ParseInt(value, 0, 64); err == nil && n >= 0 {
		return fmt.Sprintf(" (%s is %d: write it in decimal digits)", value, n)
	}
	x, err := strconv.ParseFloat(value, 64)
	if err != nil || x < 0 || x >= 1<<63 || x != math.Trunc(x) {
		return ""
	}
	return fmt.Sprintf(" (%s is %s: write it in digits)", value, strconv.FormatFloat(x, 'f', -1, 64))
}

// flagPurpose is a flag's help line as a phrase: what to give it, without
// saying again that it is required, and with its placeholder unquoted as
// --help shows it.
func flagPurpose(f *pflag.Flag) string {
	_, usage := pflag.UnquoteUsage(f)
	return strings.Replace(strings.TrimSuffix(usage, " (required)"), "(required; ", "(", 1)
}

// lookupFlag reports whether c has the flag name, its own or inherited.
func lookupFlag(c *cobra.Command, name string) bool {
	return c.Flags().Lookup(name) != nil || c.InheritedFlags().Lookup(name) != nil
}

// nearestFlag returns the name of c's flag meant by name: the one
// another command or Bitcoin Core names so (flagSynonyms; --regtest
// for --network regtest), or the closest, when it is close enough to be a
// typo (--fp_rate, --elemnts); or "".
func nearestFlag(c *cobra.Command, name string) string {
	best, bestDist := "", 3
	visit := func(f *pflag.Flag) {
		if f.Hidden {
			return
		}
		if d := editDistance(strings.ReplaceAll(name, "_", "-"), f.Name); d < bestDist {
			best, bestDist = f.Name, d
		}
	}
	for _, other := range flagSynonyms[name] {
		if flag, _, _ := strings.Cut(other, " "); c.Flags().Lookup(flag) != nil {
			return other
		}
	}
	c.Flags().VisitAll(visit)
	c.InheritedFlags().VisitAll(visit)
	if best != "" {
		return best
	}
	if _, err := lookupNetwork(name); err == nil && c.Flags().Lookup("network") != nil {
		// Bitcoin Core's --regtest, --testnet4, --signet.
		return "network " + name
	}
	return ""
}

// flagSynonyms are, for a flag name that some command has or a
// newcomer may try, the flags (with a value, for some) another command
// or Bitcoin Core names the same thing with: privacy universe takes its
// node with --peer, scan with --connect or --peer; privacy analyze takes
// its candidates with --universe, privacy fetches with --index (the
// chain.idx of privacy simulate); demo writes its plot to --plot, where
// other commands write to --out; a wallet's birthday is a first height.
var flagSynonyms = map[string][]string{
	"connect":  {"peer"},
	"peer":     {"connect", "upstream"},
	"node":     {"connect", "peer", "upstream"},
	"upstream": {"peer", "connect"},
	"testnet":  {"network testnet3 or --network testnet4"},
	"universe": {"index"},
	"chain":    {"index"},
	"index":    {"universe"},
	"proof":    {"merkleblock"},
	"out":      {"plot"},
	"birthday": {"from HEIGHT"},
}

// editDistance is the Levenshtein distance between a and b.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur := make([]int, len(b)+1)
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev = cur
	}
	return prev[len(b)]
}

// mutuallyExclusive is the annotation cobra's MarkFlagsMutuallyExclusive
// puts on each flag of a group (cobra keeps the name to itself).
const mutuallyExclusive = "cobra_annotation_mutually_exclusive"

// checkFlagRules checks, before a command runs, the rules its flags were
// marked with (required; mutually exclusive) and says what is wrong in
// the tool's words. cobra checks the same rules after this, and finds
// nothing left; its marks still drive the help and shell completion.
func checkFlagRules(c *cobra.Command) error {
	var missing []*pflag.Flag
	var groups []string
	given := map[string]bool{}
	c.Flags().VisitAll(func(f *pflag.Flag) {
		if req := f.Annotations[cobra.BashCompOneRequiredFlag]; len(req) == 1 && req[0] == "true" && !f.Changed {
			missing = append(missing, f)
		}
		if f.Changed {
			given[f.Name] = true
			for _, g := range f.Annotations[mutuallyExclusive] {
				if !slices.Contains(groups, g) {
					groups = append(groups, g)
				}
			}
		}
	})
	for _, g := range groups {
		var set []string
		for _, name := range strings.Fields(g) {
			if given[name] {
				set = append(set, "--"+name)
			}
		}
		if len(set) > 1 {
			return badInput("%s: give one or the other, not both", strings.Join(set, " and "))
		}
	}
	if len(missing) > 0 {
		var parts []string
		for _, f := range missing {
			parts = append(parts, fmt.Sprintf("--%s is required: %s", f.Name, flagPurpose(f)))
		}
		return badInput("%s", strings.Join(parts, "; "))
	}
	return nil
}

// wantAnnotation holds, on a flag whose command accepts fewer values than
// its type parses (a height is no negative int32, --elements no 0), what
// the flag wants, as its parse error says it.
const wantAnnotation = "spvfilter_want"

// wantValues says what the flags names of fl want, for their parse errors.
func wantValues(fl *pflag.FlagSet, want string, names ...string) {
	for _, name := range names {
		_ = fl.SetAnnotation(name, wantAnnotation, []string{want})
	}
}

// exampleAnnotation holds, on a number flag whose default is no example
// of what to give it (0 for none, a default of the flag's type), a value
// it takes, which its errors show.
const exampleAnnotation = "spvfilter_example"

// exampleValue sets the example of the flag name of fl.
func exampleValue(fl *pflag.FlagSet, name, example string) {
	_ = fl.SetAnnotation(name, exampleAnnotation, []string{example})
}

// flagExample is a value f takes, as its errors show it: its example, or
// its default.
func flagExample(f *pflag.Flag) string {
	if e := f.Annotations[exampleAnnotation]; len(e) == 1 {
		return e[0]
	}
	if f.Value.Type() == "duration" {
		// 10m, not Go's 10m0s.
		s := f.DefValue
		if strings.HasSuffix(s, "m0s") {
			s = strings.TrimSuffix(s, "0s")
		}
		if strings.HasSuffix(s, "h0m") {
			s = strings.TrimSuffix(s, "0m")
		}
		return s
	}
	return f.DefValue
}

// suchAs is, for a number flag, an example of it with a value it takes
// (", such as --timeout 30s"), as its errors end; "" for another flag.
func suchAs(f *pflag.Flag) string {
	if !isNumberFlag(f) || flagExample(f) == "" {
		return ""
	}
	return ", such as --" + f.Name + " " + flagExample(f)
}

// isNumberFlag reports whether f takes a number: a count, a size, a
// rate, a duration or a height, or a range or list of them.
func isNumberFlag(f *pflag.Flag) bool {
	switch typ := f.Value.Type(); typ {
	case "float32", "float64", "duration", "range", "intSlice":
		return true
	default:
		return isWholeType(typ)
	}
}

// rangeError is a number flag given a value outside its range: it names
// the flag, the value as given, the range and an example of a value the
// flag takes. Err, if not nil, is the error that found the value out of
// range (a library's).
type rangeError struct {
	Flag    string // "--wallets"
	Value   string // "-1"
	Want    string // "a whole number from 0 to 10000"
	Example string // "50", or "" for none
	Err     error
}

func (e *rangeError) Error() string {
	s := fmt.Sprintf("%s %s: want %s", e.Flag, e.Value, e.Want)
	if e.Example != "" {
		s += ", such as " + e.Flag + " " + e.Example
	}
	return s
}

func (e *rangeError) Unwrap() error { return e.Err }

// badRange is the bad input of the number flag (as "--wallets") set to
// value, outside the range want states ("a whole number from 0 to
// 10000"; "" for the range the flag's want annotation states). The
// example is the command's flag's (fillRange).
func badRange(flag string, value any, want string) error {
	return usageError{&rangeError{Flag: flag, Value: fmt.Sprint(value), Want: want}}
}

// badRangeBy is badRange for a range that another flag's value bounds,
// with an example in it (the flag's default may not be).
func badRangeBy(flag string, value any, want string, example any) error {
	return usageError{&rangeError{Flag: flag, Value: fmt.Sprint(value), Want: want, Example: fmt.Sprint(example)}}
}

// fillRange completes a rangeError in err with what the flag of c it
// names states: its range, when the error left it to the flag, and its
// example.
func fillRange(c *cobra.Command, err error) {
	var re *rangeError
	if c == nil || !errors.As(err, &re) {
		return
	}
	f := c.Flags().Lookup(strings.TrimPrefix(re.Flag, "--"))
	if f == nil {
		return
	}
	if re.Want == "" {
		re.Want = strings.TrimPrefix(flagWant(f), "want ")
	}
	if re.Example == "" {
		re.Example = flagExample(f)
	}
}

// flagWant says what f accepts: its own words, or its type's.
func flagWant(f *pflag.Flag) string {
	if w := f.Annotations[wantAnnotation]; len(w) == 1 {
		return w[0]
	}
	return flagValueWant(f.Value.Type())
}

// wantHeight is what a block-height flag accepts.
const wantHeight = "want a height, a whole number from 0 to 2147483647"

// flagValueWant describes the values a flag of a pflag type accepts.
func flagValueWant(typ string) string {
	switch typ {
	case "uint8":
		return "want a whole number from 0 to 255"
	case "uint16":
		return "want a whole number from 0 to 65535"
	case "uint32":
		return "want a whole number from 0 to 4294967295"
	case "uint64", "uint":
		return "want a whole number, at least 0"
	case "int32":
		return "want a whole number from -2147483648 to 2147483647"
	case "int", "int64":
		return "want a whole number"
	case "float64":
		return "want a number, such as 0.001 or 1e-4"
	case "bool":
		return "want true or false"
	case "duration":
		return "want a duration, such as 500ms, 30s or 5m"
	case "intSlice":
		return "want whole numbers separated by commas, such as 1,10,100"
	}
	return ""
}
