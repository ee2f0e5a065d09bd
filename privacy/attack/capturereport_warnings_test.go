package attack

import (
	"slices"
	"testing"
)

// TestCaptureWarningsUniverseOnce checks that the universe's warning,
// which every session's report carries, is said once as the universe's,
// and that the warnings after it keep their session's name.
func TestCaptureWarningsUniverseOnce(t *testing.T) {
	const uw = "1 of 20 universe lines skipped, not candidates"
	const cut = "only the first 10 matches are listed; the counts cover all 12"
	var got []string
	w := warnings{seen: map[string]bool{}, out: &got, universe: uw}
	w.add("session a: ", []string{uw, cut})
	w.add("session b: ", []string{uw, cut})
	want := []string{"universe: " + uw, "session a: " + cut, "session b: " + cut}
	if !slices.Equal(got, want) {
		t.Fatalf("warnings %q\nwant %q", got, want)
	}
}
