package toolcall

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/internal/fault"
	"github.com/switchboard-mcp/switchboard/internal/redact"
	"github.com/switchboard-mcp/switchboard/internal/store"
)

// result turns the server's answer into a Result: measured, truncated to
// the size limit, redacted when the server is configured so, classified.
func (c *call) result(res *mcp.CallToolResult, _ time.Duration) *Result {
	r := &Result{ID: c.req.ID, CallToolResult: res, Duration: c.e.now().Sub(c.start), Retries: c.retries}
	r.OutputError = c.checkOutput(res)
	r.Bytes = resultSize(res)
	if meta := res.Meta; meta != nil {
		// A transport that had to cut an oversized message says so.
		if t, _ := meta[MetaTruncated].(bool); t {
			r.Truncated = true
		}
		if n, ok := meta[MetaOriginalBytes].(float64); ok && int64(n) > r.Bytes {
			r.Bytes = int64(n)
		}
	}
	if limit := c.set.cfg.Limits.MaxOutputBytes; r.Bytes > limit {
		// What a transport already dropped counts toward the omitted
		// bytes the marker reports: the caller is told how much of what
		// the server sent is missing, not how much of the transport's copy.
		truncate(res, limit, max(r.Bytes-resultSize(res), 0))
		r.Truncated = true
	}
	if r.Truncated {
		if res.Meta == nil {
			res.Meta = mcp.Meta{}
		}
		res.Meta[MetaTruncated] = true
		res.Meta[MetaOriginalBytes] = r.Bytes
	}
	if c.srv.RedactResults {
		redactResult(c.set.redactor, res)
	}
	c.mu.Lock()
	r.Progress, r.Cost = c.progress, c.cost
	c.mu.Unlock()
	if cost := metaCost(res.Meta); cost > 0 {
		r.Cost = cost
	}
	r.ContentType, r.Display = classify(res)
	if d, ok := res.Meta["display"].(string); ok {
		switch Display(d) {
		case DisplayInline, DisplayBlock, DisplayCollapsed:
			r.Display = Display(d)
		}
	}
	c.mu.Lock()
	r.Task = c.task
	c.mu.Unlock()
	switch {
	case r.Task != nil:
		r.Status, c.status = StatusTask, StatusTask
	case res.InputRequests != nil || res.NeedsInput():
		r.Status, c.status = StatusInputRequired, StatusInputRequired
	case res.IsError:
		r.Status, c.status = StatusError, StatusError
	case r.OutputError != nil:
		r.Status, c.status = StatusOutputInvalid, StatusOutputInvalid
	default:
		r.Status, c.status = StatusSuccess, StatusSuccess
	}
	return r
}

// resultSize is the size of a result's payload: text, binary data and
// structured content.
func resultSize(res *mcp.CallToolResult) int64 {
	var n int64
	for _, c := range res.Content {
		n += contentSize(c)
	}
	if res.StructuredContent != nil {
		if b, err := json.Marshal(res.StructuredContent); err == nil {
			n += int64(len(b))
		}
	}
	return n
}

func contentSize(c mcp.Content) int64 {
	switch c := c.(type) {
	case *mcp.TextContent:
		return int64(len(c.Text))
	case *mcp.ImageContent:
		return int64(len(c.Data))
	case *mcp.AudioContent:
		return int64(len(c.Data))
	case *mcp.EmbeddedResource:
		if c.Resource != nil {
			return int64(len(c.Resource.Text) + len(c.Resource.Blob))
		}
	case *mcp.ResourceLink:
		return int64(len(c.URI) + len(c.Name) + len(c.Description))
	}
	return 0
}

// TruncationMarker ends text that was cut to the size limit.
const TruncationMarker = "\n[truncated by switchboard: %d bytes omitted]"

