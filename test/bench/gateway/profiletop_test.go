package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/pprof/profile"
)

// TestProfileTop checks the report's top functions against a profile
// whose figures are known: flat is what a function spent itself (the
// innermost frame), cum what it and its callees spent, counted once per
// sample however often it recurs, ordered by flat and then by name.
func TestProfileTop(t *testing.T) {
	fn := func(id uint64, name string) *profile.Function { return &profile.Function{ID: id, Name: name} }
	main, handle, parse, write := fn(1, "main"), fn(2, "handle"), fn(3, "parse"), fn(4, "write")
	loc := func(id uint64, f *profile.Function) *profile.Location {
		return &profile.Location{ID: id, Line: []profile.Line{{Function: f}}}
	}
	lMain, lHandle, lParse, lWrite := loc(1, main), loc(2, handle), loc(3, parse), loc(4, write)
	ms := func(n int64) []int64 { return []int64{n, n * int64(time.Millisecond)} }
	p := &profile.Profile{
		SampleType:    []*profile.ValueType{{Type: "samples", Unit: "count"}, {Type: "cpu", Unit: "nanoseconds"}},
		PeriodType:    &profile.ValueType{Type: "cpu", Unit: "nanoseconds"},
		Period:        int64(time.Millisecond),
		DurationNanos: int64(time.Second),
		Function:      []*profile.Function{main, handle, parse, write},
		Location:      []*profile.Location{lMain, lHandle, lParse, lWrite},
		Sample: []*profile.Sample{
			{Location: []*profile.Location{lParse, lHandle, lMain}, Value: ms(50)},
			{Location: []*profile.Location{lWrite, lHandle, lMain}, Value: ms(30)},
			{Location: []*profile.Location{lHandle, lMain}, Value: ms(10)},
			// Recursion: handle is counted once in its cum.
			{Location: []*profile.Location{lWrite, lHandle, lHandle, lMain}, Value: ms(10)},
		},
	}
	path := filepath.Join(t.TempDir(), "cpu.pprof")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Write(f); err != nil {
		t.Fatal(err)
	}
	f.Close()

	got := profileTop(path, 3)
	var rows [][]string
	for line := range strings.SplitSeq(got, "\n") {
		if f := strings.Fields(line); len(f) == 6 && strings.HasSuffix(f[1], "%") {
			rows = append(rows, f)
		}
	}
	want := [][]string{
		{"50ms", "50.00%", "50.00%", "50ms", "50.00%", "parse"},
		{"40ms", "40.00%", "90.00%", "40ms", "40.00%", "write"},
		{"10ms", "10.00%", "100.00%", "100ms", "100.00%", "handle"},
	}
	if len(rows) != len(want) {
		t.Fatalf("got %d rows, want %d:\n%s", len(rows), len(want), got)
	}
	for i := range want {
		if strings.Join(rows[i], " ") != strings.Join(want[i], " ") {
			t.Errorf("row %d: got %q, want %q", i, rows[i], want[i])
		}
	}
	if !strings.Contains(got, "Duration: 1s, Total samples = 100ms") {
		t.Errorf("the header: got\n%s\nwant the duration and the total", got)
	}
	if msg := profileTop(filepath.Join(t.TempDir(), "missing.pprof"), 3); !strings.HasPrefix(msg, "reading the CPU profile") {
		t.Errorf("a missing profile: got %q, want a message saying it could not be read", msg)
	}
}
