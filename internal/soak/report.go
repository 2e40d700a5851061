package soak

import (
	"fmt"
	"sort"
	"strings"
	"time"
)

// Run describes a soak run for the report's heading.
type Run struct {
	Date     time.Time
	Duration time.Duration
	// Machine says where it ran: CPUs, Go version, load.
	Machine string
	// Load says what the load was (workers, users, upstreams).
	Load string
}

// Verdicts are the report's aims, each met or not, with the figures.
func (r *Report) Verdicts() []Verdict {
	var v []Verdict
	v = append(v, Verdict{"0 lost requests", r.Lost == 0, fmt.Sprintf("%d lost (%d unanswered, %d answered but not in the history)", r.Lost, len(r.Unanswered), r.Lost-len(r.Unanswered))})
	v = append(v, Verdict{"0 unexplained errors", len(r.Unexplained) == 0, fmt.Sprintf("%d unexplained", len(r.Unexplained))})
	v = append(v, Verdict{"history rows = calls answered", r.HistoryRows == r.AnsweredCalls && len(r.NotInHistory) == 0,
		fmt.Sprintf("%d rows, %d calls answered", r.HistoryRows, r.AnsweredCalls)})
	start, first, end, idle, ok := r.keySamples()
	// Flat under load compares the end with the first minute: a run
	// shorter than that has no trend to judge (its start is before any
	// load).
	if ok && first.Label == "1m" {
		v = append(v, Verdict{"RSS flat under load (at the end at most 1.5× the first minute's)", float64(end.RSS) <= 1.5*float64(first.RSS),
			fmt.Sprintf("%.1f MiB at %s, %.1f MiB at the end", mib(first.RSS), first.Label, mib(end.RSS))})
		v = append(v, Verdict{"goroutines flat under load (at the end at most 1.5× the first minute's + 20)", float64(end.Goroutines) <= 1.5*float64(first.Goroutines)+20,
			fmt.Sprintf("%d at %s, %d at the end", first.Goroutines, first.Label, end.Goroutines)})
	}
	if ok {
		v = append(v, Verdict{"idle again: no sessions, goroutines back to the start's + 10", idle.Sessions == 0 && idle.Goroutines <= start.Goroutines+10,
			fmt.Sprintf("%d sessions; %d goroutines at the start, %d idle", idle.Sessions, start.Goroutines, idle.Goroutines)})
		v = append(v, Verdict{"open files back to the start's + 5, same upstream processes", idle.FDs <= start.FDs+5 && idle.Children == start.Children,
			fmt.Sprintf("fds %d at the start, %d idle; upstream processes %d at the start, %d idle", start.FDs, idle.FDs, start.Children, idle.Children)})
	}
	return append(v, r.Checks...)
}

// keySamples returns the samples labelled start, 1m (or start when the
// run had none), end and idle; ok is false unless start, end and idle are
// there.
func (r *Report) keySamples() (start, first, end, idle Sample, ok bool) {
	have := map[string]Sample{}
	for _, s := range r.Samples {
		have[s.Label] = s
	}
	start, ok1 := have["start"]
	first, ok2 := have["1m"]
	if !ok2 {
		first = start
	}
	end, ok3 := have["end"]
	idle, ok4 := have["idle"]
	return start, first, end, idle, ok1 && ok3 && ok4
}

func mib(b int64) float64 { return float64(b) / (1 << 20) }

// Verdict is one aim of the soak and whether the run met it.
type Verdict struct {
	Aim     string
	Met     bool
	Figures string
}

