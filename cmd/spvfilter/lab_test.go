package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/btcsuite/btcd/btcutil"
	"github.com/btcsuite/btcd/chaincfg"
	"github.com/btcsuite/btcd/wire"

	"github.com/spvfilter/spvfilter/gcs"
	"github.com/spvfilter/spvfilter/gcs/lab"
	"github.com/spvfilter/spvfilter/peer/peertest"
)

const labVectors = "../../testvectors/bip158/testnet-19.json"

// labDoc is the part of lab --json the tests read.
type labDoc struct {
	BlockCount   int `json:"block_count"`
	ElementCount int `json:"element_count"`
	Designs      []struct {
		Name                      string   `json:"name"`
		Params                    string   `json:"variant"`
		FPRate                    float64  `json:"fp_rate"`
		ExpectedFalsePositiveRate *float64 `json:"expected_false_positive_rate"`
		SerializedBytes           int      `json:"serialized_bytes"`
		BitsPerElement            *float64 `json:"bits_per_element"`
		ProbeCount                int      `json:"probe_count"`
		WithinInterval            *bool    `json:"within_interval"`
		MatchTimes                []struct {
			WatchedCount int      `json:"watched_count"`
			NsPerBlock   *float64 `json:"ns_per_block"`
		} `json:"match_times"`
	} `json:"designs"`
	Missing     []struct{ Name, Reason string } `json:"missing"`
	PSweep      []struct{ P int }               `json:"p_sweep"`
	ClientCosts []struct {
		WalletSize int `json:"wallet_size"`
		CheapestP  int `json:"cheapest_p"`
	} `json:"client_costs"`
	P19From  *float64 `json:"p19_cheapest_from"`
	Plot     string   `json:"plot"`
	Warnings []string `json:"warnings"`
}

// runLabJSON runs lab --json with args, and checks that its warnings are
// in the JSON alone: standard error holds no text.
func runLabJSON(t *testing.T, args ...string) labDoc {
	t.Helper()
	stdout, stderr, status := runCLI(t, "", append([]string{"lab", "--json"}, args...)...)
	if status != exitOK || stderr != "" {
		t.Fatalf("status %d, standard error %q: want 0 and no text there", status, stderr)
	}
	var doc labDoc
	if err := json.Unmarshal([]byte(stdout), &doc); err != nil {
		t.Fatalf("%v: %.300s", err, stdout)
	}
	return doc
}

