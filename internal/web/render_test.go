package web

import (
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/internal/control"
	"github.com/switchboard-mcp/switchboard/internal/fault"
)

func TestRenderMarkdownIsSafe(t *testing.T) {
	cases := []struct {
		name, src string
		want      []string // substrings the HTML must hold
		never     []string // substrings it must not
	}{
		{"script block", "# Title\n\n<script>alert(1)</script>\n", []string{"<h1>Title</h1>", "raw HTML omitted"}, []string{"<script"}},
		{"inline img onerror", "text <img src=x onerror=alert(1)> more", []string{"text", "more"}, []string{"<img", "onerror"}},
		{"javascript link", "[x](javascript:alert(1))", []string{"<a href=\"\">x</a>"}, []string{"javascript:"}},
		{"vbscript link", "[x](vbscript:msgbox)", nil, []string{"vbscript:"}},
		{"text escaped", "a < b & c > d", []string{"a &lt; b &amp; c &gt; d"}, nil},
		{"attribute breakout", "[x](http://a.example/\"onmouseover=alert(1))", nil, []string{"\" onmouseover", "\"onmouseover"}},
		{"table kept", "| a | b |\n|---|---|\n| 1 | 2 |\n", []string{"<table>", "<td>1</td>"}, nil},
		{"html in code", "`<b>x</b>`", []string{"<code>&lt;b&gt;x&lt;/b&gt;</code>"}, []string{"<b>"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := string(RenderMarkdown(c.src))
			for _, w := range c.want {
				if !strings.Contains(got, w) {
					t.Errorf("got %q, want it to contain %q", got, w)
				}
			}
			for _, n := range c.never {
				if strings.Contains(got, n) {
					t.Errorf("got %q, must not contain %q", got, n)
				}
			}
		})
	}
}

func TestDataURL(t *testing.T) {
	cases := []struct {
		mime, wantKind string
		ok             bool
	}{
		{"image/png", "image", true},
		{"IMAGE/JPEG; charset=x", "image", true},
		{"image/svg+xml", "image", true},
		{"audio/wav", "audio", true},
		{"audio/mpeg", "audio", true},
		{"text/html", "", false},
		{"application/javascript", "", false},
		{"", "", false},
	}
	for _, c := range cases {
		url, kind, ok := dataURL(c.mime, []byte("abc"))
		if ok != c.ok || kind != c.wantKind {
			t.Errorf("dataURL(%q): got %q %v, want %q %v", c.mime, kind, ok, c.wantKind, c.ok)
		}
		if ok && !strings.HasSuffix(string(url), ";base64,YWJj") {
			t.Errorf("dataURL(%q): got %q", c.mime, url)
		}
	}
}

func TestResultView(t *testing.T) {
	res := &control.CallResult{ID: "abc", Status: "success", ContentType: "markdown", Result: &mcp.CallToolResult{Content: []mcp.Content{
		&mcp.TextContent{Text: "# Hi\n<script>x</script>"},
		&mcp.TextContent{Text: `{"a":1}`},
		&mcp.ImageContent{MIMEType: "image/png", Data: []byte{1, 2}},
		&mcp.AudioContent{MIMEType: "audio/wav", Data: []byte{3}},
		&mcp.ImageContent{MIMEType: "text/html", Data: []byte("<script>")},
		&mcp.ResourceLink{URI: "file:///x", Name: "x"},
		&mcp.EmbeddedResource{Resource: &mcp.ResourceContents{URI: "demo://a", MIMEType: "text/plain", Text: "plain"}},
	}, StructuredContent: map[string]any{"b": 2}}}
	v := newResultView(res, nil)
	var kinds []string
	for _, b := range v.Blocks {
		kinds = append(kinds, b.Kind)
	}
	want := []string{"markdown", "json", "image", "audio", "binary", "link", "text"}
	if strings.Join(kinds, ",") != strings.Join(want, ",") {
		t.Errorf("blocks: got %v, want %v", kinds, want)
	}
	if strings.Contains(string(v.Blocks[0].HTML), "<script") {
		t.Errorf("markdown block kept a script: %s", v.Blocks[0].HTML)
	}
	if v.Blocks[1].Text != "{\n  \"a\": 1\n}" {
		t.Errorf("json block: got %q", v.Blocks[1].Text)
	}
	if v.Structured != "{\n  \"b\": 2\n}" || v.HistoryID != "abc" {
		t.Errorf("structured %q, history %q", v.Structured, v.HistoryID)
	}

	// A tool error in seed 002's form is shown as one.
	toolErr := &control.CallResult{Status: "error", Result: &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{
		Text: `{"error_type":"validation_error","message":"bad","details":{"fields":[{"field":"a","message":"required, but missing"}]},"suggestions":["send a"]}`}}}}
	v = newResultView(toolErr, nil)
	if v.Error == nil || v.Error.Type != "validation_error" || len(v.Error.Fields) != 1 || v.Error.Fields[0].Field != "a" || v.Error.Suggestions[0] != "send a" {
		t.Errorf("structured tool error: got %+v", v.Error)
	}

	// An engine error has a status from its kind.
	v = newResultView(nil, fault.New(fault.Cancelled, "call cancelled"))
	if v.Status != "cancelled" || v.Error.Type != "cancelled_error" || !strings.Contains(v.Error.JSON, `"error_type": "cancelled_error"`) {
		t.Errorf("cancelled: got %+v", v)
	}
}
