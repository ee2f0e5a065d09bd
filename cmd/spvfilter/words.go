package main

import (
	"cmp"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"math"
	"os"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"time"
	"unicode/utf8"

	"github.com/btcsuite/btcd/wire"
	"github.com/spf13/pflag"

	"github.com/spvfilter/spvfilter/gcs/lab"
	"github.com/spvfilter/spvfilter/privacy/capture"
	"github.com/spvfilter/spvfilter/privacy/model"
	"github.com/spvfilter/spvfilter/privacy/plot"
	"github.com/spvfilter/spvfilter/privacy/simulate"
	"github.com/spvfilter/spvfilter/privacy/universe"
)

// restated is an error said in the tool's own words: msg is what the
// user reads, err the cause, kept for errors.Is and errors.As.
type restated struct {
	msg string
	err error
}

func (e *restated) Error() string { return e.msg }
func (e *restated) Unwrap() error { return e.err }

// badInputWords is bad input (exit status 2) that names what (a flag and
// its value, or an argument) and then says err in the tool's words.
func badInputWords(what string, err error) error {
	return usageError{&restated{named(what, words(err)), err}}
}

// failureWords is a failure (exit status 1) that names what and then says
// err in the tool's words.
func failureWords(what string, err error) error {
	return &restated{named(what, words(err)), err}
}

// named is msg said of what ("--plot FILE"), the file not named twice
// when msg begins with it ("FILE: no space left on the device").
func named(what, msg string) string {
	if i := strings.LastIndexByte(what, ' '); i >= 0 {
		msg = strings.TrimPrefix(msg, what[i+1:]+": ")
	}
	return what + ": " + msg
}

// kindSentinels are errors of the libraries that only say what kind of
// input was bad ("privacy: bad model parameters"): the flag an error is
// reported under says that already, so their text is dropped.
var kindSentinels = []error{
	model.ErrBadParams, model.ErrBadSweep, plot.ErrCannotDraw,
	universe.ErrBadCandidate, universe.ErrBadIndex, capture.ErrBadRecord,
	simulate.ErrBadLabels, simulate.ErrBadReport, simulate.ErrBadOptions,
	lab.ErrBadVectors, lab.ErrBadBlockFile, lab.ErrPlot,
}

// packagePrefix matches the name of a package that begins an error's
// text or one of its parts ("privacy: ", "gcs: ").
var packagePrefix = regexp.MustCompile(`(^|: |; |\()(privacy|gcs|bip37|peer|client|addrbook|pool|notify|store|chain|capture|universe|attack|model|simulate|plot|lab): `)

// words says err in the tool's words: without the libraries' package
// prefixes and kinds, and with what Go's packages say (a JSON syntax
// error, an unexpected EOF, a time or number that does not parse, a
// missing file) said as the tool says it.
func words(err error) string {
	return say(err.Error(), err)
}

// say is msg, a text made of err's, in the tool's words (see words).
func say(msg string, err error) string {
	for _, r := range goWords(err) {
		msg = strings.Replace(msg, r.old, r.new, 1)
	}
	for _, s := range kindSentinels {
		if errors.Is(err, s) {
			msg = strings.Replace(msg, s.Error()+": ", "", 1)
		}
	}
	for {
		// Again, for a prefix that followed one taken out ("client:
		// store: ").
		cut := packagePrefix.ReplaceAllString(msg, "$1")
		if cut == msg {
			break
		}
		msg = cut
	}
	msg = strings.ReplaceAll(msg, "unexpected EOF", "the data end too early")
	if errors.Is(err, io.EOF) && (msg == "EOF" || strings.HasSuffix(msg, ": EOF")) {
		msg = strings.TrimSuffix(msg, "EOF") + "empty: no data at all"
	}
	return msg
}

// replacement is a part of an error's text and what the tool says instead.
type replacement struct{ old, new string }

