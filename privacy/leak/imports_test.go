package leak_test

import (
	"os/exec"
	"strings"
	"testing"
)

const module = "github.com/spvfilter/spvfilter/"

// deps lists the packages the given ones import, directly or not, but
// the standard library's.
func deps(t *testing.T, pkgs ...string) []string {
	t.Helper()
	args := append([]string{"list", "-deps", "-f", "{{if not .Standard}}{{.ImportPath}}{{end}}"}, pkgs...)
	cmd := exec.Command("go", args...)
	cmd.Dir = "../.."
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	return strings.Fields(string(out))
}

// TestNoPeerImports: no privacy package reaches peer/ (peer/client imports
// privacy/leak, so the arrow must not turn back), and privacy/leak reaches
// only privacy/model, privacy/universe, bip37, gcs, btcd and the standard
// library: not the capture relay, the other attacks or a plotting library.
func TestNoPeerImports(t *testing.T) {
	for _, p := range deps(t, "./privacy/...") {
		if strings.HasPrefix(p, module+"peer") {
			t.Errorf("a privacy package imports %s", p)
		}
	}
	allowed := []string{module + "privacy/leak", module + "privacy/model", module + "privacy/universe", module + "bip37", module + "gcs",
		"github.com/btcsuite/", "github.com/decred/", "golang.org/x/crypto/", "golang.org/x/sys/"}
	n := 0
	for _, p := range deps(t, "./privacy/leak") {
		n++
		ok := false
		for _, a := range allowed {
			ok = ok || p == a || strings.HasSuffix(a, "/") && strings.HasPrefix(p, a)
		}
		if !ok {
			t.Errorf("privacy/leak imports %s", p)
		}
	}
	if n < 5 {
		t.Fatalf("privacy/leak has %d dependencies: go list did not list them", n)
	}
}
