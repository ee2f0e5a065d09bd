package lab

import "fmt"

// plural formats a count with its noun, in the singular for one: "1 row",
// "2 rows" (the nouns it is given take -s).
func plural[T ~int | ~int64](n T, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}