// truncate cuts a result to limit bytes: text keeps its beginning (at a
// rune boundary) followed by a marker; binary blocks that do not fit are
// replaced by a text note; structured content that does not fit is dropped
// with a note. dropped is how many bytes a transport already cut from the
// result before it reached the engine; the first cut text's marker adds
// them, so that it counts what the server sent beyond what is kept.
func truncate(res *mcp.CallToolResult, limit, dropped int64) {
	left := limit
	out := make([]mcp.Content, 0, len(res.Content))
	for _, c := range res.Content {
		size := contentSize(c)
		if size <= left {
			out = append(out, c)
			left -= size
			continue
		}
		switch c := c.(type) {
		case *mcp.TextContent:
			keep := cutUTF8(c.Text, int(max(left, 0)))
			out = append(out, &mcp.TextContent{Text: keep + fmt.Sprintf(TruncationMarker, int64(len(c.Text)-len(keep))+dropped), Annotations: c.Annotations, Meta: c.Meta})
			left, dropped = 0, 0
		case *mcp.EmbeddedResource:
			if c.Resource != nil && c.Resource.Blob == nil {
				keep := cutUTF8(c.Resource.Text, int(max(left, 0)))
				rc := *c.Resource
				rc.Text = keep + fmt.Sprintf(TruncationMarker, int64(len(c.Resource.Text)-len(keep))+dropped)
				out = append(out, &mcp.EmbeddedResource{Resource: &rc, Annotations: c.Annotations, Meta: c.Meta})
				left, dropped = 0, 0
				continue
			}
			out = append(out, &mcp.TextContent{Text: fmt.Sprintf("[truncated by switchboard: a %d-byte resource did not fit the %d-byte limit]", size, limit)})
		default:
			out = append(out, &mcp.TextContent{Text: fmt.Sprintf("[truncated by switchboard: a %d-byte %s block did not fit the %d-byte limit]", size, contentKind(c), limit)})
		}
	}
	res.Content = out
	if res.StructuredContent != nil {
		if b, err := json.Marshal(res.StructuredContent); err != nil || int64(len(b)) > left {
			res.StructuredContent = nil
			res.Content = append(res.Content, &mcp.TextContent{Text: fmt.Sprintf("[truncated by switchboard: structuredContent of %d bytes omitted]", len(b))})
		}
	}
}

func contentKind(c mcp.Content) string {
	switch c.(type) {
	case *mcp.ImageContent:
		return "image"
	case *mcp.AudioContent:
		return "audio"
	case *mcp.ResourceLink:
		return "resource link"
	}
	return "content"
}

