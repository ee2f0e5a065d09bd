package main

import (
	"bytes"
	"encoding/hex"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"runtime"
	"strings"
	"testing"

	"github.com/btcsuite/btcd/chaincfg"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// TestFirstRunMistakes: mistakes a first run of every command makes (a
// flag named as another command names it, a capture cut short, a count
// given to a flag that takes a file, a capture field of the wrong kind)
// are bad input that names the flag and says what is taken, and cobra's
// commands (completion, help) show examples. Before, the flag was said to
// be no flag with no hint, the cut line was said to end too early with
// nothing wanted, the count was "no such file or directory", a field was
// named twice and a fraction was refused where "a number" was wanted, and
// completion and help had no example; version -v (--verbose) was no
// flag, and now says how the binary was built; a --listen address not
// well formed was said in the net package's words ("missing port in
// address") and its port to be from 1 when 0 is taken; a --proxy that is
// no URL was not shown, nor why.
func TestFirstRunMistakes(t *testing.T) {
	dir := t.TempDir()
	const record = `{"time":"2024-01-01T00:00:00Z","client":"127.0.0.1:5","session":"s1","command":"filterload","filterload":"174940d10c277befcb99c42247d4726c4a1fce8e9302111a070000001b6a5a9a02"}`
	files := map[string]string{
		"cut.jsonl":     record + "\n" + record[:60],
		"universe.txt":  "# candidates of regtest blocks 0..1\n" + coreElem1 + " # height 1\n",
		"type.jsonl":    `{"time":"2024-01-01T00:00:00Z","client":"127.0.0.1:5","command":"getcfilters","filter_type":1.5,"start_height":14,"stop_hash":"6b3ad459f172f5b71abedc48ba41ce8074df1f7bf83c0326c0cc1e36eb709413"}` + "\n",
		"command.jsonl": `{"time":"2024-01-01T00:00:00Z","client":"127.0.0.1:5","command":7}` + "\n",
	}
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	cut, universe := filepath.Join(dir, "cut.jsonl"), filepath.Join(dir, "universe.txt")
	// Files beyond what an argument reads: raw bytes (a blk*.dat file of
	// Bitcoin Core, say), and hex.
	bigBinary, bigHex := filepath.Join(dir, "big.dat"), filepath.Join(dir, "big.hex")
	if err := os.WriteFile(bigBinary, make([]byte, maxHexInput+1), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bigHex, bytes.Repeat([]byte("00"), maxHexInput/2+1), 0o600); err != nil {
		t.Fatal(err)
	}
	// A relay address, and the form a relay's is wanted in, without the
	// net package's words.
	capture := func(listen string) []string {
		return []string{"privacy", "capture", "--listen", listen, "--upstream", "127.0.0.1:1", "--network", "regtest", "--out", "-"}
	}
	const listenForm = "want HOST:PORT to listen on, such as 127.0.0.1:0 (this machine only; port 0: any free one) or :8333 (every interface)"
	goAddrWords := []string{"in address", "from 1 to 65535"}
	for _, tt := range []struct {
		name   string
		args   []string
		status int
		want   []string // in the error (or, exit 0, the output)
		not    []string // not in it
	}{
		{"fetches --universe", []string{"privacy", "fetches", "--capture", cut, "--universe", universe},
			exitBadInput, []string{"--universe: no such flag (did you mean --index?)"}, nil},
		{"fetches --chain", []string{"privacy", "fetches", "--capture", cut, "--chain", "chain.idx"},
			exitBadInput, []string{"--chain: no such flag (did you mean --index?)"}, nil},
		{"analyze --index", []string{"privacy", "analyze", "--capture", cut, "--index", "chain.idx"},
			exitBadInput, []string{"--index: no such flag (did you mean --universe?)"}, nil},
		{"merkleblock verify --proof", []string{"merkleblock", "verify", "--proof", "00"},
			exitBadInput, []string{"--proof: no such flag (did you mean --merkleblock?)"}, nil},
		{"demo --out", []string{"demo", "--out", "x.svg"},
			exitBadInput, []string{"--out: no such flag (did you mean --plot?)"}, nil},
		{"analyze cut capture", []string{"privacy", "analyze", "--capture", cut, "--universe", universe},
			exitBadInput, []string{"--capture " + cut + ", line 2: the record is cut short", "want the JSON lines privacy capture writes, one whole record per line"}, nil},
		{"fetches cut capture", []string{"privacy", "fetches", "--capture", cut, "--index", filepath.Join(dir, "none.idx")},
			exitBadInput, []string{"line 2: the record is cut short"}, nil},
		{"lab --blocks count", []string{"lab", "--blocks", "10"},
			exitBadInput, []string{"--blocks 10: no such file or directory: --blocks takes a block file that lab --save-blocks wrote, not a count (with nodes, --from and --to choose the blocks)"}, nil},
		{"scan --birthday", []string{"scan", "--network", "regtest", "--connect", "127.0.0.1:1", "--watch", "00", "--birthday", "2024-01-01"},
			exitBadInput, []string{"--birthday: no such flag (did you mean --from HEIGHT?)"}, nil},
		{"block hash of zeros", []string{"gcs", "match", "--filter", "00", "--block-hash", "00", "00"},
			exitBadInput, []string{"--block-hash: 1 byte, a hash has 32 (64 hex digits, as RPC shows it)"}, []string{"zero hash", "genesis"}},
		{"previous header of zeros", []string{"gcs", "header", "--filter", "00", "--prev-header", "00"},
			exitBadInput, []string{"--prev-header: 1 byte, a hash has 32", "the zero hash (the genesis block's previous header) is 64 zeros"}, nil},
		{"capture field of a fraction", []string{"privacy", "fetches", "--capture", filepath.Join(dir, "type.jsonl"), "--index", filepath.Join(dir, "none.idx")},
			exitBadInput, []string{`line 1, field "filter_type": it holds a JSON number 1.5 where a whole number from 0 to 255 is wanted`}, nil},
		{"capture field of another kind", []string{"privacy", "analyze", "--capture", filepath.Join(dir, "command.jsonl"), "--universe", universe},
			exitBadInput, []string{`line 1, field "command": it holds a JSON number where a string is wanted`}, nil},
		{"binary file too long", []string{"gcs", "build", "--block", "@" + bigBinary},
			exitBadInput, []string{"--block: @" + bigBinary + " holds binary data, not hex, and is longer than the 16777216 bytes (16 MiB) an argument reads: give one value as hex"}, nil},
		{"hex file too long", []string{"bloom", "match", "--filter", corePayload, "@" + bigHex},
			exitBadInput, []string{"element 1: @" + bigHex + " is longer than the 16777216 bytes (16 MiB) an argument reads: give one value as hex, or items one per line"}, nil},
		{"index over a universe", []string{"privacy", "universe", "--peer", "127.0.0.1:1", "--network", "regtest", "--out", filepath.Join(dir, "u.txt"), "--index", universe},
			exitBadInput, []string{"--index " + universe + ": the file exists, and holds a universe of candidates (privacy universe, privacy simulate) (give --force to replace it)"}, nil},
		{"sweep range backwards", []string{"privacy", "model", "--sweep", "addresses=5..1"},
			exitBadInput, []string{`addresses: "5..1": range end below its start: want START..END with END at least START`}, nil},
		{"sweep step of 0", []string{"privacy", "model", "--sweep", "addresses=1..5:0"},
			exitBadInput, []string{`addresses: "1..5:0": step must be above 0: want START..END:STEP with STEP above 0`}, nil},
		{"completion help", []string{"completion", "--help"}, exitOK, []string{"Examples:\n  source <(spvfilter completion bash)"}, nil},
		{"help help", []string{"help", "--help"}, exitOK, []string{"Examples:\n  spvfilter help scan"}, nil},
		{"--listen without a port", capture("127.0.0.1"),
			exitBadInput, []string{`--listen "127.0.0.1": no port; ` + listenForm}, goAddrWords},
		{"--listen port out of range", capture("127.0.0.1:99999"),
			exitBadInput, []string{`--listen "127.0.0.1:99999": port "99999" is not a number from 0 to 65535; ` + listenForm}, goAddrWords},
		{"--listen bracket not closed", capture("[::1:0"),
			exitBadInput, []string{`--listen "[::1:0": an IPv6 address opened with [ has no ]; ` + listenForm}, goAddrWords},
		{"--listen bracket out of place", capture("127.0.0.1]:0"),
			exitBadInput, []string{`--listen "127.0.0.1]:0": a ] out of place: only an IPv6 address goes in brackets, before the port, as [::1]:0; ` + listenForm}, goAddrWords},
		{"--peer without a port", []string{"peers", "--peer", "127.0.0.1", "--network", "regtest"},
			exitBadInput, []string{`--peer "127.0.0.1": no port; want HOST:PORT, such as 127.0.0.1:8333, with the node's port`}, goAddrWords},
		{"--proxy bracket not closed", []string{"scan", "--watch", "51", "--network", "regtest", "--connect", "127.0.0.1:1", "--proxy", "socks5://[::1:9050"},
			exitBadInput, []string{`--proxy "socks5://[::1:9050": not a URL (an IPv6 address opened with [ has no ]): want socks5://HOST:PORT`}, nil},
		{"--proxy with a password not a URL", []string{"scan", "--watch", "51", "--network", "regtest", "--connect", "127.0.0.1:1", "--proxy", "socks5://u:secret@[::1:9050"},
			exitBadInput, []string{`--proxy: not a URL (an IPv6 address opened with [ has no ]): want socks5://HOST:PORT`}, []string{"secret"}},
		{"version -v", []string{"version", "-v"}, exitOK,
			[]string{"spvfilter " + buildVersion() + "\ngo:        " + runtime.Version() + "\nplatform:  " + runtime.GOOS + "/" + runtime.GOARCH + "\n", "  github.com/spf13/cobra v"}, nil},
		{"version --verbose --json", []string{"version", "--verbose", "--json"}, exitOK,
			[]string{`"version": "` + buildVersion() + `"`, `"go": "` + runtime.Version() + `"`, `"github.com/btcsuite/btcd v`}, nil},
		{"version --json without --verbose", []string{"version", "--json"}, exitOK, []string{`"version"`}, []string{`"build"`}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			stdout, stderr, status := runCLI(t, "", tt.args...)
			got := stderr
			if tt.status == exitOK {
				got = stdout
			}
			for _, w := range tt.want {
				if status != tt.status || !strings.Contains(got, w) {
					t.Errorf("status %d, stdout %q, stderr %q: want status %d and %q", status, stdout, stderr, tt.status, w)
				}
			}
			for _, w := range tt.not {
				if strings.Contains(got, w) {
					t.Errorf("stderr %q: want no %q", stderr, w)
				}
			}
		})
	}
}

