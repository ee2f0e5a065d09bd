package privacybeam_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/x/beamx"
	"github.com/btcsuite/btcd/chaincfg"

	"github.com/spvfilter/spvfilter/privacy/attack"
	privacybeam "github.com/spvfilter/spvfilter/privacy/beam"
	"github.com/spvfilter/spvfilter/privacy/capture"
	"github.com/spvfilter/spvfilter/privacy/model"
)

// A capture of one session and a universe of two files, analyzed on the
// runner Beam's --runner flag names (prism by default; the tests choose
// prism in a network namespace of their own, or the direct runner): the
// wallet's five addresses are found, numbered by their line in the two
// files taken as one.
func ExampleBuild() {
	dir, err := os.MkdirTemp("", "privacybeam")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)
	wallet := model.NewWallet(1, 5)
	rec, err := capture.NewFilterLoadRecord(time.Unix(0, 0), "127.0.0.1:50000", "s1", wallet.Filter(0.0001, 0, 7).MsgFilterLoad())
	if err != nil {
		panic(err)
	}
	line, _ := json.Marshal(rec)
	write := func(name, text string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			panic(err)
		}
	}
	write("capture.jsonl", string(line)+"\n")
	addrs := wallet.Addresses(&chaincfg.MainNetParams)
	write("universe-1.txt", strings.Join(addrs[:3], "\n")+"\n"+strings.Repeat("00112233445566778899aabbccddeeff00112233\n", 1000))
	write("universe-2.txt", strings.Join(addrs[3:], "\n")+"\n")

	p, s := beam.NewPipelineWithRoot()
	plan, err := privacybeam.Build(context.Background(), s, privacybeam.Config{
		Capture:  filepath.Join(dir, "capture.jsonl"),
		Universe: filepath.Join(dir, "universe-*.txt"),
		Output:   filepath.Join(dir, "report.json"),
	})
	if err != nil {
		panic(err)
	}
	if err := beamx.Run(context.Background(), p); err != nil {
		panic(err)
	}
	data, err := os.ReadFile(filepath.Join(dir, "report.json"))
	if err != nil {
		panic(err)
	}
	var report attack.CaptureReport
	if err := json.Unmarshal(data, &report); err != nil {
		panic(err)
	}
	fmt.Println(plan.Shards(), "shards")
	r := report.Clients[0]
	fmt.Println(r.UniverseSize, "candidates,", r.MatchedCount, "matched")
	for _, m := range r.Matched {
		fmt.Printf("line %d: %s, P(wallet) %.2f\n", m.Line, m.Candidate, m.Probability)
	}
	// Output:
	// 2 shards
	// 1005 candidates, 5 matched
	// line 1: 18igec2Qipybk8o5YNccePseTbTiVcYtYn, P(wallet) 0.97
	// line 2: 1K9zBzZLxSJCRczmsrxZDaaZERSo1EKx3R, P(wallet) 0.97
	// line 3: 1Ew1RfoyNMF26jy7hidu1LgCv7bPJDZpdi, P(wallet) 0.97
	// line 1004: 1LNJ9i1u1dBbaS3gRQC3k7nKLtbhL4pzKF, P(wallet) 0.97
	// line 1005: 13vdHzMEiM2HWQct8yqLm8PosYnJhdbNAq, P(wallet) 0.97
}
