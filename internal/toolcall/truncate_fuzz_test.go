// Internal on purpose: fuzzes the unexported truncation helpers (cutUTF8, truncate, resultSize) against their invariants.

package toolcall

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// FuzzTruncate checks the output-size limit and its accounting on results
// of any shape: a result within the limit is left as it is; otherwise
// every block is kept, cut or replaced in place, the payload kept is within
// the limit, a cut text keeps a prefix of the original that ends between
// runes and its marker counts exactly the bytes cut, a block replaced by a
// note says its true size, structured content that does not fit is
// replaced by a note with its true size, and resultSize counts the bytes of
// the payload.
func FuzzTruncate(f *testing.F) {
	f.Add(uint16(1000), []byte{0}, strings.Repeat("x", 5000), false) // TestOutputLimit's result
	f.Add(uint16(10), []byte{0, 1, 2, 3, 4, 5, 0}, "héllo wörld ☃ ☃ ☃ and some more text", true)
	f.Add(uint16(0), []byte{3, 0}, "ab", true)
	f.Add(uint16(7), []byte{0, 0, 0}, "\xff\xfe日本語テキスト", false)
	f.Add(uint16(64), []byte{4, 1, 0}, strings.Repeat("€", 40), true)
	f.Fuzz(func(t *testing.T, limit16 uint16, shape []byte, text string, structured bool) {
		limit := int64(limit16)
		if len(shape) > 12 {
			shape = shape[:12]
		}
		res := &mcp.CallToolResult{}
		parts := split(text, len(shape))
		for i, k := range shape {
			p := parts[i]
			switch k % 6 {
			case 0:
				res.Content = append(res.Content, &mcp.TextContent{Text: p})
			case 1:
				res.Content = append(res.Content, &mcp.ImageContent{Data: []byte(p), MIMEType: "image/png"})
			case 2:
				res.Content = append(res.Content, &mcp.AudioContent{Data: []byte(p), MIMEType: "audio/wav"})
			case 3:
				res.Content = append(res.Content, &mcp.EmbeddedResource{Resource: &mcp.ResourceContents{URI: "file:///r", Text: p}})
			case 4:
				res.Content = append(res.Content, &mcp.EmbeddedResource{Resource: &mcp.ResourceContents{URI: "file:///b", Blob: []byte(p)}})
			case 5:
				res.Content = append(res.Content, &mcp.ResourceLink{URI: "file:///l", Name: p})
			}
		}
		if structured {
			res.StructuredContent = map[string]any{"text": text, "n": len(shape)}
		}
		var want int64
		for _, p := range parts {
			want += int64(len(p))
		}
		for _, c := range res.Content {
			if l, ok := c.(*mcp.ResourceLink); ok {
				want += int64(len(l.URI) + len(l.Description)) // the name is counted with the parts
			}
		}
		var structuredBytes int
		if structured {
			b, _ := json.Marshal(res.StructuredContent)
			structuredBytes = len(b)
			want += int64(structuredBytes)
		}
		if got := resultSize(res); got != want {
			t.Fatalf("resultSize: got %d, want %d", got, want)
		}

		orig := make([]mcp.Content, len(res.Content))
		copy(orig, res.Content)
		before := marshalResult(t, res)
		truncate(res, limit, 0)
		if want <= limit {
			if len(res.Content) == 0 && len(orig) == 0 {
				return // nil or empty, there is nothing to keep
			}
			if after := marshalResult(t, res); after != before {
				t.Fatalf("a %d-byte result within the %d-byte limit changed:\nbefore %s\nafter  %s", want, limit, before, after)
			}
			return
		}

		wantLen := len(orig)
		if structured && res.StructuredContent == nil {
			wantLen++
		}
		if len(res.Content) != wantLen {
			t.Fatalf("got %d blocks, want %d", len(res.Content), wantLen)
		}
		var kept int64
		for i, o := range orig {
			kept += checkBlock(t, i, o, res.Content[i], limit)
		}
		if res.StructuredContent != nil {
			b, _ := json.Marshal(res.StructuredContent)
			kept += int64(len(b))
		} else if structured {
			note, ok := res.Content[len(res.Content)-1].(*mcp.TextContent)
			wantNote := fmt.Sprintf("[truncated by switchboard: structuredContent of %d bytes omitted]", structuredBytes)
			if !ok || note.Text != wantNote {
				t.Fatalf("structured content dropped with %#v, want the note %q", res.Content[len(res.Content)-1], wantNote)
			}
		}
		if kept > limit {
			t.Fatalf("kept %d bytes of payload, over the %d-byte limit", kept, limit)
		}
	})
}