// Markdown renders the report: the run, the requests by outcome and
// method, the error types, the samples, the events and the verdicts; the
// lists of lost and unexplained requests are cut at max entries each.
func (r *Report) Markdown(run Run, max int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "### Soak run of %s (%s)\n\n", run.Date.UTC().Format("2006-01-02 15:04 UTC"), run.Duration)
	if run.Machine != "" {
		fmt.Fprintf(&b, "Machine: %s.\n\n", run.Machine)
	}
	if run.Load != "" {
		fmt.Fprintf(&b, "Load: %s.\n\n", run.Load)
	}
	fmt.Fprintf(&b, "Requests sent: %d, of them %d tool calls.\n\n", r.Sent, r.Calls)
	b.WriteString("| outcome | requests | by error type |\n|---|---:|---|\n")
	for _, o := range []Outcome{OK, Failed, Refused, Unexplained, Dropped} {
		fmt.Fprintf(&b, "| %s | %d | %s |\n", outcomeLabel(o), r.Count[o], kinds(r.Kinds[o]))
	}
	b.WriteString("\n| method | ok | error | refused | unexplained | unanswered |\n|---|---:|---:|---:|---:|---:|\n")
	methods := make([]string, 0, len(r.Methods))
	for m := range r.Methods {
		methods = append(methods, m)
	}
	sort.Strings(methods)
	for _, m := range methods {
		c := r.Methods[m]
		fmt.Fprintf(&b, "| %s | %d | %d | %d | %d | %d |\n", m, c[OK], c[Failed], c[Refused], c[Unexplained], c[Dropped])
	}
	fmt.Fprintf(&b, "\nHistory: %d gateway calls recorded; %d tool calls answered", r.HistoryRows, r.AnsweredCalls)
	if r.Extra > 0 {
		fmt.Fprintf(&b, "; %d rows for calls the client never heard back from", r.Extra)
	}
	b.WriteString(".\n\n")

	if len(r.Samples) > 0 {
		b.WriteString("| when | RSS MiB | goroutines | open fds | sessions | upstream processes |\n|---|---:|---:|---:|---:|---:|\n")
		for _, s := range r.Samples {
			fmt.Fprintf(&b, "| %s | %.1f | %d | %d | %d | %d |\n", s.Label, float64(s.RSS)/(1<<20), s.Goroutines, s.FDs, s.Sessions, s.Children)
		}
		b.WriteString("\n")
	}
	if len(r.Events) > 0 {
		b.WriteString("Events:\n\n")
		for _, e := range r.Events {
			fmt.Fprintf(&b, "- +%s %s\n", e.At.Round(100*time.Millisecond), e.What)
		}
		b.WriteString("\n")
	}
	b.WriteString("| aim | met | figures |\n|---|---|---|\n")
	for _, v := range r.Verdicts() {
		met := "yes"
		if !v.Met {
			met = "**no**"
		}
		fmt.Fprintf(&b, "| %s | %s | %s |\n", v.Aim, met, v.Figures)
	}
	list := func(title string, items []string) {
		if len(items) == 0 {
			return
		}
		fmt.Fprintf(&b, "\n%s (%d):\n\n", title, len(items))
		for i, s := range items {
			if i == max {
				fmt.Fprintf(&b, "- ... and %d more\n", len(items)-max)
				break
			}
			fmt.Fprintf(&b, "- %s\n", s)
		}
	}
	list("Unanswered requests", r.Unanswered)
	list("Answered calls missing from the history", r.NotInHistory)
	list("Unexplained errors", r.Unexplained)
	return b.String()
}

func outcomeLabel(o Outcome) string {
	switch o {
	case OK:
		return "answered ok"
	case Failed:
		return "answered with an expected error"
	case Refused:
		return "refused (explained)"
	case Unexplained:
		return "answered with an unexplained error"
	case Dropped:
		return "lost: never answered"
	}
	return o.String()
}

// kinds renders error type counts, largest first.
func kinds(m map[string]int) string {
	if len(m) == 0 {
		return ""
	}
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Slice(ks, func(i, j int) bool {
		if m[ks[i]] != m[ks[j]] {
			return m[ks[i]] > m[ks[j]]
		}
		return ks[i] < ks[j]
	})
	parts := make([]string, len(ks))
	for i, k := range ks {
		parts[i] = fmt.Sprintf("%s %d", k, m[k])
	}
	return strings.Join(parts, ", ")
}
