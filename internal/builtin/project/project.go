// Package project is the built-in project MCP server of seed 003: two tools
// over one code base, general_query (questions about the code, answered
// from an index of its files) and commit_message (a message drafted from a
// diff, a commit or the working tree).
//
// The server indexes the project root in the background as soon as it runs
// (respecting .gitignore files, skipping .git, binary files and files over a
// size limit) and refreshes the index periodically. Retrieval ranks passages
// of files by BM25 with boosts for matching symbol and path names. When an
// LLM is configured ([llm.Client]) the tools compose their answers with it
// within the caller's maxCost and timeout; otherwise they answer from the
// index and the diff alone. Every path a caller names is resolved,
// symbolic links included, and must stay inside the root. Results pass
// through the shared redactor and are capped in size; failures are isError
// tool results carrying a [fault.Error]'s JSON.
package project

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/switchboard-mcp/switchboard/internal/fault"
	"github.com/switchboard-mcp/switchboard/internal/llm"
	"github.com/switchboard-mcp/switchboard/internal/redact"
)

// The tool names.
const (
	ToolGeneralQuery  = "general_query"
	ToolCommitMessage = "commit_message"
)

// Options configures a Server.
type Options struct {
	// Root is the project directory; required.
	Root string
	// LLM composes answers; nil means no LLM (results are retrieved
	// passages and rule-based commit messages).
	LLM *llm.Client
	// Logger receives operational events; nil discards them.
	Logger *slog.Logger
	// Redactor sanitises results; nil redacts the common credential
	// patterns only.
	Redactor *redact.Redactor
	// MaxFileSize is the largest file indexed, in bytes; 0 means
	// DefaultMaxFileSize.
	MaxFileSize int64
	// RescanInterval is how often the index is refreshed; 0 means
	// DefaultRescanInterval and a negative value never refreshes.
	RescanInterval time.Duration
	// Now is the clock; nil means time.Now.
	Now func() time.Time
}

// Server is the project MCP server. Run indexes the project; the MCP
// server from MCP answers tool calls, waiting for the index when needed.
type Server struct {
	root        string
	llm         *llm.Client
	logger      *slog.Logger
	redactor    *redact.Redactor
	maxFileSize int64
	now         func() time.Time
	idx         *index
	mcp         *mcp.Server
	running     atomic.Bool
}

// NewServer returns a project server for opts.Root, whose index is built
// once Run starts.
func NewServer(opts Options) (*Server, error) {
	if opts.Root == "" {
		return nil, fault.New(fault.Config, "creating the project server: no root directory given").
			WithSuggestions("Pass --root DIR, the directory of the project")
	}
	abs, err := filepath.Abs(opts.Root)
	if err != nil {
		return nil, fault.Wrap(fault.Config, err, "creating the project server: resolving root %s", opts.Root)
	}
	root, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return nil, fault.Wrap(fault.Config, err, "creating the project server: root %s cannot be resolved", opts.Root)
	}
	if info, err := os.Stat(root); err != nil || !info.IsDir() {
		return nil, fault.New(fault.Config, "creating the project server: root %s is not a directory", opts.Root)
	}
	s := &Server{
		root:        root,
		llm:         opts.LLM,
		logger:      opts.Logger,
		redactor:    opts.Redactor,
		maxFileSize: opts.MaxFileSize,
		now:         opts.Now,
	}
	if s.logger == nil {
		s.logger = slog.New(slog.DiscardHandler)
	}
	if s.maxFileSize <= 0 {
		s.maxFileSize = DefaultMaxFileSize
	}
	if s.now == nil {
		s.now = time.Now
	}
	interval := opts.RescanInterval
	if interval == 0 {
		interval = DefaultRescanInterval
	}
	s.idx = newIndex(root, s.maxFileSize, interval, s.logger)
	s.mcp = mcp.NewServer(&mcp.Implementation{Name: "switchboard-project", Version: "0.1.0"}, &mcp.ServerOptions{
		Logger: s.logger,
		Instructions: "Answer questions about the project's code with general_query (it returns the relevant files and " +
			"lines); draft commit messages for the project's changes with commit_message.",
	})
	s.mcp.AddTool(&mcp.Tool{
		Name: ToolGeneralQuery,
		Description: "Search the project's code base and answer a question about it. Returns the most relevant " +
			"passages with file, startLine, endLine and the best-matching line (and, when a language model is " +
			"configured, an answer citing file:line). Narrow the search with scope (filePatterns, directories, " +
			"excludePatterns, relative to the project root). metadata.backgroundTaskProgress shows the indexing " +
			"progress; isPartialResult and missing say what a time or cost budget cut short.",
		InputSchema: generalQueryInputSchema,
	}, s.generalQuery)
	s.mcp.AddTool(&mcp.Tool{
		Name: ToolCommitMessage,
		Description: "Draft a commit message for the project's changes: from a supplied diff (sinceDiff), from a " +
			"commit to now (sinceCommit), or else from the working tree against HEAD. Returns the message " +
			"(title, body, footer), the changed files and, with includeImpact, an impact analysis.",
		InputSchema: CommitInputSchema(),
	}, s.commitMessage)
	return s, nil
}