// fileFlagRow is a run of a command that names, with one of its file
// flags, a file that does not exist (or, for a file it writes, one in a
// directory that does not exist), and what its error must say beside the
// flag and the path: what to give instead.
type fileFlagRow struct {
	args []string // the command line, the missing path in it
	flag string   // the file flag, as the error names it
	path string   // the path as given, as the error names it
	want string   // what to do
}

// TestMissingFileFlags: a file flag of any command (a flag whose help
// names a file, found by walking the command tree: a new one has no row
// and fails) given a file that does not exist is bad input that names
// the flag, the path as given and what to give: the command that writes
// such a file, or, for @FILE, the value itself. A file to write in a
// directory that does not exist says to create the directory. Before, a
// missing file was "--capture PATH: no such file or directory" alone, and
// a missing directory "directory DIR does not exist" alone.
func TestMissingFileFlags(t *testing.T) {
	dir := t.TempDir()
	missing := filepath.Join(dir, "missing")
	at := "@" + missing
	out := filepath.Join(dir, "no-dir", "out")
	zeros := strings.Repeat("00", 32)
	var genesis bytes.Buffer
	if err := chaincfg.RegressionNetParams.GenesisBlock.Serialize(&genesis); err != nil {
		t.Fatal(err)
	}
	block := hex.EncodeToString(genesis.Bytes())
	fetches := filepath.Join(dir, "fetches.jsonl")
	if err := os.WriteFile(fetches, []byte(`{"time":"2024-01-01T00:00:00Z","client":"127.0.0.1:5","command":"getcfilters","filter_type":0,"start_height":14,"stop_hash":"6b3ad459f172f5b71abedc48ba41ce8074df1f7bf83c0326c0cc1e36eb709413"}`+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	sim := filepath.Join(dir, "sim")
	runOK(t, smallSimulation("7", sim)...)
	labels := filepath.Join(sim, "labels.json")
	node := []string{"--network", "regtest", "--connect", "127.0.0.1:1"}

	const (
		value   = "@ reads the file named after it: check the path, or give the value itself without @"
		created = "create it first, or give a path in a directory that exists"
	)
	rows := map[string]fileFlagRow{
		"bloom add --filter":               {[]string{"bloom", "add", "--filter", at, coreElem1}, "--filter", at, value},
		"bloom inspect --filter":           {[]string{"bloom", "inspect", "--filter", at}, "--filter", at, value},
		"bloom match --filter":             {[]string{"bloom", "match", "--filter", at, coreElem1}, "--filter", at, value},
		"bloom tx --filter":                {[]string{"bloom", "tx", "--filter", at, "--tx", "00"}, "--filter", at, value},
		"bloom tx --tx":                    {[]string{"bloom", "tx", "--filter", corePayload, "--tx", at}, "--tx", at, value},
		"demo --plot":                      {[]string{"demo", "--plot", out + ".svg"}, "--plot", out + ".svg", created},
		"gcs build --block":                {[]string{"gcs", "build", "--block", at}, "--block", at, value},
		"gcs build --prevout-script":       {[]string{"gcs", "build", "--block", block, "--prevout-script", at}, "--prevout-script 1:", at, value},
		"gcs header --filter":              {[]string{"gcs", "header", "--filter", at, "--prev-header", zeros}, "--filter", at, value},
		"gcs inspect --filter":             {[]string{"gcs", "inspect", "--filter", at}, "--filter", at, value},
		"gcs match --filter":               {[]string{"gcs", "match", "--filter", at, "--block-hash", zeros, coreElem1}, "--filter", at, value},
		"lab --blocks":                     {[]string{"lab", "--blocks", missing}, "--blocks", missing, "--blocks takes a block file that lab --save-blocks wrote"},
		"lab --plot":                       {[]string{"lab", "--blocks", missing, "--plot", out + ".svg"}, "--plot", out + ".svg", created},
		"lab --save-blocks":                {append([]string{"lab", "--save-blocks", out}, node...), "--save-blocks", out, created},
		"lab --vectors":                    {[]string{"lab", "--vectors", missing}, "--vectors", missing, "--vectors takes BIP 158's test vectors"},
		"merkleblock build --block":        {[]string{"merkleblock", "build", "--block", at, "--txid", zeros}, "--block", at, value},
		"merkleblock build --filter":       {[]string{"merkleblock", "build", "--block", block, "--filter", at}, "--filter", at, value},
		"merkleblock build --txid":         {[]string{"merkleblock", "build", "--block", block, "--txid", at}, "--txid 1:", at, value},
		"merkleblock verify --merkleblock": {[]string{"merkleblock", "verify", "--merkleblock", at}, "--merkleblock", at, value},
		"peers --datadir":                  {append([]string{"peers", "--datadir", missing}, node...), "--datadir", missing, "a data directory given must exist"},
		"scan --datadir":                   {append([]string{"scan", "--watch", "51", "--datadir", missing}, node...), "--datadir", missing, "a data directory given must exist"},
		"scan --watch":                     {append([]string{"scan", "--watch", at}, node...), "--watch 1:", at, value},
		"privacy analyze --capture":        {[]string{"privacy", "analyze", "--capture", missing, "--universe", missing}, "--capture", missing, "--capture takes the JSON lines privacy capture writes"},
		"privacy analyze --universe":       {[]string{"privacy", "analyze", "--filter", corePayload, "--universe", missing}, "--universe", missing, "--universe takes the candidates privacy universe writes"},
		"privacy capture --out":            {[]string{"privacy", "capture", "--listen", "127.0.0.1:0", "--upstream", "127.0.0.1:1", "--network", "regtest", "--out", out}, "--out", out, created},
		"privacy evaluate --labels":        {[]string{"privacy", "evaluate", "--labels", missing, "--report", missing}, "--labels", missing, "--labels takes the labels.json privacy simulate writes"},
		"privacy evaluate --report":        {[]string{"privacy", "evaluate", "--labels", labels, "--report", missing}, "--report", missing, "--report takes the JSON privacy analyze --capture --json or privacy fetches --json prints"},
		"privacy fetches --capture":        {[]string{"privacy", "fetches", "--capture", missing, "--index", missing}, "--capture", missing, "--capture takes the JSON lines privacy capture writes"},
		"privacy fetches --index":          {[]string{"privacy", "fetches", "--capture", fetches, "--index", missing}, "--index", missing, "--index takes the appearance index privacy universe --index writes"},
		"privacy model --plot":             {[]string{"privacy", "model", "--plot", out + ".svg"}, "--plot", out + ".svg", created},
		"privacy model --plot-j":           {[]string{"privacy", "model", "--plot-j", out + ".svg"}, "--plot-j", out + ".svg", created},
		"privacy universe --index":         {[]string{"privacy", "universe", "--peer", "127.0.0.1:1", "--network", "regtest", "--out", "-", "--index", out}, "--index", out, created},
		"privacy universe --out":           {[]string{"privacy", "universe", "--peer", "127.0.0.1:1", "--network", "regtest", "--out", out}, "--out", out, created},
		// Positional arguments, for a command that takes them.
		"bloom add ARGS":         {[]string{"bloom", "add", "--filter", corePayload, at}, "element 1:", at, value},
		"bloom match ARGS":       {[]string{"bloom", "match", "--filter", corePayload, coreElem1, at}, "element 2:", at, value},
		"bloom new ARGS":         {[]string{"bloom", "new", "--elements", "3", "--fprate", "0.01", at}, "element 1:", at, value},
		"gcs match ARGS":         {[]string{"gcs", "match", "--filter", "00", "--block-hash", zeros, at}, "element 1:", at, value},
		"merkleblock build ARGS": {[]string{"merkleblock", "build", "--block", block, "--txid", zeros, at}, "--txid 2:", at, value},
		"send ARGS":              {append([]string{"send", at}, node...), "TX_HEX:", at, value},
	}
	// Flags whose help names a file or a directory but that take none,
	// and a directory a command creates.
	notFile := map[string]bool{
		"peers --unban": true, "privacy simulate --force": true, "privacy simulate --seed": true,
		"privacy universe --force": true, "scan --new-covers": true, "privacy simulate --out": true,
	}
	namesFile := regexp.MustCompile(`(?i)file|director|written by|\.json\b|JSON of`)
	found := map[string]bool{}
	walkCommands(newRootCommand(&app{}), func(c *cobra.Command) {
		c.LocalFlags().VisitAll(func(f *pflag.Flag) {
			key := strings.TrimPrefix(c.CommandPath()+" --"+f.Name, "spvfilter ")
			found[key] = true
			if _, ok := rows[key]; !ok && !notFile[key] && namesFile.MatchString(f.Usage) {
				t.Errorf("%s (%q) names a file: no row says what its missing file's error is", key, f.Usage)
			}
		})
		if takesArgs(c) {
			// Every argument is a value, @FILE or -.
			key := strings.TrimPrefix(c.CommandPath()+" ARGS", "spvfilter ")
			found[key] = true
			if _, ok := rows[key]; !ok {
				t.Errorf("%s takes arguments: no row says what a missing @FILE among them says", c.CommandPath())
			}
		}
	})
	for key, r := range rows {
		t.Run(key, func(t *testing.T) {
			if !found[key] {
				t.Fatalf("no such flag in the command tree")
			}
			_, stderr, status := runCLI(t, "", r.args...)
			for _, w := range []string{r.flag + " " + r.path + ":", r.want} {
				if status != exitBadInput || !strings.Contains(stderr, w) {
					t.Errorf("status %d, stderr %q: want status %d and %q", status, stderr, exitBadInput, w)
				}
			}
		})
	}
}

// takesArgs reports whether c, a command of no subcommands, takes
// positional arguments: whether its arguments are checked by another
// rule than noArgs (privacy model's modelArgs and scan's scanArgs are
// noArgs with a hint).
func takesArgs(c *cobra.Command) bool {
	if c.HasSubCommands() || !c.Runnable() {
		return false
	}
	if c.Args == nil {
		return true // cobra takes any argument
	}
	p := reflect.ValueOf(c.Args).Pointer()
	return p != reflect.ValueOf(noArgs).Pointer() && p != reflect.ValueOf(modelArgs).Pointer() && p != reflect.ValueOf(scanArgs).Pointer()
}
