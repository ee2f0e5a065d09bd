package diskfile

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

func TestSetAside(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "f")
	at := time.Unix(1700000000, 0)
	steps := []struct {
		at   time.Time
		dir  bool // a directory, not a file, at path
		want []string
	}{
		{at, false, []string{"f.damaged-1700000000"}},
		{at, true, []string{"f.damaged-1700000000", "f.damaged-1700000000.1"}},
		{at, false, []string{"f.damaged-1700000000.1", "f.damaged-1700000000.2"}},
		{at.Add(time.Second), false, []string{"f.damaged-1700000000.2", "f.damaged-1700000001"}},
		{at.Add(10 * time.Second), true, []string{"f.damaged-1700000001", "f.damaged-1700000010"}},
		{at.Add(20 * time.Second), false, []string{"f.damaged-1700000010", "f.damaged-1700000020"}},
	}
	for i, st := range steps {
		if st.dir {
			if err := os.MkdirAll(filepath.Join(path, "sub"), 0o755); err != nil {
				t.Fatal(err)
			}
		} else if err := os.WriteFile(path, []byte{byte(i)}, 0o644); err != nil {
			t.Fatal(err)
		}
		aside, err := SetAside(path, st.at)
		if err != nil {
			t.Fatal(err)
		}
		if aside != st.want[len(st.want)-1] {
			t.Fatalf("step %d: set aside as %s, want %s", i, aside, st.want[len(st.want)-1])
		}
		entries, err := os.ReadDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, e := range entries {
			names = append(names, e.Name())
		}
		if !slices.Equal(names, st.want) {
			t.Fatalf("step %d: directory holds %q, want %q", i, names, st.want)
		}
	}
	if _, err := SetAside(path, at); err == nil {
		t.Fatal("set aside a file that is not there")
	}
}
