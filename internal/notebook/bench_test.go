package notebook_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/switchboard-mcp/switchboard/internal/notebook"
)

// benchDoc is a document of n blocks under a few headings, each calling
// echo with a different message.
func benchDoc(n int) string {
	var b strings.Builder
	b.WriteString("# Benchmark\n\nA document with many blocks.\n")
	for i := range n {
		if i%50 == 0 {
			fmt.Fprintf(&b, "\n## Part %d\n", i/50)
		}
		fmt.Fprintf(&b, "\nBlock %d:\n\n```alpha\ntool: echo\nmessage: result number %d\n```\n", i, i)
	}
	return b.String()
}

// benchRun runs a fresh copy of the document b.N times and reports the
// time per block.
func benchRun(b *testing.B, doc string, opts notebook.Options) {
	p := filepath.Join(b.TempDir(), "bench.md")
	ctx := context.Background()
	b.ResetTimer()
	for range b.N {
		b.StopTimer()
		if err := os.WriteFile(p, []byte(doc), 0o644); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		rep, err := notebook.Run(ctx, p, opts)
		if err != nil || rep.Failed != 0 || !rep.Written {
			b.Fatalf("Run: got %v, %d failed, written %v", err, rep.Failed, rep.Written)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*500), "ns/block")
}

// BenchmarkRun500 runs a 500-block document against a Go stdio server.
func BenchmarkRun500(b *testing.B) {
	cfg := testConfig(okServers(b, "alpha")...)
	eng := newEngine(b, cfg)
	doc := benchDoc(500)
	for _, c := range []int{1, 8} {
		b.Run(fmt.Sprintf("concurrency=%d", c), func(b *testing.B) {
			benchRun(b, doc, notebook.Options{Config: cfg, Caller: eng, Concurrency: c})
		})
	}
}

// BenchmarkOverhead500 measures the runner's own work on a 500-block
// document (parsing, rendering, writing) with calls that return at once;
// and a re-run that finds nothing to change.
func BenchmarkOverhead500(b *testing.B) {
	cfg := testConfig(okServers(b, "alpha")...)
	doc := benchDoc(500)
	b.Run("first-run", func(b *testing.B) {
		benchRun(b, doc, notebook.Options{Config: cfg, Caller: echoCaller()})
	})
	b.Run("re-run", func(b *testing.B) {
		p := filepath.Join(b.TempDir(), "bench.md")
		if err := os.WriteFile(p, []byte(doc), 0o644); err != nil {
			b.Fatal(err)
		}
		opts := notebook.Options{Config: cfg, Caller: echoCaller()}
		if _, err := notebook.Run(context.Background(), p, opts); err != nil {
			b.Fatal(err)
		}
		b.ResetTimer()
		for range b.N {
			rep, err := notebook.Run(context.Background(), p, opts)
			if err != nil || rep.Written {
				b.Fatalf("Run: got %v, written %v; want no change", err, rep.Written)
			}
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*500), "ns/block")
	})
}