// goWords finds, in err's tree, the errors of Go's packages whose text is
// not the tool's, and returns each text with the tool's words for it.
func goWords(err error) []replacement {
	var out []replacement
	walkErrors(err, func(e error) {
		var text string
		switch e := e.(type) {
		case *json.SyntaxError:
			text = jsonSyntax(e)
		case *json.UnmarshalTypeError:
			text = fmt.Sprintf("field %q holds a JSON %s where %s is wanted", e.Field, e.Value, jsonKind(e.Type))
			if e.Field == "" {
				text = fmt.Sprintf("it holds a JSON %s where %s is wanted", e.Value, jsonKind(e.Type))
			}
		case *time.ParseError:
			text = fmt.Sprintf("time %q: want an RFC 3339 time, such as 2025-01-31T12:00:00Z", e.Value)
		case hex.InvalidByteError:
			text = fmt.Sprintf("invalid hex character %q", rune(e))
			if e >= utf8.RuneSelf {
				// Only its first byte: not the character written.
				text = "invalid hex character: a character that is not ASCII"
			}
		case *strconv.NumError:
			text = fmt.Sprintf("%q is not a number", e.Num)
		case *wire.MessageError:
			text = e.Description
		case *os.PathError:
			text = e.Path + ": " + fileProblem(e.Err)
		default:
			switch {
			case e == hex.ErrLength:
				text = "odd number of hex digits"
			case strings.HasPrefix(e.Error(), "json: unknown field "):
				text = strings.TrimPrefix(e.Error(), "json: ")
			case strings.HasPrefix(e.Error(), "Time.UnmarshalJSON: "):
				text = "a time that is not a JSON string: want an RFC 3339 time, such as \"2025-01-31T12:00:00Z\""
			}
		}
		if text != "" && text != e.Error() {
			out = append(out, replacement{e.Error(), text})
		}
	})
	return out
}

// jsonBadChar finds the character encoding/json found out of place.
var jsonBadChar = regexp.MustCompile(`^invalid character ('(?:[^'\\]|\\.)*'|"[^"]*")`)

// jsonSyntax says where and why a text is not JSON, without Go's
// grammar words ("in literal null (expecting 'u')").
func jsonSyntax(e *json.SyntaxError) string {
	if m := jsonBadChar.FindStringSubmatch(e.Error()); m != nil {
		return fmt.Sprintf("not JSON: %s at byte %d cannot be there", m[1], e.Offset)
	}
	if e.Error() == "unexpected end of JSON input" {
		return fmt.Sprintf("not JSON: the data end too early, after byte %d", e.Offset)
	}
	return fmt.Sprintf("not JSON (at byte %d)", e.Offset)
}

// walkErrors calls fn on err and every error it wraps, depth first.
func walkErrors(err error, fn func(error)) {
	if err == nil {
		return
	}
	fn(err)
	switch u := err.(type) {
	case interface{ Unwrap() error }:
		walkErrors(u.Unwrap(), fn)
	case interface{ Unwrap() []error }:
		for _, e := range u.Unwrap() {
			walkErrors(e, fn)
		}
	}
}

// jsonKind names the JSON kind a Go type is read from.
func jsonKind(t reflect.Type) string {
	if t == nil {
		return "a value"
	}
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.Bool:
		return "true or false"
	case reflect.String:
		return "a string"
	case reflect.Slice, reflect.Array:
		return "a list"
	case reflect.Map, reflect.Struct:
		return "an object"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		bits := t.Bits()
		return fmt.Sprintf("a whole number from %d to %d", -(int64(1) << (bits - 1)), int64(1)<<(bits-1)-1)
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return fmt.Sprintf("a whole number from 0 to %d", uint64(1)<<(t.Bits()-1)*2-1)
	}
	return "a number"
}

// fileProblem says why a file could not be opened, created or written:
// every command says a missing file, a full disk or a pipe whose reader
// has gone in these words.
func fileProblem(err error) string {
	switch {
	case errors.Is(err, syscall.ENOSPC):
		return "no space left on the device"
	case errors.Is(err, syscall.EPIPE):
		return "the reader of the pipe has gone"
	case errors.Is(err, fs.ErrNotExist):
		return "no such file or directory"
	case errors.Is(err, fs.ErrPermission):
		return "permission denied"
	case errors.Is(err, syscall.ENOTDIR):
		return "a part of the path is a file, not a directory"
	case errors.Is(err, syscall.EISDIR):
		return "a directory, not a file"
	}
	return err.Error()
}

// unnamedFileProblem is fileProblem for err, of a file, said without the
// file's name (Go's "write /dev/stdout: "), which the message says its
// own way (standard output, --out FILE).
func unnamedFileProblem(err error) string {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return fileProblem(pe.Err)
	}
	return fileProblem(err)
}

// fieldFlags names, for one command, the flag that sets each input field
// a library's model.FieldError may name (by the field's JSON key).
type fieldFlags map[string]string

