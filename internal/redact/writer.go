package redact

import (
	"bytes"
	"io"
	"sync"
)

// maxPending is how much a LineWriter holds back waiting for the end of a
// line or of a private key block.
const maxPending = 64 << 10

// LineWriter redacts a stream, such as log output, before passing it on. It
// redacts whole lines: a line is held until its newline arrives, so a secret
// split across Write calls is still found, and a private key block is held
// until its END line. A line longer than 64 KiB is passed on in pieces cut
// at blanks. Call Flush at the end to pass on an unfinished last line.
// A LineWriter is safe for concurrent use.
type LineWriter struct {
	r   *Redactor
	w   io.Writer
	mu  sync.Mutex
	buf []byte
}

// Writer returns a LineWriter that writes to w what is written to it, with
// secrets removed as by String.
func (r *Redactor) Writer(w io.Writer) *LineWriter {
	return &LineWriter{r: r, w: w}
}

// Write redacts and passes on the complete lines written so far. It reports
// all of p as written; an error is the underlying writer's.
func (lw *LineWriter) Write(p []byte) (int, error) {
	lw.mu.Lock()
	defer lw.mu.Unlock()
	lw.buf = append(lw.buf, p...)
	if n := lw.ready(); n > 0 {
		return len(p), lw.emit(n)
	}
	return len(p), nil
}

// Flush redacts and passes on everything held back.
func (lw *LineWriter) Flush() error {
	lw.mu.Lock()
	defer lw.mu.Unlock()
	if len(lw.buf) == 0 {
		return nil
	}
	return lw.emit(len(lw.buf))
}

// ready returns how many bytes at the start of the buffer can be passed on.
func (lw *LineWriter) ready() int {
	buf := lw.buf
	complete := bytes.LastIndexByte(buf, '\n') + 1
	n := complete
	if b := openPrivateKey(buf[:complete]); b >= 0 {
		n = bytes.LastIndexByte(buf[:b], '\n') + 1
	}
	if len(buf)-n <= maxPending {
		return n
	}
	n = complete
	if len(buf)-n <= maxPending {
		return n
	}
	// An overlong line: pass on all but its last blank-separated word,
	// which may be the start of a token.
	if cut := bytes.LastIndexAny(buf[n:], " \t"); cut > 0 {
		return n + cut + 1
	}
	return len(buf)
}

// openPrivateKey returns the index of a private key BEGIN line in text that
// has no END line after it, or -1.
func openPrivateKey(text []byte) int {
	b := bytes.LastIndex(text, []byte("-----BEGIN "))
	if b < 0 || !bytes.Contains(text[b:], []byte("PRIVATE KEY")) || bytes.Contains(text[b:], []byte("-----END ")) {
		return -1
	}
	return b
}

// emit redacts and writes the first n bytes of the buffer.
func (lw *LineWriter) emit(n int) error {
	out := lw.r.Bytes(lw.buf[:n])
	_, err := lw.w.Write(out)
	lw.buf = append(lw.buf[:0], lw.buf[n:]...)
	return err
}
