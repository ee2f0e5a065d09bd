package simulate

import (
	"encoding/json"
	"slices"
	"strings"
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

// interval is an interval a report gives on one of its quantities.
type interval struct {
	// quantity is the field the interval is about ("estimated_wallet",
	// "probability"), or "" for a bare "interval" field, which is about
	// the object's own estimate.
	quantity  string
	key       string // the field it was found in, for messages
	low, high float64
	level     float64 // nominal coverage; 0.95 unless the report says
}

// defaultLevel is the coverage an interval is taken to promise when the
// report does not say.
const defaultLevel = 0.95

// intervalKeys are the field names of a bare interval, about the object's
// own estimate.
var intervalKeys = []string{"interval", "ci", "confidence_interval", "credible_interval"}

// findIntervals returns the intervals among an object's fields, in the
// order of their keys, and the keys they use. It recognizes:
//
//   - X_low and X_high (or X_lower and X_upper), numbers: an interval on X;
//   - X_interval or X_ci: an object with low and high (or lower and
//     upper), or a list of two numbers: an interval on X;
//   - interval, ci, confidence_interval, credible_interval: the same
//     forms, on the object's own estimate;
//   - X an object with low and high: an interval on X.
//
// An interval object's "level" or "confidence" field gives its nominal
// coverage, as does an X_level field beside X_low and X_high.
func findIntervals(o object) ([]interval, map[string]bool) {
	var out []interval
	used := map[string]bool{}
	keys := make([]string, 0, len(o))
	for k := range o {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		for _, suffix := range [][2]string{{"_low", "_high"}, {"_lower", "_upper"}} {
			base, ok := strings.CutSuffix(k, suffix[0])
			if !ok {
				continue
			}
			lo, hi := o.num(k), o.num(base+suffix[1])
			if lo == nil || hi == nil {
				continue
			}
			iv := interval{quantity: base, key: k, low: *lo, high: *hi, level: defaultLevel}
			if lv := o.num(base + "_level"); lv != nil {
				iv.level = asShare(*lv)
				used[base+"_level"] = true
			}
			out = append(out, iv)
			used[k], used[base+suffix[1]] = true, true
		}
		quantity, named := "", false
		if slices.Contains(intervalKeys, k) {
			named = true
		} else if base, ok := strings.CutSuffix(k, "_interval"); ok {
			quantity, named = base, true
		} else if base, ok := strings.CutSuffix(k, "_ci"); ok {
			quantity, named = base, true
		}
		if !named {
			quantity = k // an estimate given as an object with its bounds
		}
		if iv, ok := parseInterval(o[k]); ok && (named || iv.fromObject) {
			out = append(out, interval{quantity: quantity, key: k, low: iv.low, high: iv.high, level: iv.level})
			used[k] = true
		}
	}
	return out, used
}

type parsedInterval struct {
	low, high, level float64
	fromObject       bool
}

// parseInterval reads an interval object ({low, high} or {lower, upper},
// with an optional level or confidence) or a list of two numbers.
func parseInterval(raw json.RawMessage) (parsedInterval, bool) {
	var pair []float64
	if json.Unmarshal(raw, &pair) == nil && len(pair) == 2 {
		return parsedInterval{low: pair[0], high: pair[1], level: defaultLevel}, true
	}
	o := decodeObject(raw)
	if o == nil {
		return parsedInterval{}, false
	}
	for _, names := range [][2]string{{"low", "high"}, {"lower", "upper"}} {
		lo, hi := o.num(names[0]), o.num(names[1])
		if lo == nil || hi == nil {
			continue
		}
		iv := parsedInterval{low: *lo, high: *hi, level: defaultLevel, fromObject: true}
		for _, k := range []string{"level", "confidence"} {
			if lv := o.num(k); lv != nil {
				iv.level = asShare(*lv)
			}
		}
		return iv, true
	}
	return parsedInterval{}, false
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

// asShare reads a coverage level given as a share (0.95) or a percentage
// (95).
func asShare(v float64) float64 {
	if v > 1 && v <= 100 {
		return v / 100
	}
	return v
}
