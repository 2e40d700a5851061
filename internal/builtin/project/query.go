package project

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"path"
	"slices"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/switchboard-mcp/switchboard/internal/fault"
	"github.com/switchboard-mcp/switchboard/internal/llm"
)

// The response formats of general_query.
const (
	FormatConcise  = "Concise"
	FormatDetailed = "Detailed"
	FormatJSON     = "JSON"
	FormatMarkdown = "Markdown"
)

// The query types of general_query.
const (
	QueryNaturalLanguage = "NaturalLanguage"
	QueryStructuredJSON  = "StructuredJSON"
)

// Limits of general_query's input and output.
const (
	MaxArgumentsBytes  = 64 << 10 // the whole arguments object
	MaxQueryLength     = 4000     // bytes of a query text
	maxQueryObject     = 16 << 10 // bytes of a structured query
	maxContextBytes    = 16 << 10 // bytes of the context object
	DefaultTimeout     = 30       // seconds
	MaxTimeout         = 300      // seconds
	DefaultMaxCost     = 0.10     // currency units, when maxCost is absent
	MaxCostLimit       = 100.0    // the largest maxCost accepted
	DefaultMaxResults  = 8
	MaxResults         = 50
	MaxResponseBytes   = 256 << 10 // a rendered result; larger ones are truncated
	maxPromptBytes     = 48 << 10  // passages sent to the LLM
	maxSuggestions     = 5
	zeroBudget         = 1e-12 // maxCost 0: nothing may be spent (free models still answer)
	minIndexWaitMargin = 200 * time.Millisecond
)

// QueryRequest is general_query's request (seed 003's
// DBPGeneralQueryRequest).
type QueryRequest struct {
	// Query is a question (a string) or a structured query (an object with
	// text, keywords, symbols and maxResults).
	Query          json.RawMessage `json:"query"`
	QueryType      string          `json:"queryType,omitempty"`
	Scope          *Scope          `json:"scope,omitempty"`
	ResponseFormat string          `json:"responseFormat,omitempty"`
	Context        json.RawMessage `json:"context,omitempty"`
	Timeout        *int            `json:"timeout,omitempty"` // seconds
	MaxCost        *float64        `json:"maxCost,omitempty"`
}

// StructuredQuery is the object form of a query (queryType StructuredJSON).
type StructuredQuery struct {
	Text       string   `json:"text,omitempty"`
	Keywords   []string `json:"keywords,omitempty"`
	Symbols    []string `json:"symbols,omitempty"`
	MaxResults int      `json:"maxResults,omitempty"`
}

// QueryResponse is general_query's response (seed 003's
// DBPGeneralQueryResponse), plus isPartialResult and missing when a budget
// or the time limit ended the work early, and truncated when the size limit
// cut the results.
type QueryResponse struct {
	// Results is QueryResults for the JSON format, otherwise the results
	// rendered as text in the requested format.
	Results         any           `json:"results"`
	Metadata        QueryMetadata `json:"metadata"`
	Suggestions     []string      `json:"suggestions"`
	IsPartialResult bool          `json:"isPartialResult"`
	Missing         string        `json:"missing,omitempty"`
	Truncated       bool          `json:"truncated,omitempty"`
}

// QueryResults is the structured form of the results.
type QueryResults struct {
	// Answer is the LLM's answer, citing passages as file:line; empty
	// without an LLM or when it could not answer in budget.
	Answer   string    `json:"answer,omitempty"`
	Passages []Passage `json:"passages"`
}

// Passage is one retrieved passage of a file.
type Passage struct {
	File      string   `json:"file"`
	StartLine int      `json:"startLine"`
	EndLine   int      `json:"endLine"`
	Line      int      `json:"line"` // the best-matching line
	Score     float64  `json:"score"`
	Symbols   []string `json:"symbols,omitempty"` // matched definitions
	Snippet   string   `json:"snippet"`
}

// QueryMetadata is seed 003's response metadata.
type QueryMetadata struct {
	ExecutionTimeMs        int64         `json:"executionTimeMs"`
	ModelsUsed             []string      `json:"modelsUsed"`
	FilesProcessed         int           `json:"filesProcessed"`
	Tools                  []ToolUsage   `json:"tools"`
	TotalCost              float64       `json:"totalCost"`
	BackgroundTaskProgress *TaskProgress `json:"backgroundTaskProgress,omitempty"`
}