// TestLabVectors runs the lab on BIP 158's vectors: every default design
// measured with its probes inside their interval, the sweep and the cost
// rows asked for, the missing designs named, the plot written; the text
// report says where P = 19 is cheapest.
func TestLabVectors(t *testing.T) {
	plot := filepath.Join(t.TempDir(), "lab.svg")
	doc := runLabJSON(t, "--vectors", labVectors, "--probes", "100000", "--timing", "1ms", "--watched", "1,10",
		"--wallets", "1,100,1000", "--p-min", "10", "--p-max", "22", "--plot", plot)
	if doc.BlockCount != 10 || doc.ElementCount != 40 {
		t.Fatalf("%d blocks, %d elements, want the vectors' 10 and 40", doc.BlockCount, doc.ElementCount)
	}
	if len(doc.Designs) != len(lab.DefaultDesigns()) {
		t.Fatalf("%d designs", len(doc.Designs))
	}
	basic := doc.Designs[0]
	if basic.Name != "gcs" || basic.Params != "P=19 M=784931" || basic.BitsPerElement == nil || math.Abs(*basic.BitsPerElement-23.6) > 0.01 {
		t.Errorf("first design %+v, want BIP 158's at 23.6 bits per element on the vectors", basic)
	}
	for _, d := range doc.Designs {
		if d.ProbeCount != 100000 || d.WithinInterval == nil || !*d.WithinInterval || len(d.MatchTimes) != 2 || d.MatchTimes[1].WatchedCount != 10 {
			t.Errorf("%s %s: %+v", d.Name, d.Params, d)
		}
	}
	if len(doc.PSweep) != 13 || doc.PSweep[0].P != 10 || len(doc.ClientCosts) != 3 || doc.ClientCosts[2].WalletSize != 1000 {
		t.Errorf("sweep %v, costs %v", doc.PSweep, doc.ClientCosts)
	}
	if doc.ClientCosts[0].CheapestP >= doc.ClientCosts[2].CheapestP {
		t.Errorf("the cheapest P does not grow with the wallet: %v", doc.ClientCosts)
	}
	if len(doc.Missing) != 2 || doc.P19From == nil || doc.Plot != plot || doc.Warnings == nil {
		t.Errorf("missing %v, P=19 from %v, plot %q, warnings %v", doc.Missing, doc.P19From, doc.Plot, doc.Warnings)
	}
	if st, err := os.Stat(plot); err != nil || st.Size() < 1000 {
		t.Errorf("plot: %v", err)
	}
	stdout, stderr, status := runCLI(t, "", "lab", "--vectors", "@"+labVectors, "--probes", "1000", "--timing", "0")
	if status != exitOK || stderr != "" {
		t.Fatalf("status %d: %s", status, stderr)
	}
	for _, want := range []string{"10 blocks, 40 elements", "binary fuse 8", "P = 19 is the cheapest P for wallets of", "ribbon filter: no maintained Go implementation"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("the report does not say %q:\n%s", want, stdout)
		}
	}
}

// TestLabBloomRateBuilt: the size table shows beside the rate asked the
// rate the filters built have, the one the false positives expected and
// the bound follow: on the vectors a Bloom filter sized by Core's rule at
// 0.01 has a rate of some 3.4%, which the text prints on its row, and
// the JSON's expected_false_positive_rate gives.
func TestLabBloomRateBuilt(t *testing.T) {
	doc := runLabJSON(t, "--vectors", labVectors, "--probes", "1000", "--timing", "0")
	built := math.NaN()
	for _, d := range doc.Designs {
		if d.Name == "bloom" && d.FPRate == 0.01 && d.ExpectedFalsePositiveRate != nil {
			built = *d.ExpectedFalsePositiveRate
		}
	}
	if !(built > 0.02 && built < 0.05) {
		t.Fatalf("the Bloom filter at 0.01 is built at %v, not some 3.4%%", built)
	}
	stdout, stderr, status := runCLI(t, "", "lab", "--vectors", labVectors, "--probes", "1000", "--timing", "0")
	if status != exitOK {
		t.Fatalf("status %d: %s", status, stderr)
	}
	var row string
	for _, l := range strings.Split(stdout, "\n") {
		if strings.HasPrefix(l, "bloom") && strings.Contains(l, "Core sizing at 0.01 ") {
			row = l
			break // the size table's, before the time table's
		}
	}
	if f := strings.Fields(row); len(f) < 7 || f[5] != "0.01" || f[6] != strconv.FormatFloat(built, 'g', 4, 64) {
		t.Errorf("the row does not give the rate asked, 0.01, and the rate built, %.4g: %q", built, row)
	}
	for _, want := range []string{"fp rate asked", "fp rate built", "bound at rate built"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("the table's head does not say %q:\n%s", want, stdout)
		}
	}
}