// badParams is a library's error about a command's inputs, as bad input
// in the tool's words: a model.FieldError names the flag of its field and
// the flag's value (read from fl); another error of the inputs says what
// is wrong without a flag to name.
func (ff fieldFlags) badParams(err error, fl *pflag.FlagSet) error {
	var fe *model.FieldError
	if errors.As(err, &fe) {
		if msg := ff.jointBlame(fe, fl); msg != "" {
			return usageError{&restated{msg, err}}
		}
		if name, ok := ff[fe.Field]; ok {
			if want := fieldRange(fe, fl.Lookup(name)); want != "" {
				return usageError{&rangeError{Flag: "--" + name, Value: fl.Lookup(name).Value.String(), Want: want, Err: err}}
			}
			what := "--" + name
			if f := fl.Lookup(name); f != nil && f.Value.Type() != "bool" {
				what += " " + f.Value.String()
			}
			msg := fe.Msg
			for field, flag := range ff {
				// A field the message names by its key, named by its flag.
				msg = strings.ReplaceAll(msg, "("+field+")", "(--"+flag+")")
			}
			return usageError{&restated{what + ": " + msg, err}}
		}
	}
	return usageError{&restated{words(err), err}}
}

// fieldRangeNotes say, of a library field, why its range holds, after
// the range in the tool's words.
var fieldRangeNotes = map[string]string{
	"fetch.cover_target": "the target the covered regime's clients draw covers to",
}

// fieldRange is the range, in the tool's words, of the number flag f
// that a library's error of its field alone (fe) found its value out of:
// fe's Range said again ({0, 10000, whole}: "a whole number from 0 to
// 10000"), or, for a most alone, f's own words; "" for another flag or
// an error without a range.
func fieldRange(fe *model.FieldError, f *pflag.Flag) string {
	if f == nil || !isNumberFlag(f) || fe.Other != "" || fe.Range == nil {
		return ""
	}
	want := rangeWords(*fe.Range, f)
	if note, ok := fieldRangeNotes[fe.Field]; ok && want != "" {
		want += ", " + note
	}
	return want
}

// rangeWords is r in the tool's words, for the number flag f.
func rangeWords(r model.Range, f *pflag.Flag) string {
	least, most := model.FormatBound(r.Least), model.FormatBound(r.Most)
	switch {
	case len(r.Words) > 0:
		return r.WordList()
	case r.Span && r.Whole && r.HasLeast && r.HasMost:
		return fmt.Sprintf("N or MIN..MAX, whole numbers from %s to %s", least, most)
	case r.Span && r.HasLeast && r.HasMost:
		return fmt.Sprintf("X or MIN..MAX with %s %s MIN <= MAX %s %s (one %s, or a range drawn from)",
			least, lessThan(r.LeastOpen), lessThan(r.MostOpen), most, cmp.Or(r.Of, "number"))
	case r.Span:
		return ""
	case r.HasLeast && !r.HasMost && r.Whole:
		if f.Value.Type() == "uint32" {
			return fmt.Sprintf("a whole number from %s to %d", least, uint32(math.MaxUint32))
		}
		return "a whole number, at least " + least
	case r.HasLeast && !r.HasMost:
		return "a number, at least " + least
	case r.HasMost && !r.HasLeast:
		// The least is the flag's to say.
		if w := f.Annotations[wantAnnotation]; len(w) == 1 {
			return strings.TrimPrefix(w[0], "want ")
		}
		if r.Whole {
			return "a whole number, at most " + most
		}
		return "a number, at most " + most
	case !r.HasLeast:
		return ""
	case r.Whole:
		return fmt.Sprintf("a whole number from %s to %s", least, most)
	case r.LeastOpen || r.MostOpen:
		return fmt.Sprintf("a %s in %s", cmp.Or(r.Of, "number"), r.Interval())
	case r.Of == "" && r.Least == 0 && r.Most == 1:
		return "a share from 0 to 1"
	}
	return fmt.Sprintf("a %s from %s to %s", cmp.Or(r.Of, "number"), least, most)
}

// lessThan is the comparison that keeps a value inside an end of a
// range: "<" for an open end, "<=" for a closed one.
func lessThan(open bool) string {
	if open {
		return "<"
	}
	return "<="
}

// flagAndValue is "--name value", as an error names a flag.
func flagAndValue(fl *pflag.FlagSet, name string) string {
	if f := fl.Lookup(name); f != nil && f.Value.Type() != "bool" {
		return "--" + name + " " + f.Value.String()
	}
	return "--" + name
}