// ToolUsage describes one internal step of a query.
type ToolUsage struct {
	Name            string `json:"name"`
	ExecutionTimeMs int64  `json:"executionTimeMs"`
	IsPartialResult bool   `json:"isPartialResult"`
	BudgetExceeded  bool   `json:"budgetExceeded"`
}

// The internal steps reported in metadata.tools.
const (
	toolIndex     = "index"
	toolRetrieval = "retrieval"
	toolAnswer    = "answer"
)

// query is a validated QueryRequest.
type query struct {
	text       string
	terms      []string
	format     string
	scope      *scopeFilter
	context    json.RawMessage
	timeout    time.Duration
	maxCost    float64
	maxResults int
}

// generalQueryInputSchema is general_query's input schema.
var generalQueryInputSchema = json.RawMessage(`{
  "type": "object",
  "properties": {
    "query": {
      "description": "The question about the code base, in natural language (a string, at most 4000 bytes), or a structured query object",
      "oneOf": [
        {"type": "string", "minLength": 1, "maxLength": 4000},
        {"type": "object", "properties": {
          "text": {"type": "string", "maxLength": 4000, "description": "Free text to search for"},
          "keywords": {"type": "array", "items": {"type": "string", "maxLength": 200}, "maxItems": 50, "description": "Words that should occur"},
          "symbols": {"type": "array", "items": {"type": "string", "maxLength": 200}, "maxItems": 50, "description": "Function, type or class names"},
          "maxResults": {"type": "integer", "minimum": 1, "maximum": 50, "description": "How many passages to return (default 8)"}
        }, "additionalProperties": false}
      ]
    },
    "queryType": {"type": "string", "enum": ["NaturalLanguage", "StructuredJSON"], "description": "NaturalLanguage for a string query, StructuredJSON for an object; inferred when absent"},
    "scope": {
      "type": "object",
      "description": "Where to look; paths are relative to the project root and must stay inside it",
      "properties": {
        "filePatterns": {"type": "array", "items": {"type": "string", "maxLength": 512}, "maxItems": 100, "description": "Globs of files to search, e.g. *.go or internal/**/*.ts"},
        "directories": {"type": "array", "items": {"type": "string", "maxLength": 512}, "maxItems": 100, "description": "Directories to search, e.g. internal/auth"},
        "excludePatterns": {"type": "array", "items": {"type": "string", "maxLength": 512}, "maxItems": 100, "description": "Globs of files or directories to leave out, e.g. *_test.go or vendor"}
      },
      "additionalProperties": false
    },
    "responseFormat": {"type": "string", "enum": ["Concise", "Detailed", "JSON", "Markdown"], "default": "Markdown", "description": "How to render the results"},
    "context": {"type": "object", "description": "Additional context for the question (passed to the language model, at most 16 KiB)"},
    "timeout": {"type": "integer", "minimum": 1, "maximum": 300, "default": 30, "description": "Maximum execution time in seconds"},
    "maxCost": {"type": "number", "minimum": 0, "maximum": 100, "default": 0.1, "description": "Maximum cost of language model calls; 0 allows none that cost anything"}
  },
  "required": ["query"],
  "additionalProperties": false
}`)

// decodeStrict decodes exactly one JSON value into v, rejecting unknown
// fields, and turns decoding errors into validation field details.
func decodeStrict(raw []byte, v any, prefix string) *fault.FieldDetail {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	err := dec.Decode(v)
	if err == nil {
		if _, err2 := dec.Token(); err2 != io.EOF {
			return &fault.FieldDetail{Field: strings.TrimSuffix(prefix, "."), Message: "must be a single JSON object"}
		}
		return nil
	}
	var te *json.UnmarshalTypeError
	var se *json.SyntaxError
	switch {
	case errors.As(err, &te):
		return &fault.FieldDetail{Field: prefix + te.Field, Message: fmt.Sprintf("must be of type %s, not %s", jsonType(te.Type.Kind().String()), te.Value)}
	case errors.As(err, &se):
		return &fault.FieldDetail{Field: strings.TrimSuffix(prefix, "."), Message: "is not valid JSON: " + se.Error()}
	case strings.HasPrefix(err.Error(), "json: unknown field "):
		name := strings.Trim(strings.TrimPrefix(err.Error(), "json: unknown field "), `"`)
		return &fault.FieldDetail{Field: prefix + name, Message: "is not a known field"}
	}
	return &fault.FieldDetail{Field: strings.TrimSuffix(prefix, "."), Message: err.Error()}
}