// TestLabBadInput: every flag out of its domain is bad input naming the
// flag, before any block is read or node dialled.
func TestLabBadInput(t *testing.T) {
	dir := t.TempDir()
	damaged := filepath.Join(dir, "damaged.json")
	raw, err := os.ReadFile(labVectors)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(damaged, []byte(strings.Replace(string(raw), "019dfca8", "019dfca9", 1)), 0o600); err != nil {
		t.Fatal(err)
	}
	notJSON := filepath.Join(dir, "not.json")
	if err := os.WriteFile(notJSON, []byte("height,hash\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	v := []string{"--vectors", labVectors}
	cut := filepath.Join(dir, "cut.blocks")
	file := writeLabBlockFile(t, chaincfg.RegressionNetParams.GenesisBlock)
	if err := os.WriteFile(cut, file[:len(file)-10], 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"no source", nil, "--vectors, --blocks, --peer or --connect: give the blocks"},
		{"vectors and blocks", append(v, "--blocks", cut), "--vectors and --blocks: give one source"},
		{"blocks and peer", []string{"--blocks", cut, "--peer", "127.0.0.1:1"}, "--blocks and --peer: give one source"},
		{"--save-blocks with vectors", append(v, "--save-blocks", filepath.Join(dir, "b")), "--save-blocks: only with nodes (--peer or --connect), not with --vectors"},
		{"--from with blocks", []string{"--blocks", cut, "--from", "3"}, "--from: only with nodes (--peer or --connect), not with --blocks"},
		{"save-blocks directory", []string{"--connect", "127.0.0.1:1", "--network", "regtest", "--save-blocks", dir}, "--save-blocks " + dir + ": a directory"},
		{"missing block file", []string{"--blocks", filepath.Join(dir, "none")}, "--blocks " + filepath.Join(dir, "none") + ": "},
		{"block file cut", []string{"--blocks", cut}, "--blocks " + cut + ": block 1 (height 0) at byte 27: block of 285 bytes: the data end too early"},
		{"not a block file", []string{"--blocks", notJSON}, "--blocks " + notJSON + ": does not start with"},
		{"two sources", append(v, "--connect", "127.0.0.1:1"), "--vectors and --connect"},
		{"--from with vectors", append(v, "--from", "3"), "--from: only with nodes"},
		{"negative probes", append(v, "--probes", "-1"), "--probes -1"},
		{"sweep out of range", append(v, "--p-min", "0"), "--p-min 0"},
		{"sweep reversed", append(v, "--p-min", "20", "--p-max", "10"), "--p-min 20 and --p-max 10"},
		{"wallet 0", append(v, "--wallets", "0"), "--wallets 0"},
		{"watched too many", append(v, "--watched", "100000000"), "--watched 100000000"},
		{"negative timing", append(v, "--timing", "-1s"), "--timing -1s"},
		{"plot format", append(v, "--plot", filepath.Join(dir, "lab.pdf")), "--plot"},
		{"plot directory", append(v, "--plot", filepath.Join(dir, "no", "lab.svg")), "--plot"},
		{"missing file", []string{"--vectors", filepath.Join(dir, "none.json")}, "--vectors"},
		{"damaged file", []string{"--vectors", damaged}, "--vectors " + damaged + ": row 2: the block's scripts give the basic filter"},
		{"not vectors", []string{"--vectors", notJSON}, "--vectors " + notJSON + ": not JSON"},
		{"negative from", []string{"--connect", "127.0.0.1:1", "--network", "regtest", "--from", "-1"}, "--from -1"},
		{"to below from", []string{"--connect", "127.0.0.1:1", "--network", "regtest", "--from", "5", "--to", "4"}, "--to 4 is below --from 5"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			stdout, stderr, status := runCLI(t, "", append([]string{"lab"}, tt.args...)...)
			if status != exitBadInput || stdout != "" || !strings.Contains(stderr, tt.want) || strings.Contains(stderr, "lab:") {
				t.Errorf("status %d, stdout %q, stderr %q; want 2 and %q", status, stdout, stderr, tt.want)
			}
		})
	}
}

// writeLabBlockFile returns a block file of regtest blocks from height 0.
func writeLabBlockFile(t *testing.T, blocks ...*wire.MsgBlock) []byte {
	t.Helper()
	var buf bytes.Buffer
	w := lab.NewBlockFileWriter(&buf, wire.TestNet)
	for i, b := range blocks {
		if err := w.Add(int32(i), b); err != nil {
			t.Fatal(err)
		}
	}
	return buf.Bytes()
}

