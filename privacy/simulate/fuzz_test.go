package simulate

import (
	"bytes"
	"encoding/json"
	"testing"
)

// FuzzDecodeLabels feeds arbitrary labels files to the decoder: an error
// or labels that check, never a panic; labels it accepts survive being
// written and read again, and can score a report.
func FuzzDecodeLabels(f *testing.F) {
	o := smallOptions(5)
	o.Wallets, o.Addresses, o.Chain = 3, IntRange{2, 4}, ChainOptions{Blocks: 20, TxsPerBlock: 2}
	s, err := Generate(o)
	if err != nil {
		f.Fatal(err)
	}
	var b bytes.Buffer
	if err := s.Labels.Write(&b); err != nil {
		f.Fatal(err)
	}
	f.Add(b.Bytes())
	f.Add([]byte(`{"format":"spvfilter-simulate-labels","version":2,"universe_size":2,"wallets":[{"wallet":"A","addresses":["a","b"]}],` +
		`"sessions":[{"session":"s","kind":"wallet","wallet":"A","holds":["a","b"],"loaded_count":1,"added_count":1}],"payments":[]}`))
	f.Add([]byte(`{"format":"spvfilter-simulate-labels","version":2,"wallets":[{"wallet":"A","addresses":["a"]},{"wallet":"B","addresses":["b"]}],` +
		`"payments":[{"payer":"A","payee":"B","addresses":["b"]}],"universe_size":2}`))
	f.Add([]byte(`{"format":"spvfilter-simulate-labels","version":2,"fetch":{"block_count":5,"first_height":2147483647}}`))
	f.Add([]byte(`{"format":"spvfilter-simulate-labels","version":2,"sessions":[{"session":"s","kind":"wallet","loaded_count":-1}]}`))
	f.Add([]byte(`{"format":"spvfilter-simulate-labels","version":2,"fetch":{"block_count":10,"sessions":[{"session":"x","kind":"noise","scanned_from":3,"scanned_to":2}]}}`))
	f.Add([]byte(`[]`))
	f.Add([]byte(`{"format":1}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		l, err := DecodeLabels(data)
		if err != nil {
			return
		}
		var out bytes.Buffer
		if err := l.Write(&out); err != nil {
			t.Fatal(err)
		}
		again, err := DecodeLabels(out.Bytes())
		if err != nil {
			t.Fatalf("labels written back do not decode: %v\n%s", err, out.Bytes())
		}
		if len(again.Sessions) != len(l.Sessions) || len(again.Wallets) != len(l.Wallets) {
			t.Fatalf("round trip changed the labels")
		}
		var clients []map[string]any
		for _, s := range l.Sessions {
			clients = append(clients, map[string]any{"session": s.ID, "matched": []any{map[string]any{"candidate": "a", "probability": 0.99}}})
		}
		report, _ := json.Marshal(map[string]any{"clients": clients, "links": map[string]any{"pairs": []any{}}})
		_, _ = Evaluate(l, report, EvalOptions{})
	})
}

// FuzzEvaluate feeds arbitrary reports to Evaluate: an error or a score,
// never a panic, whatever fields and types the report holds.
func FuzzEvaluate(f *testing.F) {
	l := handLabels(f)
	f.Add([]byte(`{"clients":[{"session":"s1","matched":[{"candidate":"a1","probability":1,"probability_low":0.5,"probability_high":1}],` +
		`"estimated_wallet":4,"estimated_wallet_interval":{"low":1,"high":6,"level":95}}],` +
		`"links":{"pairs":[{"a":"s1","b":"s2","probability":0.9}],"groups":[{"sessions":["s1","s2","zz"],"matched":[{"candidate":"a1","probability":0.99}],"interval":[1,2]}]},` +
		`"intersection":{"sessions":["s1"],"matched":null}}`))
	f.Add([]byte(`{"index":{},"clients":[{"session":"fs1","matched":[{"candidate":"f1a","probability":0.99}],"groups":[{"scripts":["pc1"],"probability":1,"ci":{"lower":0.9,"upper":1}}]}]}`))
	f.Add([]byte(`{"clients":[{"session":"s1","matched":[{"candidate":7,"probability":"x"}],"estimated_wallet_low":"a"}],"links":[]}`))
	f.Add([]byte(`{"clients":{}}`))
	f.Add([]byte(`null`))
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := Evaluate(l, data, EvalOptions{})
		if err != nil {
			return
		}
		if _, err := json.Marshal(s); err != nil {
			t.Fatalf("score does not marshal: %v", err)
		}
	})
}