// jsonType names a Go kind in JSON terms.
func jsonType(kind string) string {
	switch {
	case strings.HasPrefix(kind, "int"), strings.HasPrefix(kind, "uint"):
		return "integer"
	case strings.HasPrefix(kind, "float"):
		return "number"
	case kind == "slice":
		return "array"
	case kind == "struct", kind == "map", kind == "ptr":
		return "object"
	case kind == "bool":
		return "boolean"
	}
	return kind
}

// validationError collects field problems into one fault.Validation error.
func validationError(tool string, problems []fault.FieldDetail) *fault.Error {
	fe := fault.New(fault.Validation, "Invalid %s request: %d field(s) failed validation", tool, len(problems))
	fe.Fields = problems
	return fe.WithSuggestions("Fix the fields named in details and call the tool again")
}

// validateQuery checks a general_query request (schema, types, sizes,
// scope and budget) and returns what to run.
func (s *Server) validateQuery(raw json.RawMessage) (*query, *fault.Error) {
	if len(raw) > MaxArgumentsBytes {
		return nil, fault.New(fault.Validation, "The request is %d bytes; at most %d are allowed", len(raw), MaxArgumentsBytes).
			WithSuggestions("Shorten the query and the context")
	}
	if len(bytes.TrimSpace(raw)) == 0 || string(bytes.TrimSpace(raw)) == "null" {
		raw = json.RawMessage(`{}`)
	}
	// The scope is decoded on its own so that its errors name scope.x.
	var wire struct {
		Query          json.RawMessage `json:"query"`
		QueryType      string          `json:"queryType"`
		Scope          json.RawMessage `json:"scope"`
		ResponseFormat string          `json:"responseFormat"`
		Context        json.RawMessage `json:"context"`
		Timeout        *int            `json:"timeout"`
		MaxCost        *float64        `json:"maxCost"`
	}
	if fd := decodeStrict(raw, &wire, ""); fd != nil {
		return nil, validationError(ToolGeneralQuery, []fault.FieldDetail{*fd})
	}
	req := QueryRequest{Query: wire.Query, QueryType: wire.QueryType, ResponseFormat: wire.ResponseFormat,
		Context: wire.Context, Timeout: wire.Timeout, MaxCost: wire.MaxCost}
	if sc := bytes.TrimSpace(wire.Scope); len(sc) > 0 && string(sc) != "null" {
		req.Scope = &Scope{}
		if fd := decodeStrict(sc, req.Scope, "scope."); fd != nil {
			return nil, validationError(ToolGeneralQuery, []fault.FieldDetail{*fd})
		}
	}
	var problems []fault.FieldDetail
	bad := func(field, msg, suggestion string) {
		problems = append(problems, fault.FieldDetail{Field: field, Message: msg, Suggestion: suggestion})
	}
	q := &query{format: FormatMarkdown, timeout: DefaultTimeout * time.Second, maxCost: DefaultMaxCost, maxResults: DefaultMaxResults}

	// The query itself.
	trimmed := bytes.TrimSpace(req.Query)
	kind := QueryNaturalLanguage
	switch {
	case len(trimmed) == 0 || string(trimmed) == "null":
		bad("query", "is required", "Ask a question, e.g. \"where is the HTTP server started?\"")
	case trimmed[0] == '"':
		if err := json.Unmarshal(trimmed, &q.text); err != nil {
			bad("query", "is not a valid string", "")
		}
	case trimmed[0] == '{':
		kind = QueryStructuredJSON
		var sq StructuredQuery
		if len(trimmed) > maxQueryObject {
			bad("query", fmt.Sprintf("is %d bytes; at most %d are allowed", len(trimmed), maxQueryObject), "")
		} else if fd := decodeStrict(trimmed, &sq, "query."); fd != nil {
			problems = append(problems, *fd)
		} else {
			q.text = strings.TrimSpace(strings.Join(slices.Concat([]string{sq.Text}, sq.Keywords, sq.Symbols), " "))
			switch {
			case sq.MaxResults < 0 || sq.MaxResults > MaxResults:
				bad("query.maxResults", fmt.Sprintf("must be between 1 and %d", MaxResults), "")
			case sq.MaxResults > 0:
				q.maxResults = sq.MaxResults
			}
			if len(sq.Keywords) > 50 || len(sq.Symbols) > 50 {
				bad("query", "has more than 50 keywords or symbols", "")
			}
		}
	default:
		bad("query", "must be a string or an object", "")
	}
	if q.text == "" && len(problems) == 0 {
		bad("query", "must not be empty", "Ask a question, e.g. \"where is the HTTP server started?\"")
	}
	if len(q.text) > MaxQueryLength {
		bad("query", fmt.Sprintf("is %d bytes long; at most %d are allowed", len(q.text), MaxQueryLength), "Ask a shorter question")
	}
	switch req.QueryType {
	case "", kind:
	case QueryNaturalLanguage, QueryStructuredJSON:
		bad("queryType", fmt.Sprintf("is %s but the query is %s", req.QueryType, map[string]string{
			QueryNaturalLanguage: "an object", QueryStructuredJSON: "a string"}[req.QueryType]),
			"Send a string with NaturalLanguage or an object with StructuredJSON")
	default:
		bad("queryType", fmt.Sprintf("must be NaturalLanguage or StructuredJSON, not %q", req.QueryType), "")
	}

	switch req.ResponseFormat {
	case "":
	case FormatConcise, FormatDetailed, FormatJSON, FormatMarkdown:
		q.format = req.ResponseFormat
	default:
		bad("responseFormat", fmt.Sprintf("must be Concise, Detailed, JSON or Markdown, not %q", req.ResponseFormat), "")
	}

	if c := bytes.TrimSpace(req.Context); len(c) > 0 && string(c) != "null" {
		switch {
		case c[0] != '{':
			bad("context", "must be an object", "")
		case len(c) > maxContextBytes:
			bad("context", fmt.Sprintf("is %d bytes; at most %d are allowed", len(c), maxContextBytes), "")
		default:
			q.context = json.RawMessage(c)
		}
	}

	if req.Timeout != nil {
		if *req.Timeout < 1 || *req.Timeout > MaxTimeout {
			bad("timeout", fmt.Sprintf("must be between 1 and %d seconds, not %d", MaxTimeout, *req.Timeout), "")
		} else {
			q.timeout = time.Duration(*req.Timeout) * time.Second
		}
	}
	if req.MaxCost != nil {
		c := *req.MaxCost
		if c < 0 || c > MaxCostLimit || math.IsNaN(c) {
			bad("maxCost", fmt.Sprintf("must be between 0 and %g, not %g", MaxCostLimit, c), "")
		} else {
			q.maxCost = c
		}
	}

	if req.Scope != nil {
		f, ps := validateScope(s.root, *req.Scope)
		problems = append(problems, ps...)
		if !f.empty() {
			q.scope = f
		}
	}
	if len(problems) > 0 {
		return nil, validationError(ToolGeneralQuery, problems)
	}
	q.terms = queryTerms(q.text)
	if len(q.terms) == 0 {
		return nil, validationError(ToolGeneralQuery, []fault.FieldDetail{{Field: "query",
			Message: "has no searchable words", ReceivedValue: q.text, Received: true,
			Suggestion: "Name the functions, types, files or concepts you are looking for"}})
	}
	return q, nil
}