// jointBlame restates the error of a library rule over several fields,
// which names the field it checks, so that it names the flag the user
// gave when the field's own flag kept its default: "--addresses
// 4294967295: more than the --universe-size 10000000 candidates", not
// the default --universe-size. It returns "" for other errors.
func (ff fieldFlags) jointBlame(fe *model.FieldError, fl *pflag.FlagSet) string {
	given := func(field string) (string, bool) {
		name, ok := ff[field]
		return name, ok && fl.Lookup(name) != nil && fl.Changed(name)
	}
	switch {
	case fe.Field == "universe_size" && fe.Other == "addresses":
		// The universe holds the wallet's addresses.
		if name, ok := given("universe_size"); ok {
			if sweepGiven(fl) {
				return "" // the swept value is named beside it
			}
			return fmt.Sprintf("%s: smaller than the wallet's %s addresses (--%s), which it includes: give --%s %s or more, or fewer --%s",
				flagAndValue(fl, name), fe.OtherValue, ff["addresses"], name, fe.OtherValue, ff["addresses"])
		}
		if addr, ok := given("addresses"); ok {
			return fmt.Sprintf("%s: more than the %s candidates the node tests, which include the wallet's addresses (give --%s %s or more)",
				flagAndValue(fl, addr), flagAndValue(fl, ff["universe_size"]), ff["universe_size"], fe.OtherValue)
		}
	case fe.Field == "addresses" && fe.Other == "extra_elements":
		// The filter is sized for addresses times elements per address,
		// plus the extra elements: Most is the addresses that fit.
		for _, field := range []string{"extra_elements", "elements_per_address", "addresses"} {
			name, ok := given(field)
			if !ok {
				continue
			}
			fix := fmt.Sprintf("give --%s %s at most (with --%s %s)", ff["addresses"], fe.Most, ff["extra_elements"], fe.OtherValue)
			if fe.Most == "0" {
				fix = "not one address fits: give fewer"
			}
			return fmt.Sprintf("%s: the filter would be sized for more than the %d elements a filter counts (addresses times elements per address, plus extra elements): %s",
				flagAndValue(fl, name), uint32(math.MaxUint32), fix)
		}
	case fe.Field == "appearances" && fe.Other == "blocks":
		// Each script appears in that many of the blocks scanned.
		if name, ok := given("appearances"); ok {
			if sweepGiven(fl) {
				return ""
			}
			return fmt.Sprintf("%s: more than the %s blocks scanned (--%s): give --%s %s at most, or more --%s",
				flagAndValue(fl, name), fe.OtherValue, ff["blocks"], name, fe.OtherValue, ff["blocks"])
		}
		if blocks, ok := given("blocks"); ok {
			return fmt.Sprintf("%s: fewer than the %s blocks each script appears in (give --%s %s or more)",
				flagAndValue(fl, blocks), flagAndValue(fl, ff["appearances"]), blocks, fe.Value)
		}
	case fe.Field == "fetch.decoys_per_session" && fe.Other == "chain.block_count":
		// The blocks bound the decoys: their flag and the most they allow.
		return (&rangeError{Flag: "--" + ff[fe.Field], Value: fl.Lookup(ff[fe.Field]).Value.String(),
			Want:    fmt.Sprintf("a whole number from 0 to %s (a session's decoys are fewer than half the %s)", fe.Most, flagAndValue(fl, ff[fe.Other])),
			Example: flagExample(fl.Lookup(ff[fe.Field]))}).Error()
	case fe.Field == "chain.block_count" && fe.Other == "chain.txs_per_block":
		// The transactions per block bound the blocks: their flag, and
		// the blocks that fit.
		return fmt.Sprintf("%s: with %s, more than the %d transactions a simulated chain holds: give at most %s blocks, or fewer transactions per block",
			flagAndValue(fl, ff[fe.Field]), flagAndValue(fl, ff[fe.Other]), simulate.MaxChainTransactions, fe.Most)
	}
	return ""
}

// sweepGiven is whether fl's --sweep was given: a bound then holds at one
// value of the sweep, and what would work depends on the others.
func sweepGiven(fl *pflag.FlagSet) bool {
	return fl.Lookup("sweep") != nil && fl.Changed("sweep")
}

// modelFields are the flags of the model's parameters, in the commands
// that take them as "privacy model" does.
var modelFields = fieldFlags{
	"addresses": "addresses", "fp_rate": "fprate", "universe_size": "universe-size",
	"elements_per_address": "elements-per-address", "extra_elements": "extra-elements",
	"filters": "filters", "pair_test": "pair-test", "sizing": "sizing",
	"trials": "monte-carlo", "sample": "monte-carlo-sample",
	"target_p_h_1": "target-p-h-1", "target_p_h_all": "target-p-h-all",
}

