package model

import (
	"errors"
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
)

// TestFieldErrorsCarryRange: every error of a field held to a range by a
// rule of the field alone carries the range as data (Range), so that a
// caller states it in its own words without reading the message, and
// its message is the range's Refusal, as it read before the range was
// data. Before, Range did not exist and a caller read the range back out
// of the message ("not in 0..10000", "must be at least 1").
func TestFieldErrorsCarryRange(t *testing.T) {
	model := func(f func(*Params)) func() error {
		return func() error {
			p := DefaultParams()
			f(&p)
			_, err := Evaluate(p)
			return err
		}
	}
	compare := func(f func(*CompareParams)) func() error {
		return func() error {
			p := DefaultCompareParams()
			f(&p)
			_, err := Compare(p)
			return err
		}
	}
	trials := func(n int) func() error {
		return func() error {
			p := DefaultParams()
			p.Addresses, p.UniverseSize = 2, 10
			_, err := MonteCarlo(p, MonteCarloOptions{Trials: n, Sample: 1})
			return err
		}
	}
	advise := func(ph1, phAll float64) func() error {
		return func() error {
			_, err := Advise(AdviceParams{Model: DefaultParams(), TargetPH1: ph1, TargetPHAll: phAll})
			return err
		}
	}
	rate := Range{Least: 0, Most: 1, HasLeast: true, HasMost: true, LeastOpen: true, MostOpen: true, Of: "rate"}
	probability := rate
	probability.Of = "probability"
	atLeast1 := Range{Whole: true, Least: 1, HasLeast: true}
	tests := []struct {
		name         string
		run          func() error
		field, value string
		want         Range
		msg          string
	}{
		{"no addresses", model(func(p *Params) { p.Addresses = 0 }), "addresses", "0", atLeast1, "must be at least 1"},
		{"a rate of 0", model(func(p *Params) { p.FPRate = 0 }), "fp_rate", "0", rate, "not a rate in (0, 1)"},
		{"a rate of 1", model(func(p *Params) { p.FPRate = 1 }), "fp_rate", "1", rate, "not a rate in (0, 1)"},
		{"no elements per address", model(func(p *Params) { p.ElementsPerAddress = 0 }), "elements_per_address", "0", atLeast1, "must be at least 1"},
		{"too many filters", model(func(p *Params) { p.Filters = 1001 }), "filters", "1001",
			Range{Whole: true, Most: 1000, HasMost: true}, "at most 1000"},
		{"an unknown sizing", model(func(p *Params) { p.Sizing = "python" }), "sizing", `"python"`,
			Range{Words: []string{"core", "bitcoinj"}}, "want core or bitcoinj"},
		{"no watched items per address", compare(func(p *CompareParams) { p.WatchPerAddress = 0 }), "watch_per_address", "0", atLeast1, "must be at least 1"},
		{"no elements per block", compare(func(p *CompareParams) { p.ElementsPerBlock = 0 }), "elements_per_block", "0", atLeast1, "must be at least 1"},
		{"no blocks", compare(func(p *CompareParams) { p.Blocks = 0 }), "blocks", "0", atLeast1, "must be at least 1"},
		{"no appearances", compare(func(p *CompareParams) { p.Appearances, p.WalletBlocks = 0, 0 }), "appearances", "0", atLeast1, "must be at least 1"},
		{"negative decoys", compare(func(p *CompareParams) { p.Decoys = -1 }), "decoys", "-1",
			Range{Least: 0, HasLeast: true}, "must be a number, at least 0"},
		{"no peers", compare(func(p *CompareParams) { p.Peers = 0 }), "peer_count", "0", atLeast1, "must be at least 1"},
		{"one trial", trials(1), "trials", "1", Range{Whole: true, Least: 2, HasLeast: true}, "must be at least 2"},
		{"too many trials", trials(1_000_001), "trials", "1000001",
			Range{Whole: true, Most: 1_000_000, HasMost: true}, "at most 1000000"},
		{"a target P_h(1) of 1", advise(1, 0), "target_p_h_1", "1", probability, "not a probability in (0, 1)"},
		{"a negative target P_h(N)", advise(0, -0.5), "target_p_h_all", "-0.5", probability, "not a probability in (0, 1)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.run()
			var fe *FieldError
			if !errors.Is(err, ErrBadParams) || !errors.As(err, &fe) {
				t.Fatalf("%v, want an ErrBadParams FieldError", err)
			}
			if fe.Field != tt.field || fe.Value != tt.value {
				t.Fatalf("field %q value %q, want %q %q", fe.Field, fe.Value, tt.field, tt.value)
			}
			if fe.Range == nil {
				t.Fatalf("%v: no Range", err)
			}
			if !reflect.DeepEqual(*fe.Range, tt.want) {
				t.Errorf("Range %+v, want %+v", *fe.Range, tt.want)
			}
			if fe.Msg != tt.msg || fe.Msg != fe.Range.Refusal() {
				t.Errorf("message %q, Refusal %q: want both %q", fe.Msg, fe.Range.Refusal(), tt.msg)
			}
		})
	}
}

// rangelessRules are the package's errors of one field that state no
// range of the field alone, by the field and the message's format: a
// rule over the field and another value, or of a field that is no
// number.
var rangelessRules = map[[2]string]bool{
	{"pair_test", "needs 2 elements per address (the key and its hash), not %d"}: true,
	{"addresses", "Monte Carlo builds at most 1000000 wallet elements, not %d"}:  true,
	{"sample", "more than the %d candidates outside the wallet"}:                 true,
}

// TestBadFieldStatesNoRange: the package's errors built by badField,
// which carry no Range, are the rules of rangelessRules alone, so that a
// new rule of a field's range is built by outOf (which gives its Range)
// or this test fails until it is said why it carries none.
func TestBadFieldStatesNoRange(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	calls := 0
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		file, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(file, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok {
				return true
			}
			if id, ok := call.Fun.(*ast.Ident); !ok || id.Name != "badField" || len(call.Args) < 3 {
				return true
			}
			calls++
			var rule [2]string
			for i, arg := range []ast.Expr{call.Args[0], call.Args[2]} {
				lit, ok := arg.(*ast.BasicLit)
				if !ok || lit.Kind != token.STRING {
					t.Errorf("%s: badField with a field or format that is not a literal", fset.Position(call.Pos()))
					return true
				}
				rule[i], _ = strconv.Unquote(lit.Value)
			}
			if !rangelessRules[rule] {
				t.Errorf("%s: badField(%q, _, %q) carries no Range: build an error of a range with outOf, or add the rule to rangelessRules",
					fset.Position(call.Pos()), rule[0], rule[1])
			}
			return true
		})
	}
	if calls == 0 {
		t.Fatal("no badField call found: the test reads the wrong files")
	}
}
