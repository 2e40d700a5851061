package web

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"html/template"
	"strings"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/extension"

	"github.com/switchboard-mcp/switchboard/internal/control"
	"github.com/switchboard-mcp/switchboard/internal/fault"
	"github.com/switchboard-mcp/switchboard/internal/toolcall"
)

// markdown renders CommonMark with GitHub's tables, strikethrough, task
// lists and autolinks. It is goldmark's default renderer, which omits raw
// HTML ("<!-- raw HTML omitted -->") and drops dangerous link targets
// (javascript:, vbscript:, file:, data: other than images): it is never
// given html.WithUnsafe. Made on first use, not at start.
var markdown = sync.OnceValue(func() goldmark.Markdown { return goldmark.New(goldmark.WithExtensions(extension.GFM)) })

// RenderMarkdown renders untrusted Markdown to HTML that is safe to put in
// a page: raw HTML in the source is omitted, text is escaped, dangerous
// URLs are dropped, and the page's CSP blocks anything that would still
// try to run.
func RenderMarkdown(src string) template.HTML {
	var b bytes.Buffer
	if err := markdown().Convert([]byte(src), &b); err != nil {
		return template.HTML(template.HTMLEscapeString(src)) //nolint:gosec // escaped
	}
	return template.HTML(b.String()) //nolint:gosec // goldmark without WithUnsafe escapes everything
}

// inlineMIME are the media types shown inline as data: URLs (the CSP
// allows data: for img-src and media-src only). Anything else is offered
// as a size and type, never rendered.
var inlineMIME = map[string]string{
	"image/png": "image", "image/jpeg": "image", "image/gif": "image", "image/webp": "image",
	"image/avif": "image", "image/bmp": "image", "image/svg+xml": "image",
	"audio/wav": "audio", "audio/x-wav": "audio", "audio/wave": "audio", "audio/mpeg": "audio", "audio/mp3": "audio",
	"audio/ogg": "audio", "audio/webm": "audio", "audio/aac": "audio", "audio/flac": "audio", "audio/mp4": "audio",
}

// dataURL returns a data: URL for bytes of a media type shown inline, and
// the element kind ("image" or "audio"); ok is false for any other type.
// An SVG shown through <img> cannot run script.
func dataURL(mime string, data []byte) (url template.URL, kind string, ok bool) {
	m := strings.ToLower(strings.TrimSpace(strings.SplitN(mime, ";", 2)[0]))
	kind, ok = inlineMIME[m]
	if !ok {
		return "", "", false
	}
	return template.URL("data:" + m + ";base64," + base64.StdEncoding.EncodeToString(data)), kind, true //nolint:gosec // type allow-listed, payload base64
}

// block is one rendered content block.
type block struct {
	// Kind is text, json, markdown, image, audio, resource, link or binary.
	Kind string
	Text string
	HTML template.HTML
	Src  template.URL
	MIME string
	URI  string
	Name string
	Size int
}

// errorView is a seed 002 structured error, for display.
type errorView struct {
	Type        string
	Message     string
	Fields      []fault.FieldDetail
	Suggestions []string
	Details     string // other details, pretty JSON
	JSON        string // the whole error, pretty JSON
}

// resultView is a finished call, for display.
type resultView struct {
	Status      string
	ContentType string
	IsError     bool
	Error       *errorView
	Blocks      []block
	Structured  string
	// OutputError says how Structured fails the tool's outputSchema.
	OutputError    *toolcall.OutputError
	HistoryID      string
	Duration       string
	Bytes          int64
	Retries        int
	Truncated      bool
	Partial        bool
	BudgetExceeded bool
	Missing        string
	Cost           float64
	// TaskID is the task a call started as one created; TaskServer its
	// server (set by the page).
	TaskID     string
	TaskServer string
}

// newErrorView renders an error in seed 002's form.
func newErrorView(err error) *errorView {
	fe := fault.As(err)
	v := &errorView{Type: fe.Kind.ErrorType(), Message: fe.Message, Fields: fe.Fields, Suggestions: fe.Suggestions}
	if len(fe.Details) > 0 {
		v.Details = prettyJSON(mustJSON(fe.Details))
	}
	v.JSON = prettyJSON(mustJSON(fe))
	return v
}

// structuredError reads a seed 002 error from a tool error's text, when
// it is one.
func structuredError(text string) *errorView {
	var w struct {
		Type        string         `json:"error_type"`
		Message     string         `json:"message"`
		Details     map[string]any `json:"details"`
		Suggestions []string       `json:"suggestions"`
	}
	if err := json.Unmarshal([]byte(strings.TrimSpace(text)), &w); err != nil || w.Type == "" {
		return nil
	}
	v := &errorView{Type: w.Type, Message: w.Message, Suggestions: w.Suggestions, JSON: prettyJSON([]byte(text))}
	if fields, ok := w.Details["fields"]; ok {
		var fs []fault.FieldDetail
		if json.Unmarshal(mustJSON(fields), &fs) == nil {
			v.Fields = fs
		}
		delete(w.Details, "fields")
	}
	if len(w.Details) > 0 {
		v.Details = prettyJSON(mustJSON(w.Details))
	}
	return v
}

