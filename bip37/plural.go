package bip37

import (
	"strconv"
	"strings"
)

// plural formats a count with its noun, in the singular for one: "1 byte",
// "2 bytes", "1 hash", "3 hashes" (a noun ending in s, x, ch or sh takes
// -es). Errors count with it, so that none says "1 bytes"; it allocates
// only its result, as decoders refusing a payload must stay cheap.
func plural[T ~int | ~uint32 | ~uint64](n T, noun string) string {
	suffix := ""
	switch {
	case n == 1:
	case strings.HasSuffix(noun, "s"), strings.HasSuffix(noun, "x"),
		strings.HasSuffix(noun, "ch"), strings.HasSuffix(noun, "sh"):
		suffix = "es"
	default:
		suffix = "s"
	}
	var buf [20]byte
	digits := strconv.AppendUint(buf[:0], uint64(n), 10)
	if n < 0 {
		digits = strconv.AppendInt(buf[:0], int64(n), 10)
	}
	return string(digits) + " " + noun + suffix
}
