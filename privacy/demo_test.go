package privacy

import "testing"

// TestRunDemoUniverseSizes runs the demonstration over universes smaller
// and larger than the wallet: the analysis must find every used address
// and the model curve must stay inside the universe.
func TestRunDemoUniverseSizes(t *testing.T) {
	for _, size := range []int{20, 100, 266, 5000} {
		o := DefaultDemoOptions()
		o.UniverseSize = size
		r, err := RunDemo(o)
		if err != nil {
			t.Fatalf("universe %d: %v", size, err)
		}
		if r.UsedFound != o.Used || r.Report.UniverseSize != uint64(size) {
			t.Errorf("universe %d: found %d of %d used, analyzed %d", size, r.UsedFound, o.Used, r.Report.UniverseSize)
		}
		if len(r.Curve) == 0 {
			t.Fatalf("universe %d: no curve", size)
		}
		for _, c := range r.Curve {
			if uint64(c.Params.Addresses) > c.Params.UniverseSize {
				t.Errorf("universe %d: curve point N=%d past |U|=%d", size, c.Params.Addresses, c.Params.UniverseSize)
			}
		}
	}
	if _, err := RunDemo(DemoOptions{Keys: 10, Used: 11, UniverseSize: 100, Filters: 1, FPRate: 0.001}); err == nil {
		t.Error("more used addresses than keys accepted")
	}
}
