package redact_test

import (
	"errors"
	"io"
	"strings"
	"sync"
	"testing"

	"github.com/switchboard-mcp/switchboard/internal/redact"
)

func TestWriterChunks(t *testing.T) {
	r := redact.New([]string{"hunter2hunter2"})
	in := "level=info msg=start\n" +
		"level=info pw=hunter2hunter2 tok=" + ghToken + "\n" +
		"key follows\n" + pemBlock + "\n" +
		"Authorization: Bearer " + bearerToken + "\n" +
		"last line without newline hunter2hunter2"
	want := r.String(in)
	if strings.Contains(want, "hunter2") || strings.Contains(want, "MIIE") {
		t.Fatalf("String left a secret in %q", want)
	}
	// Every way of cutting the input in two, and in chunks of each size.
	for cut := 0; cut <= len(in); cut++ {
		var b strings.Builder
		w := r.Writer(&b)
		mustWrite(t, w, in[:cut])
		mustWrite(t, w, in[cut:])
		if err := w.Flush(); err != nil {
			t.Fatal(err)
		}
		if got := b.String(); got != want {
			t.Fatalf("cut at %d:\n got %q\nwant %q", cut, got, want)
		}
	}
	for size := 1; size < 40; size++ {
		var b strings.Builder
		w := r.Writer(&b)
		for i := 0; i < len(in); i += size {
			mustWrite(t, w, in[i:min(i+size, len(in))])
		}
		if err := w.Flush(); err != nil {
			t.Fatal(err)
		}
		if got := b.String(); got != want {
			t.Fatalf("chunks of %d:\n got %q\nwant %q", size, got, want)
		}
	}
}

func mustWrite(t *testing.T, w io.Writer, s string) {
	t.Helper()
	if n, err := w.Write([]byte(s)); n != len(s) || err != nil {
		t.Fatalf("Write(%q) = %d, %v; want %d, nil", s, n, err, len(s))
	}
}

func TestWriterPassesLinesOn(t *testing.T) {
	var b strings.Builder
	w := redact.New(nil).Writer(&b)
	mustWrite(t, w, "one\ntw")
	if got, want := b.String(), "one\n"; got != want {
		t.Errorf("after a line and a half: got %q, want %q", got, want)
	}
	mustWrite(t, w, "o\n")
	if got, want := b.String(), "one\ntwo\n"; got != want {
		t.Errorf("after two lines: got %q, want %q", got, want)
	}
}

func TestWriterLongLine(t *testing.T) {
	var b strings.Builder
	w := redact.New(nil).Writer(&b)
	word := strings.Repeat("x", 100) + " "
	long := strings.Repeat(word, 2*redact.MaxPending/len(word))
	mustWrite(t, w, long)
	if b.Len() == 0 || b.Len() > len(long) {
		t.Errorf("after %d bytes without a newline, %d were passed on; want some", len(long), b.Len())
	}
	mustWrite(t, w, "token="+ghToken[:10])
	mustWrite(t, w, ghToken[10:]+"\n")
	if got := b.String(); got != long+"token=[REDACTED]\n" {
		t.Errorf("output ends %q, want the token redacted", got[max(0, len(got)-40):])
	}
}

func TestWriterConcurrent(t *testing.T) {
	var b strings.Builder
	w := redact.New([]string{"hunter2hunter2"}).Writer(&b)
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 50 {
				if _, err := w.Write([]byte("x hunter2hunter2 y\n")); err != nil {
					t.Error(err)
				}
			}
		})
	}
	wg.Wait()
	if got, want := b.String(), strings.Repeat("x [REDACTED] y\n", 400); got != want {
		t.Errorf("got %d bytes with secrets %v, want %d redacted lines", len(got), strings.Contains(got, "hunter2"), 400)
	}
}

type failWriter struct{}

func (failWriter) Write(p []byte) (int, error) { return 0, errors.New("disk full") }

func TestWriterError(t *testing.T) {
	w := redact.New(nil).Writer(failWriter{})
	if _, err := w.Write([]byte("a\n")); err == nil || err.Error() != "disk full" {
		t.Errorf("Write error = %v, want disk full", err)
	}
}
