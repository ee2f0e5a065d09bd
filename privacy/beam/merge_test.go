package privacybeam

import (
	"testing"

	"github.com/spvfilter/spvfilter/privacy/universe"
)

// TestProbeLines: every class has a one-line universe of its class, under
// the pair test and without (class 0 exists only under it).
func TestProbeLines(t *testing.T) {
	var p universe.Parser
	for _, pairTest := range []bool{false, true} {
		for cls := 0; cls <= maxClassElems; cls++ {
			if cls == 0 && !pairTest {
				continue
			}
			c, err := p.Parse([]byte(probeLine(cls)))
			if err != nil || c == nil {
				t.Fatalf("class %d: %v", cls, err)
			}
			if got := candidateClass(c, pairTest); got != cls {
				t.Errorf("pair test %v: probe of class %d is of class %d (%v)", pairTest, cls, got, c.Kind)
			}
		}
	}
}
