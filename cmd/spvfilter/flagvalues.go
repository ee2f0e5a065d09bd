package main

import (
	"errors"
	"fmt"

	"github.com/spf13/pflag"
)

// errGivenTwice is the cause of a flag given a second value.
var errGivenTwice = errors.New("given twice")

// onceValue is a flag that takes one value: given twice on a command line
// it is bad input, instead of the last value silently winning.
type onceValue struct {
	pflag.Value
	given bool
}

func (v *onceValue) Set(s string) error {
	if v.given {
		return fmt.Errorf("%w (it was %q): give it once", errGivenTwice, v.String())
	}
	v.given = true
	return v.Value.Set(s)
}

// refuseRepeats makes every single-value flag refuse a second value. A
// repeatable flag (a list) and a switch (a bool, where --json --json
// means what --json means) are left as they are.
func refuseRepeats(f *pflag.Flag) {
	v := f.Value
	if c, ok := v.(checkedValue); ok {
		v = c.Value
	}
	if _, list := v.(pflag.SliceValue); list || v.Type() == "bool" {
		return
	}
	if _, done := f.Value.(*onceValue); done {
		return
	}
	f.Value = &onceValue{Value: f.Value}
}

// flagError is a command-line error of pflag in the tool's own words: a
// value that does not parse says what the flag wants, not which Go
// function failed. Every such error is bad input.
func flagError(err error) error {
	var iv *pflag.InvalidValueError
	if !errors.As(err, &iv) {
		return usageError{err}
	}
	f := iv.GetFlag()
	cause := iv.Unwrap()
	// A number or duration flag fails only to parse, unless it was
	// given twice.
	if want := flagValueWant(f.Value.Type()); want != "" && !errors.Is(cause, errGivenTwice) {
		return badInput("--%s %q: %s", f.Name, iv.GetValue(), want)
	}
	return badInput("--%s %q: %w", f.Name, iv.GetValue(), cause)
}

// flagValueWant describes the values a flag of a pflag type accepts.
func flagValueWant(typ string) string {
	switch typ {
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
	}
	return ""
}