// cutUTF8 returns the longest prefix of s of at most n bytes that does not
// split a rune.
func cutUTF8(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// redactResult removes secrets from text content and structured content.
func redactResult(r *redact.Redactor, res *mcp.CallToolResult) {
	for i, c := range res.Content {
		switch c := c.(type) {
		case *mcp.TextContent:
			res.Content[i] = &mcp.TextContent{Text: r.String(c.Text), Annotations: c.Annotations, Meta: c.Meta}
		case *mcp.EmbeddedResource:
			if c.Resource != nil && c.Resource.Text != "" {
				rc := *c.Resource
				rc.Text = r.String(rc.Text)
				res.Content[i] = &mcp.EmbeddedResource{Resource: &rc, Annotations: c.Annotations, Meta: c.Meta}
			}
		}
	}
	if res.StructuredContent != nil {
		if b, err := json.Marshal(res.StructuredContent); err == nil {
			res.StructuredContent = json.RawMessage(r.JSON(b))
		}
	}
}

// classify derives seed 001's content type and display hint.
func classify(res *mcp.CallToolResult) (ContentType, Display) {
	ct := ContentText
	var text strings.Builder
	for _, c := range res.Content {
		switch c := c.(type) {
		case *mcp.ImageContent:
			ct = ContentImage
		case *mcp.TextContent:
			text.WriteString(c.Text)
		case *mcp.EmbeddedResource:
			if c.Resource != nil && strings.HasPrefix(c.Resource.MIMEType, "text/markdown") {
				ct = ContentMarkdown
			}
		}
	}
	t := strings.TrimSpace(text.String())
	if ct == ContentText {
		switch {
		case res.StructuredContent != nil && t == "":
			ct = ContentJSON
		case (strings.HasPrefix(t, "{") || strings.HasPrefix(t, "[")) && json.Valid([]byte(t)):
			ct = ContentJSON
		case looksLikeMarkdown(t):
			ct = ContentMarkdown
		}
	}
	lines := strings.Count(t, "\n") + 1
	switch {
	case ct == ContentImage:
		return ct, DisplayBlock
	case lines == 1 && len(t) <= 120:
		return ct, DisplayInline
	case lines > 30 || len(t) > 4096:
		return ct, DisplayCollapsed
	}
	return ct, DisplayBlock
}

func looksLikeMarkdown(t string) bool {
	for _, line := range strings.Split(t, "\n") {
		l := strings.TrimSpace(line)
		if strings.HasPrefix(l, "# ") || strings.HasPrefix(l, "## ") || strings.HasPrefix(l, "```") ||
			strings.HasPrefix(l, "- [") || strings.HasPrefix(l, "| ") || strings.HasPrefix(l, "* ") {
			return true
		}
	}
	return false
}

// finish logs a call and records it, returning once the record is durable
// (see Recorder.Commit) so that the caller answers only for calls in the
// history.
func (c *call) finish(ctx context.Context, res *Result, err error) {
	e := c.e
	end := e.now()
	status := c.status
	var kind, msg string
	if err != nil {
		fe := fault.As(err)
		kind, msg = string(fe.Kind), c.set.redactor.String(fe.Message+invalidFields(fe))
		switch fe.Kind {
		case fault.Timeout:
			status = StatusTimeout
		case fault.Cancelled:
			status = StatusCancelled
		default:
			status = StatusError
		}
	} else if res != nil {
		status = res.Status
		if res.BudgetExceeded {
			kind, msg = string(fault.BudgetExceeded), res.Missing
		} else if res.IsError {
			kind, msg = "tool_error", c.set.redactor.String(toolErrorText(res.CallToolResult))
		} else if res.OutputError != nil {
			kind, msg = ErrorKindOutputInvalid, c.set.redactor.String(res.OutputError.String())
		}
	}
	rec := store.CallRecord{
		ID: c.req.ID, Source: string(c.req.Source), Identity: c.req.Identity,
		Server: c.req.Server, Tool: c.req.Tool,
		Status: string(status), ErrorKind: kind, ErrorMessage: msg,
		StartedAt: c.start, FinishedAt: end, Duration: end.Sub(c.start), Retries: c.retries,
		URLElicitations: c.urlElicitations, Origin: store.CutOrigin(c.req.Origin),
	}
	if c.req.InputRounds != nil {
		rec.InputRounds = c.req.InputRounds()
	}
	rec.Args = c.recordedArgs()
	if res != nil {
		rec.ResultBytes, rec.Truncated, rec.Partial = res.Bytes, res.Truncated, res.Partial
	}
	attrs := []any{logKeyID, c.req.ID, logKeySource, string(c.req.Source), logKeyServer, c.req.Server, logKeyTool, c.req.Tool,
		logKeyStatus, string(status), logKeyDuration, rec.Duration}
	if c.req.Identity != "" {
		attrs = append(attrs, logKeyIdentity, c.req.Identity)
	}
	if c.retries > 0 {
		attrs = append(attrs, logKeyRetries, c.retries)
	}
	if c.urlElicitations > 0 {
		attrs = append(attrs, logKeyURLElicitations, c.urlElicitations)
	}
	if rec.InputRounds > 0 {
		attrs = append(attrs, logKeyInputRounds, rec.InputRounds)
	}
	if kind != "" {
		attrs = append(attrs, logKeyKind, kind)
	}
	e.logger.Info("tool call", attrs...)
	if e.rec != nil {
		// The recorder logs records that are late or lost, with counts;
		// a caller whose record is not durable yet is answered anyway.
		_ = e.rec.Commit(ctx, rec)
	}
}

// recordedArgs is what history keeps of the arguments: their shape, or
// their redacted values when history.record_values is set.
func (c *call) recordedArgs() json.RawMessage {
	var v any
	if c.args != nil {
		v = map[string]any(c.args)
	} else if len(c.req.RawArguments) > 0 {
		if err := json.Unmarshal(c.req.RawArguments, &v); err != nil {
			return json.RawMessage(`"<invalid JSON>"`)
		}
	}
	if v == nil {
		return nil
	}
	if c.set.cfg.History.RecordValues {
		v = c.set.redactor.Value(v)
	} else {
		v = redact.Shape(v)
	}
	b, err := json.Marshal(v)
	if err != nil {
		return nil
	}
	return b
}

func toolErrorText(res *mcp.CallToolResult) string {
	var b strings.Builder
	for _, c := range res.Content {
		if t, ok := c.(*mcp.TextContent); ok {
			b.WriteString(t.Text)
		}
	}
	s := b.String()
	if len(s) > 500 {
		s = cutUTF8(s, 500) + "…"
	}
	return s
}

// invalidFields names the fields of a validation error, as " (a, b)":
// what the history keeps of why the arguments were refused. The names are
// the arguments' keys, which the history keeps anyway; the problems'
// words may quote a value, so they are left out.
func invalidFields(fe *fault.Error) string {
	if fe.Kind != fault.Validation || len(fe.Fields) == 0 {
		return ""
	}
	names := make([]string, 0, len(fe.Fields))
	for _, f := range fe.Fields {
		if !slices.Contains(names, f.Field) {
			names = append(names, f.Field)
		}
	}
	return " (" + strings.Join(names, ", ") + ")"
}