// TestLabBlockFile runs the lab on a block file of regtest's genesis
// block: its one output script is the one element.
func TestLabBlockFile(t *testing.T) {
	file := filepath.Join(t.TempDir(), "genesis.blocks")
	if err := os.WriteFile(file, writeLabBlockFile(t, chaincfg.RegressionNetParams.GenesisBlock), 0o600); err != nil {
		t.Fatal(err)
	}
	stdout, stderr, status := runCLI(t, "", "lab", "--blocks", "@"+file, "--probes", "0", "--timing", "0")
	if status != exitOK || !strings.HasPrefix(stdout, "regtest blocks 0..0 from "+file+": 1 block, 1 element") {
		t.Errorf("status %d: %.200s %s", status, stdout, stderr)
	}
}

// labChainKeys are the keys of the regtest chain's outputs, one per
// output, so that every script is new.
func labChainKey(round, tx, out int) *peertest.Key {
	return peertest.NewKey(fmt.Sprintf("lab chain %d/%d/%d", round, tx, out))
}

// labChainScript is the script of a key for output number i: P2PKH,
// P2WPKH, P2TR and P2PK in turn.
func labChainScript(k *peertest.Key, i int) []byte {
	switch i % 4 {
	case 0:
		return k.PkScript()
	case 1:
		return k.P2WPKHScript()
	case 2:
		return k.P2TRScript()
	}
	return k.P2PKScript()
}

// labSmallOutput is the value of the second output of the chain's
// transactions, above the dust limit.
const labSmallOutput = 10_000

// buildLabChain mines a regtest chain on node: empty blocks up to
// segwit's activation (btcd's regtest enforces it from height 432), a
// block with a coinbase fanned out to txs outputs, then rounds blocks of
// txs transactions, each spending the first output of a transaction of
// the round before to two new scripts (P2PKH, P2WPKH, P2TR and P2PK in turn). It returns the
// height of the fan-out block.
func buildLabChain(t *testing.T, node *peertest.Node, rounds, txs int) int32 {
	t.Helper()
	node.Generate(t, 432)
	const fee = 1000
	outs := make([]*wire.TxOut, txs)
	keys := make([]*peertest.Key, txs)
	value := (50*btcutil.SatoshiPerBitcoin - peertest.Fee) / int64(txs+1)
	for i := range outs {
		keys[i] = labChainKey(0, i, 0)
		outs[i] = wire.NewTxOut(value, labChainScript(keys[i], i))
	}
	fund := node.SpendCoinbase(t, outs...)
	node.Confirm(t, fund)
	live := make([]peertest.Output, txs)
	for i := range live {
		live[i] = peertest.OutputOf(fund, uint32(i), keys[i])
	}
	for r := 1; r <= rounds; r++ {
		var mined []*wire.MsgTx
		for i, in := range live {
			// The first output carries the value on, the second is small.
			k0, k1 := labChainKey(r, i, 0), labChainKey(r, i, 1)
			tx := node.Spend(t, []peertest.Output{in},
				wire.NewTxOut(in.Value-fee-labSmallOutput, labChainScript(k0, r+i)), wire.NewTxOut(labSmallOutput, labChainScript(k1, r+i+1)))
			live[i] = peertest.OutputOf(tx, 0, k0)
			mined = append(mined, tx)
		}
		node.Confirm(t, mined...)
	}
	return 433
}