// compareFields are the flags of "privacy compare": the model's and those
// of the BIP 157 side.
var compareFields = func() fieldFlags {
	ff := fieldFlags{
		"watch_per_address": "watch-per-address", "elements_per_block": "elements-per-block",
		"blocks": "blocks", "wallet_blocks": "wallet-blocks", "appearances": "appearances",
		"decoys": "decoys", "peer_count": "peers",
	}
	maps.Copy(ff, modelFields)
	return ff
}()

// demoFields are the flags of "demo", whose wallet has --keys addresses.
var demoFields = fieldFlags{
	"addresses": "keys", "fp_rate": "fprate", "extra_elements": "extra-elements",
	"filters": "filters", "sizing": "sizing", "universe_size": "universe-size",
}

// simulateFields are the flags of "privacy simulate".
var simulateFields = fieldFlags{
	"wallet_count": "wallets", "sessions_per_wallet": "sessions", "addresses_per_wallet": "addresses",
	"fp_rate_range": "fprate", "sizing": "sizing", "elements_per_address": "elements-per-address",
	"extra_elements": "extra-elements", "pay_fraction": "pay-fraction", "filteradd_fraction": "filteradd-fraction",
	"noise_session_count": "noise", "degenerate_session_count": "degenerate", "regime": "regime",
	"chain.block_count": "blocks", "chain.txs_per_block": "txs-per-block", "fetch.wallet_count": "fetch-wallets",
	"fetch.sessions_per_wallet": "fetch-sessions", "fetch.payments_per_wallet": "payments",
	"fetch.payers_per_wallet": "payers", "fetch.decoys_per_session": "decoys", "fetch.noise_session_count": "fetch-noise",
	"fetch.cover_target": "cover-target",
}

// Go's words in the notes the peer packages keep about a damaged file of
// a data directory (a ban list, an address book): notes are text, so
// they are found by their form.
var (
	noteBadChar   = regexp.MustCompile(`invalid character ('(?:[^'\\]|\\.)*') (?:looking for beginning of value|after [a-z ]+|in [a-z ]+)`)
	noteUnmarshal = regexp.MustCompile(`json: cannot unmarshal (\w+) into Go (?:struct field ([\w.]+)|value) of type ([\w.\[\]*]+)`)
	noteNotFile   = regexp.MustCompile(`not a regular file but ([-a-zA-Z]+)`)
	noteJSON      = regexp.MustCompile(`(^|: |\()json: `)
	noteCount     = regexp.MustCompile(`\b(\d+) ([a-z]+)\(s\)`)
)

// jsonKinds names the JSON kinds encoding/json names by Go's words.
var jsonKinds = map[string]string{"array": "a list", "object": "an object", "string": "a string", "number": "a number", "bool": "true or false"}

// goKind names the JSON kind a Go type, as encoding/json writes it, is
// read from.
func goKind(typ string) string {
	switch {
	case strings.HasPrefix(typ, "[]"):
		return "a list"
	case typ == "string":
		return "a string"
	case typ == "bool":
		return "true or false"
	case strings.HasPrefix(typ, "int"), strings.HasPrefix(typ, "uint"), strings.HasPrefix(typ, "float"):
		return "a number"
	}
	return "an object"
}

// diskNoteWords says a note about a damaged file of a data directory in
// the tool's words, as words says an error.
func diskNoteWords(note string) string {
	note = noteBadChar.ReplaceAllString(note, "not JSON: $1 cannot be there")
	note = strings.ReplaceAll(note, "unexpected end of JSON input", "not JSON: the data end too early")
	note = strings.ReplaceAll(note, "unexpected EOF", "the data end too early")
	note = noteUnmarshal.ReplaceAllStringFunc(note, func(m string) string {
		sub := noteUnmarshal.FindStringSubmatch(m)
		kind := jsonKinds[sub[1]]
		if kind == "" {
			kind = "a value"
		}
		what := "it holds"
		if sub[2] != "" {
			path := strings.Split(sub[2], ".")
			what = fmt.Sprintf("field %q holds", path[len(path)-1])
		}
		return fmt.Sprintf("%s %s where %s is wanted", what, kind, goKind(sub[3]))
	})
	note = noteNotFile.ReplaceAllStringFunc(note, func(m string) string {
		if strings.HasPrefix(noteNotFile.FindStringSubmatch(m)[1], "d") {
			return "a directory, not a file"
		}
		return "not a regular file"
	})
	note = noteCount.ReplaceAllStringFunc(note, func(m string) string {
		sub := noteCount.FindStringSubmatch(m)
		n, err := strconv.Atoi(sub[1])
		if err != nil {
			return m
		}
		return plural(n, sub[2])
	})
	return noteJSON.ReplaceAllString(note, "$1")
}
