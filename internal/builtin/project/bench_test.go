package project_test

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/switchboard-mcp/switchboard/internal/builtin/project"
)

// benchWords are the vocabulary of the generated tree.
var benchWords = []string{"account", "order", "invoice", "payment", "customer", "cart", "item", "stock", "price",
	"discount", "shipping", "address", "session", "token", "cache", "queue", "worker", "report", "export",
	"import", "parse", "render", "validate", "encode", "decode", "fetch", "store", "load", "save", "notify"}

// writeBenchTree generates files source files: Go, Python and JavaScript,
// 40 to 120 lines each, in nested directories, with distinct symbol names.
func writeBenchTree(tb testing.TB, dir string, files int) {
	tb.Helper()
	r := rand.New(rand.NewPCG(1, 2))
	word := func() string { return benchWords[r.IntN(len(benchWords))] }
	title := func(s string) string { return strings.ToUpper(s[:1]) + s[1:] }
	for i := range files {
		sub := filepath.Join(dir, fmt.Sprintf("mod%02d", i%40), fmt.Sprintf("pkg%02d", i/40%25))
		if err := os.MkdirAll(sub, 0o755); err != nil {
			tb.Fatal(err)
		}
		var b strings.Builder
		var name string
		lines := 40 + r.IntN(80)
		switch i % 3 {
		case 0:
			name = fmt.Sprintf("%s_%s_%d.go", word(), word(), i)
			b.WriteString("package pkg\n\n")
			for l := 2; l < lines; l += 6 {
				fmt.Fprintf(&b, "// %s%s%d %s the %s.\nfunc %s%s%d(%s string) error {\n\tif %s == \"\" {\n\t\treturn nil\n\t}\n\treturn %s(%s)\n}\n",
					title(word()), title(word()), i*100+l, word(), word(), title(word()), title(word()), i*100+l, word(), word(), word(), word())
			}
		case 1:
			name = fmt.Sprintf("%s_%s_%d.py", word(), word(), i)
			for l := 0; l < lines; l += 4 {
				fmt.Fprintf(&b, "def %s_%s_%d(%s):\n    \"\"\"%s the %s.\"\"\"\n    return %s(%s)\n\n", word(), word(), i*100+l, word(), title(word()), word(), word(), word())
			}
		default:
			name = fmt.Sprintf("%s%s%d.js", word(), title(word()), i)
			for l := 0; l < lines; l += 4 {
				fmt.Fprintf(&b, "export function %s%s%d(%s) {\n  // %s %s\n  return %s(%s);\n}\n", word(), title(word()), i*100+l, word(), word(), word(), word(), word())
			}
		}
		if err := os.WriteFile(filepath.Join(sub, name), []byte(b.String()), 0o644); err != nil {
			tb.Fatal(err)
		}
	}
}

// BenchmarkIndex10k indexes a generated 10,000-file tree and reports the
// live heap the finished index takes.
func BenchmarkIndex10k(b *testing.B) {
	dir := b.TempDir()
	writeBenchTree(b, dir, 10_000)
	b.ReportAllocs()
	var ix *project.BuiltIndex
	for b.Loop() {
		var err error
		if ix, err = project.BuildIndex(dir, project.DefaultMaxFileSize); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	b.ReportMetric(float64(len(ix.Files())), "files")
	b.ReportMetric(float64(ix.Passages()), "passages")
	// The heap the finished index keeps alive.
	ix = nil
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	ix2, err := project.BuildIndex(dir, project.DefaultMaxFileSize)
	if err != nil {
		b.Fatal(err)
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	b.ReportMetric(float64(int64(after.HeapAlloc)-int64(before.HeapAlloc))/(1<<20), "MiB-live")
	runtime.KeepAlive(ix2)
}

// BenchmarkQuery10k runs general_query (no LLM, Markdown results, through
// the MCP server in memory) against the indexed 10,000-file tree and
// reports the p50 and p95 latency.
func BenchmarkQuery10k(b *testing.B) {
	dir := b.TempDir()
	writeBenchTree(b, dir, 10_000)
	env := startQueryServer(b, project.Options{Root: dir, RescanInterval: -1}, nil)
	deadline := time.Now().Add(5 * time.Minute)
	for env.srv.Progress().Status != project.StatusComplete {
		if time.Now().After(deadline) {
			b.Fatalf("index not complete: %+v", env.srv.Progress())
		}
		time.Sleep(10 * time.Millisecond) // polling with a deadline
	}
	queries := []string{"validate payment token", "where is the shipping address parsed?", "CustomerInvoice",
		"export report queue worker", "cache session load", "render cart item price", "decode order", "notify customer discount"}
	var lat []time.Duration
	b.ResetTimer()
	i := 0
	for b.Loop() {
		start := time.Now()
		m, isErr := env.call(b, project.ToolGeneralQuery, map[string]any{"query": queries[i%len(queries)], "responseFormat": project.FormatMarkdown})
		lat = append(lat, time.Since(start))
		if isErr || m["isPartialResult"] != false || !strings.Contains(m["results"].(string), "###") {
			b.Fatalf("got %v, want complete results with passages", m)
		}
		i++
	}
	b.StopTimer()
	slices.Sort(lat)
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "p50-ms")
	b.ReportMetric(float64(lat[len(lat)*95/100].Microseconds())/1000, "p95-ms")
}