// TestLabRegtestChain runs the lab on a regtest chain built by the test,
// from the node: its GCS at P = 19 is, block for block, the filter btcd
// serves (the sets from the chain's own outputs are complete). With
// SPVFILTER_LAB_OUT set to a directory, it runs the full measurement
// (10^7 probes) on a larger chain (SPVFILTER_LAB_ROUNDS blocks of
// SPVFILTER_LAB_TXS transactions) and writes the report, its plot and the
// cuckoo filter's report there: the figures of gcs/README.md.
func TestLabRegtestChain(t *testing.T) {
	out := os.Getenv("SPVFILTER_LAB_OUT")
	rounds, txs := 6, 20
	if out != "" {
		rounds = peertest.EnvCount(t, "SPVFILTER_LAB_ROUNDS", 100)
		txs = peertest.EnvCount(t, "SPVFILTER_LAB_TXS", 200)
	}
	node := peertest.StartBtcd(t)
	first := buildLabChain(t, node, rounds, txs)
	tip, err := node.RPC().GetBlockCount()
	if err != nil {
		t.Fatal(err)
	}
	// No probes: the chain's block hashes, so its filters, change from
	// run to run, and a 99.9% interval is missed one run in a thousand.
	saved := filepath.Join(t.TempDir(), "regtest.blocks")
	doc := runLabJSON(t, "--connect", node.P2PAddr, "--network", "regtest", "--probes", "0", "--timing", "0", "--watched", "1", "--save-blocks", saved)
	if doc.BlockCount != int(tip)+1 {
		t.Fatalf("%d blocks, want %d", doc.BlockCount, tip+1)
	}
	// btcd's filters, summed: the same bytes and elements.
	wantBytes, wantN := 0, 0
	for h := int64(0); h <= tip; h++ {
		hash, err := node.RPC().GetBlockHash(h)
		if err != nil {
			t.Fatal(err)
		}
		cf, err := node.RPC().GetCFilter(hash, wire.GCSFilterRegular)
		if err != nil {
			t.Fatal(err)
		}
		f, err := gcs.DecodeBasic(cf.Data)
		if err != nil {
			t.Fatalf("height %d: btcd's filter: %v", h, err)
		}
		wantBytes += len(cf.Data)
		wantN += int(f.N())
	}
	if basic := doc.Designs[0]; basic.SerializedBytes != wantBytes || doc.ElementCount != wantN {
		t.Errorf("the lab's BIP 158 filters: %d bytes, %d elements; btcd's: %d bytes, %d elements",
			basic.SerializedBytes, doc.ElementCount, wantBytes, wantN)
	}
	if wantN < 3*rounds*txs {
		t.Errorf("%d elements: the chain is smaller than built", wantN)
	}
	if len(doc.Warnings) != 1 || !strings.Contains(doc.Warnings[0], "one peer") {
		t.Errorf("warnings %v, want the one-peer warning alone", doc.Warnings)
	}
	// The blocks saved give the same sets, without a node.
	again := runLabJSON(t, "--blocks", saved, "--probes", "0", "--timing", "0", "--watched", "1")
	if again.BlockCount != doc.BlockCount || again.ElementCount != doc.ElementCount || len(again.Warnings) != 0 ||
		!reflect.DeepEqual(labSizes(again), labSizes(doc)) {
		t.Errorf("from the saved blocks: %d blocks, %d elements, sizes %v, warnings %v; from the node: %d, %d, %v",
			again.BlockCount, again.ElementCount, labSizes(again), again.Warnings, doc.BlockCount, doc.ElementCount, labSizes(doc))
	}
	// From a later height the spends of earlier outputs are unknown.
	later := runLabJSON(t, "--connect", node.P2PAddr, "--network", "regtest", "--from", fmt.Sprint(tip-2), "--probes", "0", "--timing", "0", "--save-blocks", saved)
	if later.BlockCount != 3 || len(later.Warnings) != 2 || !strings.Contains(later.Warnings[0], "created before --from") {
		t.Errorf("from %d: %d blocks, warnings %v", tip-2, later.BlockCount, later.Warnings)
	}
	laterAgain := runLabJSON(t, "--blocks", saved, "--probes", "0", "--timing", "0")
	if laterAgain.BlockCount != 3 || laterAgain.ElementCount != later.ElementCount || len(laterAgain.Warnings) != 1 ||
		!strings.Contains(laterAgain.Warnings[0], "created before the file's first block") {
		t.Errorf("from the saved blocks from %d: %d blocks, %d elements, warnings %v", tip-2, laterAgain.BlockCount, laterAgain.ElementCount, laterAgain.Warnings)
	}
	if out != "" {
		writeLabFigures(t, node, first, out)
	}
}