// runQuery executes a validated query. It never fails: a budget or the time
// limit ends the work with what it has.
func (s *Server) runQuery(ctx context.Context, q *query, notify func(TaskProgress)) *QueryResponse {
	start := time.Now()
	ctx, cancel := context.WithTimeout(ctx, q.timeout)
	defer cancel()
	resp := &QueryResponse{Metadata: QueryMetadata{ModelsUsed: []string{}, Tools: []ToolUsage{}}, Suggestions: []string{}}
	var missing []string

	// Wait for the index, leaving part of the time for the rest.
	t0 := time.Now()
	margin := max(q.timeout/5, minIndexWaitMargin)
	s.waitIndex(ctx, q.timeout-margin, notify)
	snap, complete := s.idx.current()
	resp.Metadata.Tools = append(resp.Metadata.Tools, ToolUsage{Name: toolIndex, ExecutionTimeMs: msSince(t0), IsPartialResult: !complete})
	if !complete {
		switch p := s.idx.progressNow(); p.Status {
		case StatusError:
			missing = append(missing, fmt.Sprintf("index: indexing failed after %d files (%s)", len(snap.files), p.CurrentActivity))
		default:
			missing = append(missing, fmt.Sprintf("index: only %d of %d files were indexed when the time budget ran out; ask again later for complete results", len(snap.files), max(p.TotalFiles, len(snap.files))))
		}
	}

	// Retrieve.
	t1 := time.Now()
	var allow func(string) bool
	if q.scope != nil {
		allow = q.scope.allow
	}
	hits, inScope := snap.search(q.terms, allow, q.maxResults)
	passages := s.passages(hits, q.terms)
	resp.Metadata.FilesProcessed = inScope
	resp.Metadata.Tools = append(resp.Metadata.Tools, ToolUsage{Name: toolRetrieval, ExecutionTimeMs: msSince(t1)})
	results := QueryResults{Passages: passages}

	// Answer, with an LLM.
	if s.llm != nil && len(passages) > 0 {
		t2 := time.Now()
		use := ToolUsage{Name: toolAnswer}
		answer, c, err := s.answer(ctx, q, passages)
		use.ExecutionTimeMs = msSince(t2)
		if err == nil || fault.KindOf(err) != fault.BudgetExceeded { // a request was made
			resp.Metadata.ModelsUsed = append(resp.Metadata.ModelsUsed, cmpOr(c.Model, s.llm.Model()))
		}
		resp.Metadata.TotalCost += c.Cost
		switch {
		case err == nil && c.Truncated:
			results.Answer = s.redactor.String(answer)
			use.IsPartialResult, use.BudgetExceeded = true, true
			missing = append(missing, "answer: the language model's answer was cut short to stay within maxCost")
		case err == nil:
			results.Answer = s.redactor.String(answer)
		case fault.KindOf(err) == fault.BudgetExceeded:
			use.IsPartialResult, use.BudgetExceeded = true, true
			missing = append(missing, fmt.Sprintf("answer: composing an answer would exceed maxCost (%g); the passages are returned instead", q.maxCost))
		case ctx.Err() != nil || fault.KindOf(err) == fault.Timeout:
			use.IsPartialResult = true
			missing = append(missing, fmt.Sprintf("answer: the time budget of %s ran out before the language model answered; the passages are returned instead", q.timeout))
		default:
			use.IsPartialResult = true
			s.logger.Warn("composing an answer failed", logKeyErr, err)
			missing = append(missing, "answer: the language model failed ("+fault.As(err).Message+"); the passages are returned instead")
		}
		resp.Metadata.Tools = append(resp.Metadata.Tools, use)
	}

	resp.Suggestions = redactAll(s, suggestions(hits, q.terms))
	progress := s.idx.progressNow()
	progress.CurrentActivity = s.redactor.String(progress.CurrentActivity)
	resp.Metadata.BackgroundTaskProgress = &progress
	resp.IsPartialResult = len(missing) > 0
	resp.Missing = s.redactor.String(strings.Join(missing, "; "))
	s.render(resp, q.format, results)
	resp.Metadata.ExecutionTimeMs = msSince(start)
	return resp
}

