package simulate

import (
	"bytes"
	"encoding/json"
	"maps"
	"reflect"
	"slices"
	"testing"
)

// decodedObject is an object as encoding/json decodes it, field by
// field: what splitting must give.
type decodedObject map[string]json.RawMessage

func (o decodedObject) str(key string) string {
	var s string
	if raw, ok := o[key]; ok {
		_ = json.Unmarshal(raw, &s)
	}
	return s
}

func (o decodedObject) num(key string) *float64 {
	var f float64
	if raw, ok := o[key]; !ok || json.Unmarshal(raw, &f) != nil {
		return nil
	}
	return &f
}

func (o decodedObject) boolean(key string) (v, ok bool) {
	raw, found := o[key]
	if !found || json.Unmarshal(raw, &v) != nil {
		return false, false
	}
	return v, true
}

func (o decodedObject) strs(key string) []string {
	var s []string
	if raw, ok := o[key]; ok {
		if json.Unmarshal(raw, &s) != nil {
			return nil
		}
	}
	return s
}

func (o decodedObject) objects(key string) []decodedObject {
	var raws []json.RawMessage
	if raw, ok := o[key]; !ok || json.Unmarshal(raw, &raws) != nil {
		return nil
	}
	out := make([]decodedObject, 0, len(raws))
	for _, r := range raws {
		var d decodedObject
		if json.Unmarshal(r, &d) == nil && d != nil {
			out = append(out, d)
		}
	}
	return out
}

// sameObject fails t unless o, split, reads as d, decoded, reads: the
// same keys and bytes, and every field the same through every reader,
// down every list of objects.
func sameObject(t *testing.T, where string, o object, d decodedObject) {
	t.Helper()
	if (o == nil) != (d == nil) {
		t.Fatalf("%s: split %v, decoded %v", where, o, d)
	}
	if !slices.Equal(slices.Sorted(maps.Keys(o)), slices.Sorted(maps.Keys(d))) {
		t.Fatalf("%s: keys %q, decoded %q", where, slices.Sorted(maps.Keys(o)), slices.Sorted(maps.Keys(d)))
	}
	for k, raw := range d {
		if !bytes.Equal(o[k], raw) {
			t.Fatalf("%s.%s: %q, decoded %q", where, k, o[k], raw)
		}
		if a, b := o.str(k), d.str(k); a != b {
			t.Fatalf("%s.%s: string %q, decoded %q", where, k, a, b)
		}
		if a, b := o.num(k), d.num(k); (a == nil) != (b == nil) || a != nil && *a != *b {
			t.Fatalf("%s.%s: number %v, decoded %v", where, k, a, b)
		}
		if v, ok := o.boolean(k); [2]bool{v, ok} != func() [2]bool { v, ok := d.boolean(k); return [2]bool{v, ok} }() {
			t.Fatalf("%s.%s: boolean %v %v differs", where, k, v, ok)
		}
		if a, b := o.strs(k), d.strs(k); !reflect.DeepEqual(a, b) {
			t.Fatalf("%s.%s: strings %q, decoded %q", where, k, a, b)
		}
		os, ds := o.objects(k), d.objects(k)
		if (os == nil) != (ds == nil) || len(os) != len(ds) {
			t.Fatalf("%s.%s: %d objects, decoded %d", where, k, len(os), len(ds))
		}
		for i := range os {
			sameObject(t, where+"."+k, os[i], ds[i])
		}
	}
}

// FuzzSplitObject: a report split (decodeReport) reads as encoding/json
// decodes it, field by field, whatever the JSON.
func FuzzSplitObject(f *testing.F) {
	for _, s := range []string{
		`{"clients":[{"session":"s1","matched":[{"candidate":"a1","probability":1,"probability_low":0.5,"probability_high":1}],"estimated_wallet":4,"estimated_wallet_interval":{"low":1,"high":6,"level":95}}]}`,
		`{"index":{},"clients":[{"session":"fs1","matched":[{"candidate":"f1a","probability":0.99}],"groups":[{"scripts":["pc1",null],"probability":1e400,"ci":{"lower":0.9,"upper":1}}]}]}`,
		`{"a":null,"b":[null,{}],"c":"\u00e9\"x","c":"last","d":true,"e":false,"f":-0.5e-3,"g":[1,"x"]}`,
		` { "k\\n" : [ { "x" : [ ] } , 3 ] , "s":"` + "\xff" + `" } `,
		`[]`, `null`, `"x"`, `{}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var d decodedObject
		if json.Unmarshal(data, &d) != nil {
			d = nil
		}
		sameObject(t, "report", decodeReport(data), d)
	})
}
