package simulate

import (
	"encoding/json"
	"slices"
)

// object is a JSON object of a report, read field by field, so that fields
// added to the reports later are ignored, or found as intervals, and
// never break the scoring.
type object map[string]json.RawMessage

// decodeObject decodes raw as an object; anything else gives nil.
func decodeObject(raw json.RawMessage) object {
	var o object
	if json.Unmarshal(raw, &o) != nil {
		return nil
	}
	return o
}

// str returns a string field, or "".
func (o object) str(key string) string {
	var s string
	if raw, ok := o[key]; ok {
		_ = json.Unmarshal(raw, &s)
	}
	return s
}

// num returns a number field, or nil when absent or not a number.
func (o object) num(key string) *float64 {
	var f float64
	if raw, ok := o[key]; !ok || json.Unmarshal(raw, &f) != nil {
		return nil
	}
	return &f
}

// boolean returns a boolean field and whether it is one.
func (o object) boolean(key string) (v, ok bool) {
	raw, found := o[key]
	if !found || json.Unmarshal(raw, &v) != nil {
		return false, false
	}
	return v, true
}

// strs returns a field that is a list of strings, or nil.
func (o object) strs(key string) []string {
	var s []string
	if raw, ok := o[key]; ok {
		if json.Unmarshal(raw, &s) != nil {
			return nil
		}
	}
	return s
}

// objects returns a field that is a list of objects, or nil.
func (o object) objects(key string) []object {
	var raws []json.RawMessage
	if raw, ok := o[key]; !ok || json.Unmarshal(raw, &raws) != nil {
		return nil
	}
	out := make([]object, 0, len(raws))
	for _, r := range raws {
		if d := decodeObject(r); d != nil {
			out = append(out, d)
		}
	}
	return out
}

// unknownKeys returns the object's keys that are neither known nor part
// of an interval, sorted.
func unknownKeys(o object, known []string, used map[string]bool) []string {
	var out []string
	for k := range o {
		if !slices.Contains(known, k) && !used[k] {
			out = append(out, k)
		}
	}
	slices.Sort(out)
	return out
}