// waitIndex waits up to wait (and ctx) for the first index build to end,
// reporting progress through notify while it waits.
func (s *Server) waitIndex(ctx context.Context, wait time.Duration, notify func(TaskProgress)) {
	select {
	case <-s.idx.ready:
		return
	default:
	}
	ctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	var last TaskProgress
	for {
		if p := s.idx.progressNow(); p != last && notify != nil {
			last = p
			notify(p)
		}
		select {
		case <-s.idx.ready:
			return
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

// redactAll returns ss with secrets removed from each string.
func redactAll(s *Server, ss []string) []string {
	out := make([]string, len(ss))
	for i, x := range ss {
		out[i] = s.redactor.String(x)
	}
	return out
}

// passages reads the snippets of hits from disk, with secrets removed
// (before they reach the LLM too).
func (s *Server) passages(hits []hit, terms []string) []Passage {
	out := make([]Passage, 0, len(hits))
	for _, h := range hits {
		data, err := readInside(s.root, h.file.path, s.maxFileSize)
		if err != nil || !isLikelyText(data) {
			continue // gone or replaced since it was indexed
		}
		lines := splitLines(data)
		if h.passage.start > len(lines) {
			continue
		}
		end := min(h.passage.end, len(lines))
		out = append(out, Passage{
			File:      s.redactor.String(h.file.path),
			StartLine: h.passage.start,
			EndLine:   end,
			Line:      bestLine(h, lines, terms),
			Score:     math.Round(h.score*1000) / 1000,
			Symbols:   redactAll(s, h.symbols),
			Snippet:   s.redactor.String(strings.Join(lines[h.passage.start-1:end], "\n")),
		})
	}
	return out
}

// answer asks the LLM to answer q from passages within the query's budget.
func (s *Server) answer(ctx context.Context, q *query, passages []Passage) (string, llm.Completion, error) {
	var b strings.Builder
	fmt.Fprintf(&b, "Question: %s\n", q.text)
	if len(q.context) > 0 {
		fmt.Fprintf(&b, "\nAdditional context (JSON): %s\n", q.context)
	}
	b.WriteString("\nPassages from the code base:\n")
	for _, p := range passages {
		block := fmt.Sprintf("\n--- %s:%d-%d ---\n%s\n", p.File, p.StartLine, p.EndLine, numbered(p.Snippet, p.StartLine))
		if b.Len()+len(block) > maxPromptBytes {
			break
		}
		b.WriteString(block)
	}
	msgs := []llm.Message{
		{Role: "system", Content: "You answer questions about a software project using only the passages given. " +
			"Cite every claim as file:line (for example internal/server/http.go:42). " +
			"If the passages do not contain the answer, say so plainly. Be brief and exact."},
		{Role: "user", Content: b.String()},
	}
	budget := q.maxCost
	if budget == 0 {
		budget = zeroBudget
	}
	c, err := s.llm.Complete(ctx, msgs, budget)
	if err != nil {
		return "", c, err
	}
	return strings.TrimSpace(c.Text), c, nil
}

// numbered prefixes each line of snippet with its line number.
func numbered(snippet string, first int) string {
	lines := strings.Split(snippet, "\n")
	for i, l := range lines {
		lines[i] = fmt.Sprintf("%d: %s", first+i, l)
	}
	return strings.Join(lines, "\n")
}

// suggestions proposes related queries: the symbols defined near the top
// hits that the query did not name, and their directories.
func suggestions(hits []hit, terms []string) []string {
	out := []string{}
	add := func(s string) {
		if len(out) < maxSuggestions && !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	for _, h := range hits {
		for _, sym := range h.file.symbols {
			if sym.line < h.passage.start || sym.line > h.passage.end || slices.Contains(terms, strings.ToLower(sym.name)) {
				continue
			}
			add(fmt.Sprintf("Where is %s used?", sym.name))
			break
		}
	}
	for _, h := range hits {
		if dir := path.Dir(h.file.path); dir != "." {
			add(fmt.Sprintf("What does the %s directory do?", dir))
		}
	}
	return out
}

// render sets resp.Results in format. A response over MaxResponseBytes
// keeps the most passages (best first) that fit, found by bisection; if even
// one does not fit, its text and the answer are cut.
func (s *Server) render(resp *QueryResponse, format string, results QueryResults) {
	total := len(results.Passages)
	set := func(r QueryResults) int {
		if format == FormatJSON {
			resp.Results = r
		} else {
			resp.Results = renderText(format, r)
		}
		data, err := json.Marshal(resp)
		if err != nil {
			return 0
		}
		return len(data)
	}
	// Leave room for the note about the truncation.
	limit := MaxResponseBytes - 256
	if set(results) <= MaxResponseBytes {
		return
	}
	resp.Truncated = true
	lo, hi := 0, total // lo passages fit (0 trivially), hi+1 do not
	for lo < hi {
		mid := (lo + hi + 1) / 2
		if set(QueryResults{Answer: results.Answer, Passages: results.Passages[:mid]}) <= limit {
			lo = mid
		} else {
			hi = mid - 1
		}
	}
	kept := QueryResults{Answer: results.Answer, Passages: slices.Clone(results.Passages[:lo])}
	if lo == 0 && total > 0 {
		kept.Passages = []Passage{results.Passages[0]}
	}
	if over := set(kept) - limit; over > 0 {
		// One passage (or the answer alone) is still too big: cut the texts.
		cut := func(s string) string {
			if over <= 0 || s == "" {
				return s
			}
			n := max(0, len(s)-over-32)
			over -= len(s) - n
			return truncateUTF8(s, n) + "\n… [truncated]"
		}
		kept.Answer = cut(kept.Answer)
		if len(kept.Passages) == 1 {
			kept.Passages[0].Snippet = cut(kept.Passages[0].Snippet)
		}
		if over > 0 {
			kept.Passages = nil
		}
	}
	note := fmt.Sprintf("results: truncated to fit the %d-byte response limit (%d of %d passages kept)", MaxResponseBytes, len(kept.Passages), total)
	resp.IsPartialResult = true
	resp.Missing = strings.TrimPrefix(resp.Missing+"; "+note, "; ")
	set(kept)
}

// truncateUTF8 cuts s to at most n bytes without splitting a character.
func truncateUTF8(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && n < len(s) && s[n]&0xC0 == 0x80 {
		n--
	}
	return s[:n]
}

// renderText renders results as Concise, Detailed or Markdown text.
func renderText(format string, r QueryResults) string {
	var b strings.Builder
	switch format {
	case FormatConcise:
		if r.Answer != "" {
			b.WriteString(r.Answer)
			b.WriteString("\n\nSources:")
			for _, p := range r.Passages {
				fmt.Fprintf(&b, " %s:%d", p.File, p.Line)
			}
			b.WriteString("\n")
			break
		}
		if len(r.Passages) == 0 {
			b.WriteString("No matching code found.\n")
		}
		for _, p := range r.Passages {
			fmt.Fprintf(&b, "%s:%d  %s\n", p.File, p.Line, strings.TrimSpace(lineOf(p, p.Line)))
		}
	case FormatDetailed:
		if r.Answer != "" {
			fmt.Fprintf(&b, "Answer:\n%s\n\n", r.Answer)
		}
		if len(r.Passages) == 0 {
			b.WriteString("No matching code found.\n")
		}
		for i, p := range r.Passages {
			fmt.Fprintf(&b, "[%d] %s:%d (lines %d-%d, score %.3f", i+1, p.File, p.Line, p.StartLine, p.EndLine, p.Score)
			if len(p.Symbols) > 0 {
				fmt.Fprintf(&b, ", defines %s", strings.Join(p.Symbols, ", "))
			}
			fmt.Fprintf(&b, ")\n%s\n\n", numbered(p.Snippet, p.StartLine))
		}
	default: // Markdown
		if r.Answer != "" {
			fmt.Fprintf(&b, "## Answer\n\n%s\n\n## Sources\n\n", r.Answer)
		}
		if len(r.Passages) == 0 {
			b.WriteString("No matching code found.\n")
		}
		for _, p := range r.Passages {
			fence := "```"
			for strings.Contains(p.Snippet, fence) {
				fence += "`"
			}
			fmt.Fprintf(&b, "### %s:%d (lines %d-%d)\n\n%s%s\n%s\n%s\n\n", p.File, p.Line, p.StartLine, p.EndLine,
				fence, strings.TrimPrefix(path.Ext(p.File), "."), p.Snippet, fence)
		}
	}
	return strings.TrimRight(b.String(), "\n") + "\n"
}

// lineOf returns line n of a passage's snippet.
func lineOf(p Passage, n int) string {
	lines := strings.Split(p.Snippet, "\n")
	if i := n - p.StartLine; i >= 0 && i < len(lines) {
		return lines[i]
	}
	return ""
}

func msSince(t time.Time) int64 { return time.Since(t).Milliseconds() }

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// progressNotifier returns a notify function that sends MCP progress
// notifications for the index to the caller of req, or nil when the caller
// asked for none.
func progressNotifier(ctx context.Context, req *mcp.CallToolRequest) func(TaskProgress) {
	if req == nil || req.Session == nil || req.Params == nil {
		return nil
	}
	token := req.Params.GetProgressToken()
	if token == nil {
		return nil
	}
	var n float64
	return func(p TaskProgress) {
		// Progress must increase with every notification.
		n = max(n+0.001, float64(p.ProcessedFiles))
		_ = req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{
			ProgressToken: token,
			Progress:      n,
			Total:         float64(max(p.TotalFiles, p.ProcessedFiles)),
			Message:       fmt.Sprintf("%s (%d%%): %s", p.Status, p.PercentComplete, p.CurrentActivity),
		})
	}
}
