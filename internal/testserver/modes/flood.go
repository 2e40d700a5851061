package modes

import (
	"fmt"
	"os"
	"strconv"
	"strings"
)

// FloodLine returns the nth line (without its newline) the "stderr-flood"
// mode writes, width bytes long (at least its number), for a test to
// compare what it kept against.
func FloodLine(n, width int) string {
	s := fmt.Sprintf("flood line %09d ", n)
	if width > len(s) {
		s += strings.Repeat("x", width-len(s))
	}
	return s
}

// FloodCause is the last line the "stderr-flood" mode writes before it
// exits 2: the cause of its end that a client must still show.
const FloodCause = "panic: flooded stderr, then crashed"

// floodSpec is what EnvFlood asks of the "stderr-flood" mode.
type floodSpec struct {
	bytes int    // how much to write in lines, at least
	line  int    // each line's length, newline included
	write string // "line": one write per line; "chunk": 64 KiB writes
	long  int    // then one line this long (newline included), if > 0
}

// parseFlood reads EnvFlood's value: comma-separated key=value pairs,
// bytes (default 8 MiB), line (default 100), write (line or chunk,
// default line) and long (default 0).
func parseFlood(v string) (floodSpec, error) {
	f := floodSpec{bytes: 8 << 20, line: 100, write: "line"}
	for _, kv := range strings.Split(v, ",") {
		if kv == "" {
			continue
		}
		k, val, _ := strings.Cut(kv, "=")
		if k == "write" {
			if val != "line" && val != "chunk" {
				return f, fmt.Errorf("%s: write=%q: want line or chunk", EnvFlood, val)
			}
			f.write = val
			continue
		}
		n, err := strconv.Atoi(val)
		if err != nil || n < 0 {
			return f, fmt.Errorf("%s: %s=%q: want a number of bytes", EnvFlood, k, val)
		}
		switch k {
		case "bytes":
			f.bytes = n
		case "line":
			f.line = max(n, 2)
		case "long":
			f.long = n
		default:
			return f, fmt.Errorf("%s: unknown key %q (bytes, line, write, long)", EnvFlood, k)
		}
	}
	return f, nil
}

// floodStderr is the "stderr-flood" mode: it writes numbered lines
// (FloodLine) to stderr as fast as it can — one write(2) per line, as an
// unbuffered logger does, or 64 KiB at a time, as `yes` does — then
// optionally one long line of "y", then FloodCause, and exits 2 without
// answering anything.
func floodStderr() {
	f, err := parseFlood(os.Getenv(EnvFlood))
	if err != nil {
		fmt.Fprintln(os.Stderr, "testserver:", err)
		os.Exit(1)
	}
	out := os.Stderr
	var chunk []byte
	flush := func() {
		if _, err := out.Write(chunk); err != nil {
			os.Exit(1)
		}
		chunk = chunk[:0]
	}
	for n, written := 0, 0; written < f.bytes; n++ {
		chunk = append(chunk, FloodLine(n, f.line-1)...)
		chunk = append(chunk, '\n')
		written += f.line
		if f.write == "line" || len(chunk) >= 64<<10 {
			flush()
		}
	}
	flush()
	if f.long > 0 {
		chunk = append(chunk, strings.Repeat("y", f.long-1)+"\n"...)
		flush()
	}
	chunk = append(chunk, FloodCause+"\n"...)
	flush()
	os.Exit(2)
}
