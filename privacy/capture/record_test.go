package capture

import (
	"errors"
	"strings"
	"testing"
)

// TestReadLineError checks that every line Read refuses comes back as a
// *LineError naming the line and, where one field is at fault, the field,
// and still wrapping ErrBadRecord.
func TestReadLineError(t *testing.T) {
	good := `{"time":"2020-01-01T00:00:00Z","client":"c","command":"filterclear"}`
	h := strings.Repeat("ab", 32)
	for _, tc := range []struct {
		name, line, field string
	}{
		{"not JSON", `garbage`, ""},
		{"two values", good + good, ""},
		{"unknown field", `{"client":"c","command":"filterclear","dat":"00"}`, "dat"},
		{"field of another type", `{"client":"c","command":"filteradd","data":7}`, "data"},
		{"time not RFC 3339", `{"time":"x","client":"c","command":"filterclear"}`, "time"},
		{"time not a string", `{"time":5,"client":"c","command":"filterclear"}`, "time"},
		{"unknown command", `{"client":"c","command":"ping"}`, "command"},
		{"filteradd not hex", `{"client":"c","command":"filteradd","data":"zz"}`, "data"},
		{"filteradd too long", `{"client":"c","command":"filteradd","data":"` + strings.Repeat("00", 521) + `"}`, "data"},
		{"filterload not hex", `{"client":"c","command":"filterload","filterload":"zz"}`, "filterload"},
		{"filterload both forms", `{"client":"c","command":"filterload","filterload":"00","filter":"00"}`, "filterload"},
		{"older filter not hex", `{"client":"c","command":"filterload","filter":"zz","hash_funcs":1}`, "filter"},
		{"getdata without blocks", `{"client":"c","command":"getdata"}`, "blocks"},
		{"getdata bad hash", `{"client":"c","command":"getdata","blocks":[{"hash":"zz","type":"block"}]}`, "blocks"},
		{"getdata with a range", `{"client":"c","command":"getdata","blocks":[{"hash":"` + h + `","type":"block"}],"start_height":1}`, "start_height"},
		{"range without type", `{"client":"c","command":"getcfilters","start_height":1,"stop_hash":"` + h + `"}`, "filter_type"},
		{"range without start", `{"client":"c","command":"getcfilters","filter_type":0,"stop_hash":"` + h + `"}`, "start_height"},
		{"range bad stop", `{"client":"c","command":"getcfheaders","filter_type":0,"start_height":1,"stop_hash":"ab"}`, "stop_hash"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Read(strings.NewReader(good + "\n\n" + tc.line + "\n" + good + "\n"))
			var le *LineError
			if !errors.As(err, &le) {
				t.Fatalf("error %v (%T), want a *LineError", err, err)
			}
			if le.Line != 3 || le.Field != tc.field {
				t.Errorf("line %d field %q, want line 3 field %q (%v)", le.Line, le.Field, tc.field, err)
			}
			if !errors.Is(err, ErrBadRecord) {
				t.Errorf("%v does not wrap ErrBadRecord", err)
			}
			if !strings.HasPrefix(err.Error(), "capture line 3: ") {
				t.Errorf("%q does not begin with its line", err)
			}
			if tc.field != "" && !strings.Contains(err.Error(), `field "`+tc.field+`"`) {
				t.Errorf("%q does not name field %q", err, tc.field)
			}
		})
	}
}

// TestReadLineErrorTooLong checks that a line longer than a record can be
// is a *LineError of the whole line.
func TestReadLineErrorTooLong(t *testing.T) {
	_, err := Read(strings.NewReader(strings.Repeat("x", maxLine+2)))
	var le *LineError
	if !errors.As(err, &le) || le.Line != 1 || le.Field != "" || !errors.Is(err, ErrBadRecord) {
		t.Fatalf("error %v, want a *LineError of line 1 wrapping ErrBadRecord", err)
	}
}

// TestReadSkipsByteOrderMark checks that a capture saved by an editor that
// writes a UTF-8 byte order mark reads as without one, and that the mark
// anywhere but at the start is still an error of its line.
func TestReadSkipsByteOrderMark(t *testing.T) {
	good := `{"time":"2020-01-01T00:00:00Z","client":"c","command":"filterclear"}`
	recs, err := Read(strings.NewReader("\ufeff" + good + "\n" + good + "\n"))
	if err != nil || len(recs) != 2 {
		t.Fatalf("with a byte order mark: %d records, %v; want 2, nil", len(recs), err)
	}
	_, err = Read(strings.NewReader(good + "\n\ufeff" + good + "\n"))
	var le *LineError
	if !errors.As(err, &le) || le.Line != 2 {
		t.Fatalf("a mark on line 2: %v, want a *LineError of line 2", err)
	}
}
