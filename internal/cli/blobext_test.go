package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestBlobExt: binary content is saved with the extension people expect:
// .txt for text/plain (the system's first is .asc), .jpg for JPEG (.jfif
// or .jpe), .md for Markdown (.mkd); the subtype's own when the system
// knows it; .bin when nothing is known.
func TestBlobExt(t *testing.T) {
	t.Parallel()
	for mimeType, want := range map[string]string{
		"text/plain": ".txt", "text/plain; charset=utf-8": ".txt", "image/jpeg": ".jpg", "text/markdown": ".md",
		"image/png": ".png", "application/json": ".json", "application/pdf": ".pdf",
		"application/x-unknown-thing": ".bin", "": ".bin",
	} {
		if got := blobExt(mimeType); got != want {
			t.Errorf("blobExt(%q) = %q, want %q", mimeType, got, want)
		}
	}
}

// TestReadSavesTextAsTxt: a text/plain blob that read saves (server-
// everything's dynamic blob) gets .txt, not the .asc that is the first
// extension of text/plain in /etc/mime.types.
func TestReadSavesTextAsTxt(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	r := runCLI(t, "read", "--url", everythingURL(t), "demo://resource/dynamic/blob/1", "--out-dir", dir)
	wantCode(t, r, ExitOK)
	files, _ := filepath.Glob(filepath.Join(dir, "*"))
	if len(files) != 1 || !strings.HasSuffix(files[0], ".txt") || !strings.Contains(r.stdout, files[0]) {
		t.Fatalf("read a text/plain blob: saved %v (stdout %q), want one .txt file, named on stdout", files, r.stdout)
	}
	if data, err := os.ReadFile(files[0]); err != nil || len(data) == 0 {
		t.Errorf("the saved file: %v, %d bytes", err, len(data))
	}
}