// Root returns the project root, absolute with symbolic links resolved.
func (s *Server) Root() string { return s.root }

// MCP returns the MCP server that serves the tools.
func (s *Server) MCP() *mcp.Server { return s.mcp }

// Progress returns the background indexing progress.
func (s *Server) Progress() TaskProgress { return s.idx.progressNow() }

// Run builds the index and keeps it fresh until ctx is done. It must run
// for queries to see the project; it may be called once. Cancellation is
// not an error.
func (s *Server) Run(ctx context.Context) error {
	if !s.running.CompareAndSwap(false, true) {
		return errors.New("project server: Run called twice")
	}
	return s.idx.run(ctx)
}

// ServeStdio runs s (indexing included) over standard input and output
// until ctx is done or the client disconnects. Cancellation is not an
// error.
func ServeStdio(ctx context.Context, s *Server) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var wg sync.WaitGroup
	var runErr error
	wg.Go(func() { runErr = s.Run(ctx) })
	err := s.mcp.Run(ctx, &mcp.StdioTransport{})
	if errors.Is(err, context.Canceled) || ctx.Err() != nil {
		err = nil
	}
	cancel()
	wg.Wait()
	return errors.Join(err, runErr)
}

// HTTPHandler serves s over stateless streamable HTTP at /mcp. The caller
// runs s.Run alongside.
func HTTPHandler(s *Server) http.Handler {
	mux := http.NewServeMux()
	mux.Handle("/mcp", mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s.mcp },
		&mcp.StreamableHTTPOptions{Stateless: true}))
	return mux
}

// generalQuery is the general_query tool handler.
func (s *Server) generalQuery(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	q, fe := s.validateQuery(req.Params.Arguments)
	if fe != nil {
		return errorResult(fe), nil
	}
	// runQuery redacts what it takes from files and the LLM piece by
	// piece, before rendering: redacting the rendered text as a whole would
	// read a citation such as "auth/token.go:120" as a token assignment.
	resp := s.runQuery(ctx, q, progressNotifier(ctx, req))
	return s.encode(resp), nil
}

// commitMessage is the commit_message tool handler.
func (s *Server) commitMessage(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	raw := req.Params.Arguments
	if len(raw) > MaxArgumentsBytes+commitDiffAllowance {
		return errorResult(fault.New(fault.Validation, "The request is %d bytes; at most %d are allowed", len(raw), MaxArgumentsBytes+commitDiffAllowance).
			WithSuggestions("Send a smaller diff, or use sinceCommit so the server reads the diff itself")), nil
	}
	if len(raw) == 0 || string(raw) == "null" {
		raw = json.RawMessage(`{}`)
	}
	var cr CommitRequest
	if fd := decodeStrict(raw, &cr, ""); fd != nil {
		return errorResult(validationError(ToolCommitMessage, []fault.FieldDetail{*fd})), nil
	}
	if empty := emptyChangeFields(raw); len(empty) > 0 {
		// Report them with every other problem of the request.
		check := cr
		var fields []fault.FieldDetail
		if fe, ok := errors.AsType[*fault.Error](validateCommitRequest(&check)); ok {
			fields = fe.Fields
		}
		return errorResult(validationError(ToolCommitMessage, append(empty, fields...))), nil
	}
	resp, err := CommitMessageFor(ctx, CommitDeps{Root: s.root, LLM: s.llm, Now: s.now}, cr)
	if err != nil {
		return errorResult(fault.As(err)), nil
	}
	if resp.Metadata.BackgroundTaskProgress == nil {
		p := s.idx.progressNow()
		resp.Metadata.BackgroundTaskProgress = &p
	}
	capCommitResponse(resp)
	return s.result(resp), nil
}

