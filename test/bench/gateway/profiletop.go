package main

import (
	"cmp"
	"fmt"
	"os"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/google/pprof/profile"
)

// profileTop returns the n functions of the CPU profile at path that
// spent the most CPU themselves, as `go tool pprof -top` lists them
// (flat, flat%, sum%, cum, cum%, name), or why it could not. It reads the
// profile with pprof's own package rather than running `go tool pprof`,
// which builds pprof, and on a cold build cache the standard library's
// net/http and crypto without -race, for about 36 s of CPU.
func profileTop(path string, n int) string {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Sprintf("reading the CPU profile: %v\n", err)
	}
	defer f.Close()
	p, err := profile.Parse(f)
	if err != nil {
		return fmt.Sprintf("reading the CPU profile %s: %v\n", path, err)
	}
	// The CPU time in nanoseconds, not the sample count.
	idx := len(p.SampleType) - 1
	for i, st := range p.SampleType {
		if st.Type == p.DefaultSampleType {
			idx = i
		}
	}
	if idx < 0 {
		return fmt.Sprintf("the CPU profile %s has no sample types\n", path)
	}
	flat, cum := map[string]int64{}, map[string]int64{}
	var total int64
	for _, s := range p.Sample {
		v := s.Value[idx]
		total += v
		seen := map[string]bool{}
		for i, loc := range s.Location {
			for j, line := range loc.Line {
				name := "?"
				if line.Function != nil {
					name = line.Function.Name
				}
				if i == 0 && j == 0 {
					flat[name] += v // the innermost frame spent it
				}
				if !seen[name] {
					seen[name] = true
					cum[name] += v
				}
			}
		}
	}
	names := make([]string, 0, len(cum))
	for name := range cum {
		names = append(names, name)
	}
	// pprof's order for -top: flat, then name.
	slices.SortFunc(names, func(a, b string) int {
		return cmp.Or(cmp.Compare(flat[b], flat[a]), strings.Compare(a, b))
	})
	names = names[:min(n, len(names))]
	unit := time.Duration(1)
	if p.SampleType[idx].Unit != "nanoseconds" {
		unit = 0 // not a duration: print the values as they are
	}
	value := func(v int64) string {
		if unit == 0 {
			return fmt.Sprint(v)
		}
		return (time.Duration(v) * unit).Round(time.Millisecond).String()
	}
	pct := func(v int64) string {
		if total == 0 {
			return "0%"
		}
		return fmt.Sprintf("%.2f%%", 100*float64(v)/float64(total))
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Duration: %s, Total samples = %s\n", time.Duration(p.DurationNanos).Round(time.Millisecond), value(total))
	tw := tabwriter.NewWriter(&b, 0, 0, 1, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "flat\tflat%\tsum%\tcum\tcum%\t")
	var sum int64
	for _, name := range names {
		sum += flat[name]
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t  %s\n", value(flat[name]), pct(flat[name]), pct(sum), value(cum[name]), pct(cum[name]), name)
	}
	tw.Flush()
	return b.String()
}