var markerPattern = regexp.MustCompile(`\n\[truncated by switchboard: (\d+) bytes omitted\]$`)

// checkBlock checks one block after truncation against the original, and
// returns the payload bytes it kept.
func checkBlock(t *testing.T, i int, o, c mcp.Content, limit int64) int64 {
	t.Helper()
	if o == c {
		return contentSize(o) // kept as it was
	}
	cutText := func(orig, got string) int64 {
		m := markerPattern.FindStringSubmatchIndex(got)
		if m == nil {
			t.Fatalf("block %d: cut text %q has no marker", i, got)
		}
		keep := got[:m[0]]
		n, _ := strconv.Atoi(got[m[2]:m[3]])
		switch {
		case !strings.HasPrefix(orig, keep):
			t.Fatalf("block %d: kept %q, not a prefix of the original", i, keep)
		case n != len(orig)-len(keep):
			t.Fatalf("block %d: the marker says %d bytes omitted; %d of %d were (kept %d)", i, n, len(orig)-len(keep), len(orig), len(keep))
		case utf8.ValidString(orig) && len(keep) < len(orig) && !utf8.RuneStart(orig[len(keep)]):
			t.Fatalf("block %d: the cut splits a rune at byte %d of %q", i, len(keep), orig)
		}
		return int64(len(keep))
	}
	switch o := o.(type) {
	case *mcp.TextContent:
		got, ok := c.(*mcp.TextContent)
		if !ok {
			t.Fatalf("block %d: a text block became %T", i, c)
		}
		return cutText(o.Text, got.Text)
	case *mcp.EmbeddedResource:
		if o.Resource.Blob == nil {
			got, ok := c.(*mcp.EmbeddedResource)
			if !ok || got.Resource.URI != o.Resource.URI {
				t.Fatalf("block %d: a text resource became %#v", i, c)
			}
			return cutText(o.Resource.Text, got.Resource.Text)
		}
	}
	note, ok := c.(*mcp.TextContent)
	if !ok {
		t.Fatalf("block %d: %T replaced by %T, want a note", i, o, c)
	}
	size := contentSize(o)
	if !strings.Contains(note.Text, fmt.Sprintf("a %d-byte ", size)) || !strings.HasSuffix(note.Text, fmt.Sprintf("did not fit the %d-byte limit]", limit)) {
		t.Fatalf("block %d: a %d-byte %T replaced by %q", i, size, o, note.Text)
	}
	return 0
}

// split cuts s into n parts at offsets spread over it, moved back to the
// start of a rune so that valid text stays valid.
func split(s string, n int) []string {
	at := func(i int) int {
		j := len(s) * i / n
		for j > 0 && j < len(s) && !utf8.RuneStart(s[j]) {
			j--
		}
		return j
	}
	out := make([]string, n)
	for i := range n {
		out[i] = s[at(i):at(i+1)]
	}
	return out
}

func marshalResult(t *testing.T, res *mcp.CallToolResult) string {
	t.Helper()
	b, err := json.Marshal(res)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// FuzzCutUTF8 checks the cut the limit makes in a text: the longest prefix
// of at most n bytes that does not split a rune of s.
func FuzzCutUTF8(f *testing.F) {
	f.Add("héllo ☃", 3)
	f.Add("\xff\xfe", 1)
	f.Add("", 0)
	f.Fuzz(func(t *testing.T, s string, n int) {
		if n < 0 {
			n = -n
		}
		got := cutUTF8(s, n)
		if !strings.HasPrefix(s, got) || len(got) > n && len(got) > 0 {
			t.Fatalf("cutUTF8(%q, %d) = %q: not a prefix of at most %d bytes", s, n, got, n)
		}
		if len(got) < len(s) && !utf8.RuneStart(s[len(got)]) {
			t.Fatalf("cutUTF8(%q, %d) = %q splits a rune", s, n, got)
		}
		if len(s) <= n && got != s {
			t.Fatalf("cutUTF8(%q, %d) = %q, want all of it", s, n, got)
		}
		if utf8.ValidString(s) && len(got) < min(n, len(s))-(utf8.UTFMax-1) {
			t.Fatalf("cutUTF8(%q, %d) = %q keeps less than it could", s, n, got)
		}
	})
}