// prettyJSON indents JSON; other text comes back as it was.
func prettyJSON(b []byte) string {
	var out bytes.Buffer
	if err := json.Indent(&out, bytes.TrimSpace(b), "", "  "); err != nil {
		return string(b)
	}
	return out.String()
}

// newResultView renders a call's outcome: its result by content type, or
// its error.
func newResultView(res *control.CallResult, err error) *resultView {
	if res == nil {
		if err == nil {
			err = fault.New(fault.Internal, "the call returned nothing")
		}
		fe := fault.As(err)
		status := "error"
		if fe.Kind == fault.Cancelled || fe.Kind == fault.Timeout {
			status = string(fe.Kind)
		}
		return &resultView{Status: status, IsError: true, Error: newErrorView(err)}
	}
	v := &resultView{
		Status: res.Status, ContentType: res.ContentType, HistoryID: res.ID,
		Duration: res.Duration.Round(1e6).String(), Bytes: res.Bytes, Retries: res.Retries,
		Truncated: res.Truncated, Partial: res.Partial, BudgetExceeded: res.BudgetExceeded,
		Missing: res.Missing, Cost: res.Cost, OutputError: res.OutputError,
	}
	if res.Task != nil {
		var t struct {
			TaskID string `json:"taskId"`
		}
		_ = json.Unmarshal(res.Task, &t)
		v.TaskID = t.TaskID
	}
	if res.Result == nil {
		return v
	}
	v.IsError = res.Result.IsError
	for _, ct := range res.Result.Content {
		b := renderContent(ct, toolcall.ContentType(res.ContentType))
		if v.IsError && v.Error == nil && b.Kind == "json" {
			v.Error = structuredError(b.Text)
		}
		v.Blocks = append(v.Blocks, b)
	}
	if res.Result.StructuredContent != nil {
		v.Structured = prettyJSON(mustJSON(res.Result.StructuredContent))
	}
	return v
}

// renderContent renders one content block.
func renderContent(c mcp.Content, ct toolcall.ContentType) block {
	switch c := c.(type) {
	case *mcp.TextContent:
		return renderText(c.Text, ct == toolcall.ContentMarkdown)
	case *mcp.ImageContent:
		return renderMedia(c.MIMEType, c.Data, "")
	case *mcp.AudioContent:
		return renderMedia(c.MIMEType, c.Data, "")
	case *mcp.ResourceLink:
		return block{Kind: "link", Name: c.Name, URI: c.URI, MIME: c.MIMEType, Text: c.Description}
	case *mcp.EmbeddedResource:
		r := c.Resource
		if r == nil {
			return block{Kind: "text", Text: "(an embedded resource with no contents)"}
		}
		if r.Blob != nil {
			b := renderMedia(r.MIMEType, r.Blob, r.URI)
			return b
		}
		b := renderText(r.Text, strings.HasPrefix(r.MIMEType, "text/markdown"))
		b.URI, b.MIME = r.URI, r.MIMEType
		return b
	}
	return block{Kind: "json", Text: prettyJSON(mustJSON(c))}
}

// renderText renders text as pretty JSON when it is JSON, as Markdown when
// the result was classified so, and as plain text otherwise.
func renderText(t string, md bool) block {
	trimmed := strings.TrimSpace(t)
	if (strings.HasPrefix(trimmed, "{") || strings.HasPrefix(trimmed, "[")) && json.Valid([]byte(trimmed)) {
		return block{Kind: "json", Text: prettyJSON([]byte(trimmed))}
	}
	if md {
		return block{Kind: "markdown", HTML: RenderMarkdown(t), Text: t}
	}
	return block{Kind: "text", Text: t}
}

// renderMedia shows images and audio inline, other bytes by size and type.
func renderMedia(mime string, data []byte, uri string) block {
	if src, kind, ok := dataURL(mime, data); ok {
		return block{Kind: kind, Src: src, MIME: mime, URI: uri, Size: len(data)}
	}
	return block{Kind: "binary", MIME: mime, URI: uri, Size: len(data),
		Text: fmt.Sprintf("%d bytes of %s (not shown)", len(data), orUnknown(mime))}
}

func orUnknown(s string) string {
	if s == "" {
		return "an unknown type"
	}
	return s
}