// emptyChangeFields reports sinceDiff or sinceCommit given as "". A
// CommitRequest cannot tell an empty value from an absent one, and absent
// means "describe the working tree": an empty value is more likely a
// mistake (a diff that came out empty) than a request for that.
func emptyChangeFields(raw json.RawMessage) []fault.FieldDetail {
	var m map[string]json.RawMessage
	if json.Unmarshal(raw, &m) != nil {
		return nil
	}
	var out []fault.FieldDetail
	for _, field := range []string{"sinceDiff", "sinceCommit"} {
		if v, ok := m[field]; ok && string(bytes.TrimSpace(v)) == `""` {
			out = append(out, fault.FieldDetail{Field: field, Message: "is empty", Received: true,
				Suggestion: "Pass a non-empty " + field + ", or leave it out to describe the working tree against HEAD"})
		}
	}
	return out
}

// commitDiffAllowance is the extra request size commit_message accepts for
// a supplied diff; CommitMessageFor applies its own, finer limits.
const commitDiffAllowance = 4 << 20

// capCommitResponse shortens a commit response that exceeds
// MaxResponseBytes: first the per-file list, then the body; it is then
// marked partial.
func capCommitResponse(resp *CommitResponse) {
	size := func() int {
		data, err := json.Marshal(resp)
		if err != nil {
			return 0
		}
		return len(data)
	}
	if size() <= MaxResponseBytes {
		return
	}
	total := len(resp.ChangedFiles)
	for size() > MaxResponseBytes && len(resp.ChangedFiles) > 1 {
		resp.ChangedFiles = resp.ChangedFiles[:len(resp.ChangedFiles)/2]
	}
	if over := size() - MaxResponseBytes; over > 0 {
		resp.CommitMessage.Body = truncateUTF8(resp.CommitMessage.Body, max(0, len(resp.CommitMessage.Body)-over-64)) + "\n… [truncated]"
	}
	note := fmt.Sprintf("changedFiles: truncated to fit the %d-byte response limit (%d of %d files listed)", MaxResponseBytes, len(resp.ChangedFiles), total)
	resp.Metadata.IsPartialResult = true
	if resp.Metadata.Missing != "" {
		note = resp.Metadata.Missing + "; " + note
	}
	resp.Metadata.Missing = note
}

// result renders v as a tool result: JSON text content and structured
// content, sanitised by the redactor.
func (s *Server) result(v any) *mcp.CallToolResult {
	data, err := json.Marshal(v)
	if err != nil {
		return errorResult(fault.Wrap(fault.Internal, err, "encoding the result"))
	}
	return textResult(s.redactor.JSON(data))
}

// encode renders v, already sanitised, as a tool result.
func (s *Server) encode(v any) *mcp.CallToolResult {
	data, err := json.Marshal(v)
	if err != nil {
		return errorResult(fault.Wrap(fault.Internal, err, "encoding the result"))
	}
	return textResult(data)
}

// textResult is a result with data as JSON text and structured content.
func textResult(data []byte) *mcp.CallToolResult {
	return &mcp.CallToolResult{
		Content:           []mcp.Content{&mcp.TextContent{Text: string(data)}},
		StructuredContent: json.RawMessage(data),
	}
}

// errorResult renders fe as an isError result: its JSON as text and as
// structured content.
func errorResult(fe *fault.Error) *mcp.CallToolResult {
	data, err := json.Marshal(fe)
	if err != nil {
		data = []byte(`{"error_type":"internal_error","message":"the error could not be rendered"}`)
	}
	return &mcp.CallToolResult{
		IsError:           true,
		Content:           []mcp.Content{&mcp.TextContent{Text: string(data)}},
		StructuredContent: json.RawMessage(data),
	}
}
