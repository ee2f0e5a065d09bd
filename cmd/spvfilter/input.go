package main

import (
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"strings"
)

// maxHexInput bounds what one hex argument may read from a file or standard
// input: a block is at most 4 MB of weight, so its hex is under 8 MiB.
const maxHexInput = 16 << 20

// readHexArg decodes a hex argument. "@FILE" reads the hex from FILE, "-"
// from standard input; white space around and inside file contents is
// ignored, as is a leading "0x". what names the argument in errors.
func (a *app) readHexArg(what, arg string) ([]byte, error) {
	text, err := a.readArgText(what, arg)
	if err != nil {
		return nil, err
	}
	return decodeHex(what, text)
}

// readArgText returns the literal text of an argument, or the contents of
// the file or standard input it names.
func (a *app) readArgText(what, arg string) (string, error) {
	var r io.Reader
	switch {
	case arg == "-":
		if err := a.claimStdin(what); err != nil {
			return "", err
		}
		r = a.stdin
	case strings.HasPrefix(arg, "@"):
		f, err := os.Open(arg[1:])
		if err != nil {
			return "", badInput("%s: %w", what, err)
		}
		defer f.Close()
		r = f
	default:
		return arg, nil
	}
	b, err := io.ReadAll(io.LimitReader(r, maxHexInput+1))
	if err != nil {
		return "", fmt.Errorf("%s: reading: %w", what, err)
	}
	if len(b) > maxHexInput {
		return "", badInput("%s: input longer than %d bytes", what, maxHexInput)
	}
	return string(b), nil
}

// decodeHex decodes hex text, ignoring white space and a leading 0x, and
// names the argument and the offending position in errors.
func decodeHex(what, text string) ([]byte, error) {
	s := strings.Join(strings.Fields(text), "")
	s = strings.TrimPrefix(strings.TrimPrefix(s, "0x"), "0X")
	if s == "" {
		return nil, badInput("%s: empty hex", what)
	}
	if len(s)%2 != 0 {
		return nil, badInput("%s: odd number of hex digits (%d)", what, len(s))
	}
	b, err := hex.DecodeString(s)
	if err != nil {
		if e, ok := err.(hex.InvalidByteError); ok {
			return nil, badInput("%s: invalid hex character %q at offset %d", what, rune(e), strings.IndexByte(s, byte(e)))
		}
		return nil, badInput("%s: %w", what, err)
	}
	return b, nil
}

// claimStdin marks standard input as read by the argument what; it is bad
// input for a second argument to claim it, since it can feed only one.
func (a *app) claimStdin(what string) error {
	if a.stdinUsed {
		return badInput("%s: standard input (-) can feed only one argument, and another one read it", what)
	}
	a.stdinUsed = true
	return nil
}

// readHexArgs decodes every argument with readHexArg.
func (a *app) readHexArgs(what string, args []string) ([][]byte, error) {
	out := make([][]byte, 0, len(args))
	for i, arg := range args {
		b, err := a.readHexArg(fmt.Sprintf("%s %d", what, i+1), arg)
		if err != nil {
			return nil, err
		}
		out = append(out, b)
	}
	return out, nil
}