// labSizes lists the serialized bytes of each design.
func labSizes(doc labDoc) []int {
	var sizes []int
	for _, d := range doc.Designs {
		sizes = append(sizes, d.SerializedBytes)
	}
	return sizes
}

// writeLabFigures runs the full lab on the node's chain from the fan-out
// block first (the blocks with transactions) and writes the report and
// its plot into dir.
func writeLabFigures(t *testing.T, node *peertest.Node, first int32, dir string) {
	plot := filepath.Join(dir, "regtest.png")
	blocks := filepath.Join(t.TempDir(), "regtest.blocks")
	stdout, stderr, status := runCLI(t, "", "lab", "--connect", node.P2PAddr, "--network", "regtest", "--from", fmt.Sprint(first), "--plot", plot, "--save-blocks", blocks)
	if status != exitOK {
		t.Fatalf("lab: status %d: %s", status, stderr)
	}
	if err := os.WriteFile(filepath.Join(dir, "regtest.txt"), []byte(stdout+stderr), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("lab on the regtest chain:\n%s", stdout)
	// The cuckoo filter, from its module, on the same blocks.
	cmd := exec.Command("go", "run", "./cmd/cuckoolab", "--blocks", blocks)
	cmd.Dir = filepath.Join("..", "..", "gcs", "lab", "cuckoo")
	cuckoo, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("cuckoolab: %v\n%s", err, cuckoo)
	}
	if err := os.WriteFile(filepath.Join(dir, "regtest-cuckoo.txt"), cuckoo, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("cuckoo filter on the regtest chain:\n%s", cuckoo)
}

// TestNestedModuleCuckoo runs the tests of gcs/lab/cuckoo, the module
// that keeps the cuckoo filter's library out of spvfilter's.
func TestNestedModuleCuckoo(t *testing.T) {
	peertest.RunNestedModuleTests(t, filepath.Join("..", "..", "gcs", "lab", "cuckoo"))
}

// TestSaveBlocksReplacesOnlyBlocks: --save-blocks replaces an earlier
// block file, and refuses, before connecting, a file of another kind
// given there by mistake (which it used to replace), leaving it whole.
func TestSaveBlocksReplacesOnlyBlocks(t *testing.T) {
	dir := t.TempDir()
	files := []struct {
		name, content string
		status        int
		want          string
	}{
		{"notes.txt", "my notes\n", exitBadInput, "the file exists and is no block file of lab --save-blocks: it is not replaced"},
		{"universe.txt", "# candidates of regtest blocks 0..10\nbcrt1q # height 1\n", exitBadInput, "the file exists and is a universe of candidates"},
		{"old.blocks", blockFileOpening + "x", exitFailure, "connection refused"},
		{"empty.blocks", "", exitFailure, "connection refused"},
	}
	for _, tt := range files {
		path := filepath.Join(dir, tt.name)
		if err := os.WriteFile(path, []byte(tt.content), 0o644); err != nil {
			t.Fatal(err)
		}
		_, stderr, status := runCLI(t, "", "lab", "--connect", "127.0.0.1:1", "--network", "regtest", "--save-blocks", path)
		if status != tt.status || !strings.Contains(stderr, tt.want) {
			t.Errorf("%s: status %d, stderr %q\nwant %d and %q", tt.name, status, stderr, tt.status, tt.want)
		}
		if b, err := os.ReadFile(path); err != nil || string(b) != tt.content {
			t.Errorf("%s: now %q (%v), want it untouched", tt.name, b, err)
		}
	}
}
