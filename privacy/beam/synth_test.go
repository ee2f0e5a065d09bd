package privacybeam

import (
	"bytes"
	"context"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/btcsuite/btcd/btcutil"
	"github.com/btcsuite/btcd/chaincfg"

	"github.com/spvfilter/spvfilter/privacy/attack"
	"github.com/spvfilter/spvfilter/privacy/capture"
	"github.com/spvfilter/spvfilter/privacy/model"
	"github.com/spvfilter/spvfilter/privacy/simulate"
)

// synthSpec describes a synthetic capture and universe.
type synthSpec struct {
	wallets, sessionsPerWallet, addresses int
	fpRate                                float64
	randomLines                           int // random candidates besides the wallets'
	files                                 int
	// marked writes each wallet key as "# pair ADDRESS, listed ADDRESS"
	// after its address line; crossFiles puts the key in the next file.
	marked, crossFiles bool
	seed               uint64
}

// synth is what writeSynth wrote.
type synth struct {
	capture  string
	glob     string
	files    []string
	universe []byte // the files concatenated
	filters  int    // filters in the capture
	lines    int
}

// writeSynth writes a capture of spec.wallets × spec.sessionsPerWallet
// sessions (each a filterload with a new tweak, every third also reloaded
// and every fifth with a filteradd; a wallet's sessions from one host) and
// a universe holding the wallets' addresses, keys and scripts among random
// hashes, addresses, scripts, comments, blank and bad lines, split over
// spec.files files.
func writeSynth(t testing.TB, dir string, spec synthSpec) *synth {
	t.Helper()
	rng := rand.New(rand.NewPCG(spec.seed, 1))
	params := &chaincfg.MainNetParams
	var records bytes.Buffer
	enc := json.NewEncoder(&records)
	out := &synth{capture: filepath.Join(dir, "capture.jsonl"), glob: filepath.Join(dir, "universe-*.txt")}
	var walletLines [][]string
	start := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	for w := 0; w < spec.wallets; w++ {
		wal := model.NewWallet(spec.seed*1000+uint64(w), spec.addresses)
		addrs := wal.Addresses(params)
		var lines []string
		for i, a := range addrs {
			lines = append(lines, a)
			key := hex.EncodeToString(wal.PubKeys[i])
			if spec.marked {
				key += fmt.Sprintf(" # pair %s, listed %s", a, a)
			}
			lines = append(lines, key)
		}
		walletLines = append(walletLines, lines)
		for s := 0; s < spec.sessionsPerWallet; s++ {
			n := w*spec.sessionsPerWallet + s
			client := fmt.Sprintf("127.0.0.%d:%d", 1+w%200, 40000+n) // a wallet's sessions share a host
			session := fmt.Sprintf("s%04d", n)
			at := start.Add(time.Duration(n) * time.Second)
			relay := true
			write := func(rec capture.Record) {
				if err := enc.Encode(rec); err != nil {
					t.Fatal(err)
				}
			}
			write(capture.Record{Time: at, Client: client, Session: session, Command: capture.CmdVersion,
				UserAgent: fmt.Sprintf("/synthetic:%d/", w), ProtocolVersion: 70016, Relay: &relay})
			reloads := 1
			if n%3 == 0 {
				reloads = 2
			}
			for r := 0; r < reloads; r++ {
				f := wal.Filter(spec.fpRate, 0, rng.Uint32())
				rec, err := capture.NewFilterLoadRecord(at, client, session, f.MsgFilterLoad())
				if err != nil {
					t.Fatal(err)
				}
				write(rec)
				out.filters++
			}
			if n%5 == 0 {
				extra := model.NewWallet(spec.seed*1000+uint64(w)+500, 1)
				write(capture.Record{Time: at, Client: client, Session: session, Command: capture.CmdFilterAdd,
					Data: hex.EncodeToString(extra.Hashes[0])})
			}
		}
	}
	if err := os.WriteFile(out.capture, records.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}

	// The universe: random candidates with the wallets' lines spread in.
	var lines []string
	lines = append(lines, "# synthetic universe", "")
	var b [32]byte
	for i := 0; i < spec.randomLines; i++ {
		for j := range b {
			b[j] = byte(rng.Uint32())
		}
		switch i % 10 {
		case 0:
			a, err := btcutil.NewAddressPubKeyHash(b[:20], params)
			if err != nil {
				t.Fatal(err)
			}
			lines = append(lines, a.EncodeAddress())
		case 1:
			lines = append(lines, "76a914"+hex.EncodeToString(b[:20])+"88ac")
		case 2:
			lines = append(lines, hex.EncodeToString(b[:32]))
		case 4: // a 2-of-3 multisig script: three pushes
			var ms strings.Builder
			ms.WriteString("52")
			for k := 0; k < 3; k++ {
				ms.WriteString("2102" + hex.EncodeToString(b[:]))
				b[k] ^= 0xff
			}
			lines = append(lines, ms.String()+"53ae")
		case 3:
			if i%1000 == 3 {
				lines = append(lines, "not a candidate "+fmt.Sprint(i))
				continue
			}
			fallthrough
		default:
			lines = append(lines, hex.EncodeToString(b[:20]))
		}
	}
	// Each wallet address and its key go, together, before a random
	// line.
	type insert struct {
		at   int
		pair [2]string
	}
	var inserts []insert
	for _, wl := range walletLines {
		for k := 0; k < len(wl); k += 2 {
			inserts = append(inserts, insert{rng.IntN(len(lines) + 1), [2]string{wl[k], wl[k+1]}})
		}
	}
	slices.SortStableFunc(inserts, func(a, b insert) int { return a.at - b.at })
	merged := make([]string, 0, len(lines)+2*len(inserts))
	for i := 0; i <= len(lines); i++ {
		for len(inserts) > 0 && inserts[0].at == i {
			merged = append(merged, inserts[0].pair[:]...)
			inserts = inserts[1:]
		}
		if i < len(lines) {
			merged = append(merged, lines[i])
		}
	}
	lines = merged
	out.lines = len(lines)
	// Split into files of about equal length; a cross-file pair has its
	// key line moved to the start of the next file.
	per := (len(lines) + spec.files - 1) / spec.files
	chunks := make([][]string, spec.files)
	for i, l := range lines {
		chunks[min(i/per, spec.files-1)] = append(chunks[min(i/per, spec.files-1)], l)
	}
	if spec.crossFiles {
		for f := 0; f+1 < spec.files; f++ {
			c := chunks[f]
			for i := len(c) - 1; i >= 0; i-- {
				if bytes.Contains([]byte(c[i]), []byte("# pair")) {
					chunks[f+1] = append([]string{c[i]}, chunks[f+1]...)
					chunks[f] = append(c[:i:i], c[i+1:]...)
					break
				}
			}
		}
	}
	for f, c := range chunks {
		var buf bytes.Buffer
		for _, l := range c {
			buf.WriteString(l)
			buf.WriteByte('\n')
		}
		name := filepath.Join(dir, fmt.Sprintf("universe-%03d.txt", f))
		if err := os.WriteFile(name, buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		out.files = append(out.files, name)
		out.universe = append(out.universe, buf.Bytes()...)
	}
	return out
}

// singleMachine is the report of one pass over the concatenated universe
// by one accumulator of every session (and of the intersection), as
// "privacy analyze --capture --json" prints it with cfg's options, and
// the sessions' reports.
func singleMachine(t testing.TB, s *synth, cfg Config) ([]byte, []*attack.Report) {
	t.Helper()
	j, err := loadJob(context.Background(), &cfg)
	if err != nil {
		t.Fatal(err)
	}
	acc, err := attack.NewAccumulator(j.groups, cfg.analyzeOptions())
	if err != nil {
		t.Fatal(err)
	}
	if err := acc.ReadUniverse(bytes.NewReader(s.universe)); err != nil {
		t.Fatal(err)
	}
	out, err := attack.NewCaptureReport(j.sessions, acc, cfg.reportOptions())
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := out.WriteJSON(&buf); err != nil {
		t.Fatal(err)
	}
	reps := make([]*attack.Report, len(out.Clients))
	for i, c := range out.Clients {
		reps[i] = c.Report
	}
	return buf.Bytes(), reps
}

// writeSimulated writes the capture and universe of package simulate's
// labelled ground truth for seed (a few wallets of 5 to 60 addresses, 1 to
// 4 sessions each, payments between them, filteradd, noise and degenerate
// sessions, on a chain of about others other candidates; change adjusts
// the options), the universe split over files files.
func writeSimulated(t testing.TB, dir string, seed uint64, others, files int, change func(*simulate.Options)) *synth {
	t.Helper()
	o := simulate.DefaultOptions()
	o.Seed, o.Wallets, o.Addresses = seed, 10, simulate.IntRange{Min: 5, Max: 60}
	o.Chain = simulate.ChainOptions{Blocks: max(10, others/40), TxsPerBlock: 20}
	o.Fetch.Wallets, o.Fetch.Noise = 0, 0
	o.PayFraction, o.Noise = 0.3, 2
	if change != nil {
		change(&o)
	}
	sc, err := simulate.Generate(o)
	if err != nil {
		t.Fatal(err)
	}
	var capt, univ bytes.Buffer
	if err := sc.WriteCapture(&capt); err != nil {
		t.Fatal(err)
	}
	if err := sc.WriteUniverse(&univ); err != nil {
		t.Fatal(err)
	}
	out := &synth{capture: filepath.Join(dir, "capture.jsonl"), glob: filepath.Join(dir, "universe-*.txt"), universe: univ.Bytes()}
	if err := os.WriteFile(out.capture, capt.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitAfter(univ.String(), "\n")
	out.lines = len(lines)
	per := (len(lines) + files - 1) / files
	for f := range files {
		name := filepath.Join(dir, fmt.Sprintf("universe-%03d.txt", f))
		if err := os.WriteFile(name, []byte(strings.Join(lines[min(f*per, len(lines)):min((f+1)*per, len(lines))], "")), 0o644); err != nil {
			t.Fatal(err)
		}
		out.files = append(out.files, name)
	}
	return out
}
