package project

import (
	"context"
	"errors"
	"fmt"
	"math"
	"regexp"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/switchboard-mcp/switchboard/internal/fault"
	"github.com/switchboard-mcp/switchboard/internal/llm"
	"github.com/switchboard-mcp/switchboard/internal/redact"
)

// The commit message formats.
const (
	CommitConventional = "Conventional"
	CommitDetailed     = "Detailed"
	CommitSummary      = "Summary"
)

// Limits and defaults of commit_message's input.
const (
	// MaxSinceDiffChars bounds sinceDiff, in characters.
	MaxSinceDiffChars = 1 << 20
	// maxSinceCommitChars bounds sinceCommit.
	maxSinceCommitChars = 200
	// maxScopeChars bounds scope.
	maxScopeChars = 50
	// MinCommitLength and MaxCommitLength bound maxLength;
	// DefaultCommitLength applies when it is 0.
	MinCommitLength     = 20
	MaxCommitLength     = 20000
	DefaultCommitLength = 4000
	// maxTitleChars is the longest title, whatever maxLength says.
	maxTitleChars = 72
	// bodyWidth is the column the body is wrapped at.
	bodyWidth = 72
	// MaxCommitCost bounds maxCost; DefaultCommitCost applies when it is 0.
	MaxCommitCost     = 100.0
	DefaultCommitCost = 0.10
	// maxChangedFiles bounds changedFiles in the response.
	maxChangedFiles = 1000
	// maxPromptDiffChars bounds the diff hunks put in an LLM prompt.
	maxPromptDiffChars = 24000
)

// scopeRE is what a commit scope may be.
var scopeRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._/-]*$`) })

// CommitRequest is seed 003's commit_message request.
type CommitRequest struct {
	SinceDiff     string  `json:"sinceDiff,omitempty"`
	SinceCommit   string  `json:"sinceCommit,omitempty"`
	IncludeImpact bool    `json:"includeImpact,omitempty"`
	Format        string  `json:"format,omitempty"` // Conventional (default) | Detailed | Summary
	Scope         string  `json:"scope,omitempty"`
	MaxLength     int     `json:"maxLength,omitempty"`
	MaxCost       float64 `json:"maxCost,omitempty"`
}

// CommitResponse is seed 003's commit_message response.
type CommitResponse struct {
	CommitMessage  CommitMessage   `json:"commitMessage"`
	ImpactAnalysis *ImpactAnalysis `json:"impactAnalysis,omitempty"`
	ChangedFiles   []ChangedFile   `json:"changedFiles"`
	Metadata       CommitMetadata  `json:"metadata"`
}

// CommitMessage is a generated commit message.
type CommitMessage struct {
	Title  string `json:"title"`
	Body   string `json:"body"`
	Footer string `json:"footer"`
}

// String renders the message as git expects it: title, blank line, body,
// blank line, footer.
func (m CommitMessage) String() string {
	parts := []string{m.Title}
	if m.Body != "" {
		parts = append(parts, m.Body)
	}
	if m.Footer != "" {
		parts = append(parts, m.Footer)
	}
	return strings.Join(parts, "\n\n")
}

// ChangedFile is one entry of seed 003's changedFiles.
type ChangedFile struct {
	Path       string `json:"path"`
	ChangeType string `json:"changeType"` // Added, Modified, Deleted or Renamed
	Summary    string `json:"summary"`
}

// CommitMetadata is seed 003's commit_message metadata.
type CommitMetadata struct {
	ExecutionTimeMs int64    `json:"executionTimeMs"`
	ModelsUsed      []string `json:"modelsUsed"`
	TotalCost       float64  `json:"totalCost"`
	IsPartialResult bool     `json:"isPartialResult"`
	// Missing says what a partial result lacks.
	Missing                string        `json:"missing,omitempty"`
	BackgroundTaskProgress *TaskProgress `json:"backgroundTaskProgress,omitempty"`
}

// CommitDeps is what CommitMessageFor works with.
type CommitDeps struct {
	Root string      // the project root; git runs here
	LLM  *llm.Client // nil: no LLM, rule-based messages only
	Now  func() time.Time
}

// CommitMessageFor builds the response. Input errors are *fault.Error
// (validation, with the field); a budget/timeout end gives IsPartialResult
// with Missing.
func CommitMessageFor(ctx context.Context, deps CommitDeps, req CommitRequest) (*CommitResponse, error) {
	now := deps.Now
	if now == nil {
		now = time.Now
	}
	start := now()
	if err := validateCommitRequest(&req); err != nil {
		return nil, err
	}
	cs, err := changesFor(ctx, deps.Root, req)
	if err != nil {
		return nil, err
	}
	if len(cs.Files) == 0 {
		return nil, emptyChangeError(req)
	}
	a := analyse(cs, req.Scope)
	resp := &CommitResponse{
		ChangedFiles: changedFiles(a),
		Metadata:     CommitMetadata{ModelsUsed: []string{}},
	}
	var impact *ImpactAnalysis
	if req.IncludeImpact {
		impact = impactOf(a)
		resp.ImpactAnalysis = impact
	}
	resp.CommitMessage = ruleMessage(a, req.Format, impact).fit(req.MaxLength)
	if deps.LLM != nil {
		draftWithLLM(ctx, deps.LLM, a, req, impact, resp)
	}
	resp.Metadata.ExecutionTimeMs = now().Sub(start).Milliseconds()
	return resp, nil
}

// validateCommitRequest checks every field, collecting every problem, and
// applies the defaults.
func validateCommitRequest(req *CommitRequest) error {
	var fields []fault.FieldDetail
	bad := func(field, msg, received, suggestion string) {
		fields = append(fields, fault.FieldDetail{Field: field, Message: msg, ReceivedValue: received, Suggestion: suggestion, Received: true})
	}
	if n := utf8.RuneCountInString(req.SinceDiff); n > MaxSinceDiffChars {
		bad("sinceDiff", fmt.Sprintf("The diff is %d characters; the limit is %d", n, MaxSinceDiffChars), "",
			"Pass a smaller diff, or use sinceCommit to let the server read it")
	}
	if req.SinceCommit != "" {
		switch {
		case utf8.RuneCountInString(req.SinceCommit) > maxSinceCommitChars:
			bad("sinceCommit", fmt.Sprintf("A commit reference is at most %d characters", maxSinceCommitChars), clipInput(req.SinceCommit, 40),
				"Pass a commit hash such as 3f2a9c1 or a ref such as HEAD~2")
		case !refRE().MatchString(req.SinceCommit):
			bad("sinceCommit", "Not a commit hash or a safe ref name", clipInput(req.SinceCommit, 80),
				"Pass a commit hash (4 to 40 hex digits) or a ref such as main, v1.2.0 or HEAD~2")
		}
	}
	if req.SinceDiff != "" && req.SinceCommit != "" {
		bad("sinceCommit", "sinceDiff and sinceCommit cannot both be given", clipInput(req.SinceCommit, 80),
			"Pass either the diff text or the commit to start from")
	}
	switch req.Format {
	case "":
		req.Format = CommitConventional
	case CommitConventional, CommitDetailed, CommitSummary:
	default:
		bad("format", "Unknown format", clipInput(req.Format, 40), "Use one of: Conventional, Detailed, Summary")
	}
	if req.Scope != "" {
		if utf8.RuneCountInString(req.Scope) > maxScopeChars || !scopeRE().MatchString(req.Scope) {
			bad("scope", fmt.Sprintf("A scope is 1-%d letters, digits, '.', '_', '/' or '-', starting with a letter or digit", maxScopeChars),
				clipInput(req.Scope, 60), "Use a short area name such as api or parser")
		}
	}
	switch {
	case req.MaxLength == 0:
		req.MaxLength = DefaultCommitLength
	case req.MaxLength < MinCommitLength || req.MaxLength > MaxCommitLength:
		bad("maxLength", fmt.Sprintf("maxLength must be between %d and %d characters", MinCommitLength, MaxCommitLength),
			fmt.Sprint(req.MaxLength), fmt.Sprintf("Use a value such as 72 for a title only, or %d", DefaultCommitLength))
	}
	switch {
	case math.IsNaN(req.MaxCost) || math.IsInf(req.MaxCost, 0) || req.MaxCost < 0 || req.MaxCost > MaxCommitCost:
		bad("maxCost", fmt.Sprintf("maxCost must be between 0 and %g", MaxCommitCost), fmt.Sprint(req.MaxCost),
			fmt.Sprintf("Use 0 for the default budget (%g)", DefaultCommitCost))
	case req.MaxCost == 0:
		req.MaxCost = DefaultCommitCost
	}
	if len(fields) == 0 {
		return nil
	}
	return &fault.Error{Kind: fault.Validation, Message: "Commit message generation failed due to invalid input", Fields: fields}
}

// clipInput returns at most n characters of s, marked when cut.
func clipInput(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n]) + "…"
}

// changesFor reads the change set the request names.
func changesFor(ctx context.Context, root string, req CommitRequest) (*changeSet, error) {
	if req.SinceDiff != "" {
		return &changeSet{Files: parseUnifiedDiff([]byte(req.SinceDiff)), Source: "supplied diff"}, nil
	}
	if root == "" {
		return nil, fault.New(fault.Config, "The project server has no root directory to read changes from").
			WithSuggestions("Pass the change as sinceDiff")
	}
	g := gitRunner{dir: root}
	ok, err := g.isRepository(ctx)
	if err != nil {
		return nil, err
	}
	if !ok {
		field := "sinceDiff"
		if req.SinceCommit != "" {
			field = "sinceCommit"
		}
		return nil, &fault.Error{Kind: fault.Validation, Message: "The project root is not a git repository",
			Fields: []fault.FieldDetail{{Field: field, Message: "Without git history, changes can only be read from sinceDiff",
				Suggestion: "Pass the output of a diff as sinceDiff"}}}
	}
	if req.SinceCommit == "" {
		return g.workingTreeChanges(ctx, "")
	}
	hash, err := g.resolveCommit(ctx, req.SinceCommit)
	if err != nil {
		return nil, err
	}
	if hash == "" {
		return nil, &fault.Error{Kind: fault.Validation, Message: fmt.Sprintf("No commit %q in this repository", req.SinceCommit),
			Fields: []fault.FieldDetail{{Field: "sinceCommit", Message: "No such commit", ReceivedValue: req.SinceCommit,
				Suggestion: "Pass a hash from git log, or a branch or tag that exists"}}}
	}
	cs, err := g.workingTreeChanges(ctx, hash)
	if err != nil {
		return nil, err
	}
	cs.Source = "changes since " + req.SinceCommit + " (" + hash[:min(12, len(hash))] + ") up to the working tree"
	return cs, nil
}

// emptyChangeError says that there is nothing to describe.
func emptyChangeError(req CommitRequest) error {
	switch {
	case req.SinceDiff != "":
		return &fault.Error{Kind: fault.Validation, Message: "The supplied diff changes no files",
			Fields: []fault.FieldDetail{{Field: "sinceDiff", Message: "No file changes found in the diff",
				Suggestion: "Pass unified diff text, such as the output of git diff"}}}
	case req.SinceCommit != "":
		return &fault.Error{Kind: fault.Validation, Message: fmt.Sprintf("Nothing changed since %s", req.SinceCommit),
			Fields: []fault.FieldDetail{{Field: "sinceCommit", Message: "The working tree matches this commit",
				ReceivedValue: req.SinceCommit, Suggestion: "Pass an older commit"}}}
	}
	return fault.New(fault.Validation, "Nothing to commit: the working tree matches HEAD and there are no untracked files").
		WithSuggestions("Make changes first, or pass sinceCommit or sinceDiff to describe earlier work")
}

// changedFiles lists the files for the response.
func changedFiles(a *analysis) []ChangedFile {
	out := make([]ChangedFile, 0, min(len(a.Files), maxChangedFiles))
	for i, f := range a.Files {
		if i == maxChangedFiles-1 && len(a.Files) > maxChangedFiles {
			out = append(out, ChangedFile{Path: "…", ChangeType: ChangeModified,
				Summary: fmt.Sprintf("%d more files not listed", len(a.Files)-i)})
			break
		}
		out = append(out, ChangedFile{Path: f.Path(), ChangeType: f.Change, Summary: f.Summary})
	}
	return out
}

// draftMessage is a message before it is fitted to maxLength. Body lines
// are whole units (a bullet, a paragraph) that fit drops from the end.
type draftMessage struct {
	Title  string
	Body   []string
	Footer string
}

// fit renders m within maxLength characters in all: the title at most 72
// (and maxLength) characters, the footer kept before the body, and the
// body cut at a unit with an indicator of what was left out.
func (m draftMessage) fit(maxLength int) CommitMessage {
	title := commitShortenWords(commitOneLine(m.Title), min(maxTitleChars, maxLength))
	left := maxLength - commitChars(title)
	footer := ""
	if m.Footer != "" && left > 2+10 {
		footer = commitShortenWords(m.Footer, left-2)
		left -= 2 + commitChars(footer)
	}
	var body []string
	used := 0
	if left > 2 {
		budget := left - 2 // the blank line between title and body
		for i, unit := range m.Body {
			cost := commitChars(unit)
			if len(body) > 0 {
				cost++ // newline
			}
			if used+cost <= budget {
				body = append(body, unit)
				used += cost
				continue
			}
			// Say what was left out, if that fits; otherwise cut this unit.
			indicator := fmt.Sprintf("[… %d more lines not shown]", len(m.Body)-i)
			for len(body) > 0 && used+1+commitChars(indicator) > budget {
				used -= commitChars(body[len(body)-1])
				if len(body) > 1 {
					used--
				}
				body = body[:len(body)-1]
				indicator = fmt.Sprintf("[… %d more lines not shown]", len(m.Body)-len(body))
			}
			sep := 0
			if len(body) > 0 {
				sep = 1
			}
			if used+sep+commitChars(indicator) <= budget {
				body = append(body, indicator)
			} else if room := budget - used - sep; room > 3 {
				body = append(body, commitShortenWords(unit, room))
			}
			break
		}
	}
	return CommitMessage{Title: title, Body: strings.Join(body, "\n"), Footer: footer}
}

// commitChars counts characters.
func commitChars(s string) int { return utf8.RuneCountInString(s) }

// commitOneLine joins s's lines with spaces.
func commitOneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// commitShortenWords cuts s to at most n characters at a word boundary, ending
// in "…" when cut.
func commitShortenWords(s string, n int) string {
	if commitChars(s) <= n {
		return s
	}
	if n <= 1 {
		return string([]rune(s)[:max(n, 0)])
	}
	r := []rune(s)[:n-1]
	cut := string(r)
	if i := strings.LastIndexAny(cut, " \n"); i > len(cut)/2 {
		cut = cut[:i]
	}
	return strings.TrimRight(cut, " \n,;:") + "…"
}

// commitWrap wraps s at width columns, indenting continuation lines.
func commitWrap(s string, width int, indent string) []string {
	words := strings.Fields(s)
	var lines []string
	var cur strings.Builder
	for _, w := range words {
		switch {
		case cur.Len() == 0:
			if len(lines) > 0 {
				cur.WriteString(indent)
			}
			cur.WriteString(w)
		case commitChars(cur.String())+1+commitChars(w) > width:
			lines = append(lines, cur.String())
			cur.Reset()
			cur.WriteString(indent)
			cur.WriteString(w)
		default:
			cur.WriteByte(' ')
			cur.WriteString(w)
		}
	}
	if cur.Len() > 0 {
		lines = append(lines, cur.String())
	}
	return lines
}

// commitSubject is the rule-based description of the change, lower case, no
// full stop, e.g. "add func Foo" or "update 3 files".
func commitSubject(a *analysis) string {
	count := map[string]int{}
	for _, f := range a.Files {
		count[f.Change]++
	}
	n := len(a.Files)
	describe := func() string {
		names := make([]string, 0, 3)
		for _, f := range a.Files {
			names = append(names, commitPathBase(f.Path()))
			if len(names) == 3 {
				break
			}
		}
		if n <= 3 {
			return strings.Join(names, ", ")
		}
		return fmt.Sprintf("%d files", n)
	}
	switch {
	case a.Type == "style":
		return "format " + describe()
	case len(a.RemovedSymbols) == 1 && len(a.AddedSymbols) == 1:
		return fmt.Sprintf("replace %s with %s", symbolNames(a.RemovedSymbols), symbolNames(a.AddedSymbols))
	case len(a.RemovedSymbols) > 0 && len(a.AddedSymbols) == 0:
		return "remove " + symbolNames(a.RemovedSymbols)
	case len(a.AddedSymbols) > 0:
		return "add " + symbolNames(a.AddedSymbols)
	case count[ChangeAdded] == n:
		return "add " + describe()
	case count[ChangeDeleted] == n:
		return "remove " + describe()
	case count[ChangeRenamed] == n && n == 1:
		return fmt.Sprintf("rename %s to %s", a.Files[0].OldPath, a.Files[0].NewPath)
	case count[ChangeRenamed] == n:
		return fmt.Sprintf("move %d files", n)
	}
	return "update " + describe()
}

// symbolNames lists symbol names without their kinds: "Foo, Bar and 2 more".
func symbolNames(symbols []string) string {
	names := make([]string, len(symbols))
	for i, s := range symbols {
		_, name, _ := strings.Cut(s, " ")
		names[i] = name
	}
	return joinNames(names, 3)
}

// commitPathBase is the last element of a slash path.
func commitPathBase(p string) string {
	if i := strings.LastIndexByte(p, '/'); i >= 0 {
		return p[i+1:]
	}
	return p
}

// breakingFooter is the footer for removed exported symbols, or "".
func breakingFooter(a *analysis) string {
	if len(a.RemovedSymbols) == 0 {
		return ""
	}
	return "BREAKING CHANGE: removes exported " + joinNames(a.RemovedSymbols, 5)
}

// conventionalPrefix is "type(scope)!: " for a.
func conventionalPrefix(a *analysis) string {
	p := a.Type
	if a.Scope != "" {
		p += "(" + a.Scope + ")"
	}
	if len(a.RemovedSymbols) > 0 {
		p += "!"
	}
	return p + ": "
}

// ruleMessage writes the message without an LLM.
func ruleMessage(a *analysis, format string, impact *ImpactAnalysis) draftMessage {
	subj := commitSubject(a)
	stats := fmt.Sprintf("%d %s changed, +%d -%d lines.", len(a.Files), commitPlural(len(a.Files), "file", "files"), a.Added, a.Removed)
	var m draftMessage
	switch format {
	case CommitSummary:
		m.Title = commitCapitalise(subj)
		m.Footer = breakingFooter(a)
	case CommitDetailed:
		m.Title = commitCapitalise(subj)
		m.Body = append(m.Body, commitWrap(stats, bodyWidth, "")...)
		for _, change := range []string{ChangeAdded, ChangeModified, ChangeDeleted, ChangeRenamed} {
			var section []string
			for _, f := range a.Files {
				if f.Change == change {
					section = append(section, commitWrap("- "+f.Path()+": "+f.Summary, bodyWidth, "  ")...)
				}
			}
			if len(section) > 0 {
				m.Body = append(m.Body, "", change+":")
				m.Body = append(m.Body, section...)
			}
		}
		if impact != nil {
			m.Body = append(m.Body, "")
			m.Body = append(m.Body, commitWrap(fmt.Sprintf("Impact: %s; affects %s.", impact.Severity, strings.Join(impact.AffectedAreas, ", ")), bodyWidth, "")...)
			for _, fo := range impact.SuggestedReviewFocus {
				m.Body = append(m.Body, commitWrap("- Review: "+fo, bodyWidth, "  ")...)
			}
		}
		m.Footer = breakingFooter(a)
	default: // Conventional
		m.Title = conventionalPrefix(a) + subj
		for _, f := range a.Files {
			m.Body = append(m.Body, commitWrap(fmt.Sprintf("- %s %s: %s", strings.ToLower(f.Change), f.Path(), f.Summary), bodyWidth, "  ")...)
		}
		m.Footer = breakingFooter(a)
	}
	if a.CutBytes > 0 && format != CommitSummary {
		m.Body = append(m.Body, fmt.Sprintf("(The diff was too large: %d bytes were not analysed.)", a.CutBytes))
	}
	for len(m.Body) > 0 && m.Body[0] == "" {
		m.Body = m.Body[1:]
	}
	return m
}

// commitPlural picks the word for n.
func commitPlural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// commitCapitalise upper-cases the first letter.
func commitCapitalise(s string) string {
	r, size := utf8.DecodeRuneInString(s)
	if size == 0 {
		return s
	}
	return strings.ToUpper(string(r)) + s[size:]
}

// conventionalTitleRE recognises a conventional commit title.
var conventionalTitleRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(?i)^[a-z]+(\([^)]+\))?!?: \S`) })

// draftWithLLM asks the LLM to write the message from the analysis, within
// the request's budget. On success it replaces resp's message; when the
// budget, the time or the endpoint ends it, the rule-based message stays
// and the result is marked partial with what is missing.
func draftWithLLM(ctx context.Context, client *llm.Client, a *analysis, req CommitRequest, impact *ImpactAnalysis, resp *CommitResponse) {
	partial := func(missing string) {
		resp.Metadata.IsPartialResult = true
		resp.Metadata.Missing = missing
	}
	// Shrink the diff excerpt until the prompt fits the budget.
	var msgs []llm.Message
	for diffChars := maxPromptDiffChars; ; diffChars /= 2 {
		if diffChars < 500 {
			diffChars = 0
		}
		msgs = commitPrompt(a, req, impact, diffChars)
		_, err := client.MaxTokensFor(msgs, req.MaxCost)
		if err == nil {
			break
		}
		if diffChars == 0 {
			partial(fmt.Sprintf("LLM-drafted message: the maxCost budget of %g does not cover even a prompt without the diff; the message is rule-based", req.MaxCost))
			return
		}
	}
	c, err := client.Complete(ctx, msgs, req.MaxCost)
	if err != nil && fault.KindOf(err) != fault.BudgetExceeded {
		// The request was made, and failed: record it, as general_query
		// does. A budget error comes before any request.
		resp.Metadata.ModelsUsed = append(resp.Metadata.ModelsUsed, client.Model())
	}
	if err != nil {
		var fe *fault.Error
		msg := err.Error()
		if errors.As(err, &fe) {
			msg = fe.Message
		}
		switch fault.KindOf(err) {
		case fault.BudgetExceeded:
			partial(fmt.Sprintf("LLM-drafted message: over the maxCost budget (%s); the message is rule-based", msg))
		case fault.Timeout:
			partial(fmt.Sprintf("LLM-drafted message: the model did not answer in time (%s); the message is rule-based", msg))
		default:
			partial(fmt.Sprintf("LLM-drafted message: %s; the message is rule-based", msg))
		}
		return
	}
	resp.Metadata.ModelsUsed = append(resp.Metadata.ModelsUsed, c.Model)
	resp.Metadata.TotalCost += c.Cost
	if c.Truncated {
		partial("LLM-drafted message: the answer was cut off by the maxCost budget; the message is rule-based")
		return
	}
	drafted, ok := parseDraft(c.Text)
	if !ok {
		partial("LLM-drafted message: the model returned no usable message; the message is rule-based")
		return
	}
	if req.Format == CommitSummary {
		drafted.Body = nil
	}
	if req.Format == CommitConventional && !conventionalTitleRE().MatchString(drafted.Title) {
		drafted.Title = conventionalPrefix(a) + drafted.Title
	}
	if footer := breakingFooter(a); footer != "" && !strings.Contains(drafted.Footer, "BREAKING CHANGE") {
		drafted.Footer = strings.TrimSpace(drafted.Footer + "\n" + footer)
	}
	resp.CommitMessage = drafted.fit(req.MaxLength)
}

// footerLineRE matches git trailer lines ("BREAKING CHANGE: ...",
// "Refs: #12", "Signed-off-by: ...").
var footerLineRE = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^(BREAKING[ -]CHANGE|[A-Z][A-Za-z-]+|Refs|Closes|Fixes): `)
})

// parseDraft splits an LLM's answer into title, body and footer.
func parseDraft(text string) (draftMessage, bool) {
	text = strings.TrimSpace(text)
	// Unwrap a fenced block.
	if strings.HasPrefix(text, "```") {
		text = strings.TrimPrefix(text, "```")
		if i := strings.IndexByte(text, '\n'); i >= 0 {
			text = text[i+1:]
		}
		text, _, _ = strings.Cut(text, "```")
		text = strings.TrimSpace(text)
	}
	lines := strings.Split(strings.ReplaceAll(text, "\r\n", "\n"), "\n")
	if len(lines) == 0 || strings.TrimSpace(lines[0]) == "" {
		return draftMessage{}, false
	}
	m := draftMessage{Title: strings.TrimSpace(strings.TrimLeft(lines[0], "# "))}
	rest := lines[1:]
	for len(rest) > 0 && strings.TrimSpace(rest[0]) == "" {
		rest = rest[1:]
	}
	// The footer is the last paragraph when every line is a trailer.
	lastBlank := -1
	for i := len(rest) - 1; i >= 0; i-- {
		if strings.TrimSpace(rest[i]) == "" {
			lastBlank = i
			break
		}
	}
	tail := rest[lastBlank+1:]
	isFooter := len(tail) > 0 && len(tail) < len(rest)+1
	for _, l := range tail {
		if !footerLineRE().MatchString(l) {
			isFooter = false
			break
		}
	}
	if isFooter {
		m.Footer = strings.Join(tail, "\n")
		if lastBlank >= 0 {
			rest = rest[:lastBlank]
		} else {
			rest = nil
		}
	}
	for len(rest) > 0 && strings.TrimSpace(rest[len(rest)-1]) == "" {
		rest = rest[:len(rest)-1]
	}
	for _, l := range rest {
		l = strings.TrimRight(l, " \t")
		if commitChars(l) <= bodyWidth {
			m.Body = append(m.Body, l)
			continue
		}
		// Rewrap a long line, keeping a bullet's hanging indent.
		trimmed := strings.TrimLeft(l, " ")
		lead := l[:len(l)-len(trimmed)]
		indent := lead
		if strings.HasPrefix(trimmed, "- ") || strings.HasPrefix(trimmed, "* ") {
			indent += "  "
		}
		wrapped := commitWrap(trimmed, bodyWidth-len(lead), indent[len(lead):])
		for i := range wrapped {
			wrapped[i] = lead + wrapped[i]
		}
		m.Body = append(m.Body, wrapped...)
	}
	return m, m.Title != ""
}

// commitPrompt asks for a message: instructions for the format and length,
// the analysis, and up to diffChars characters of the diff's hunks.
func commitPrompt(a *analysis, req CommitRequest, impact *ImpactAnalysis, diffChars int) []llm.Message {
	var sys strings.Builder
	sys.WriteString("You write git commit messages. Answer with the commit message only, no commentary and no code fences: ")
	fmt.Fprintf(&sys, "a title line of at most %d characters, then a blank line and the body, then optionally a blank line and footer trailers. ", min(maxTitleChars, req.MaxLength))
	fmt.Fprintf(&sys, "The whole message must stay under %d characters; wrap the body at %d columns. ", req.MaxLength, bodyWidth)
	switch req.Format {
	case CommitSummary:
		sys.WriteString("Format: Summary — a single title line in the imperative mood, no body.")
	case CommitDetailed:
		sys.WriteString("Format: Detailed — an imperative title without a type prefix, then a body explaining what changed and why, file by file where useful.")
	default:
		fmt.Fprintf(&sys, "Format: Conventional Commits — the title is \"%s<subject>\" with the subject in the imperative mood, lower case, no full stop; the body lists the changes as short bullets.", conventionalPrefix(a))
	}
	if len(a.RemovedSymbols) > 0 {
		fmt.Fprintf(&sys, " End with the footer \"%s\".", breakingFooter(a))
	}

	var u strings.Builder
	fmt.Fprintf(&u, "Inferred type: %s\n", a.Type)
	if a.Scope != "" {
		fmt.Fprintf(&u, "Scope: %s\n", a.Scope)
	}
	fmt.Fprintf(&u, "Changed files (%d, +%d -%d lines):\n", len(a.Files), a.Added, a.Removed)
	for i, f := range a.Files {
		if i == 200 {
			fmt.Fprintf(&u, "- … and %d more files\n", len(a.Files)-i)
			break
		}
		fmt.Fprintf(&u, "- %s %s: %s\n", f.Change, f.Path(), f.Summary)
	}
	if len(a.AddedSymbols) > 0 {
		fmt.Fprintf(&u, "New exported symbols: %s\n", joinNames(a.AddedSymbols, 20))
	}
	if len(a.RemovedSymbols) > 0 {
		fmt.Fprintf(&u, "Removed exported symbols: %s\n", joinNames(a.RemovedSymbols, 20))
	}
	if impact != nil {
		fmt.Fprintf(&u, "Impact: %s; areas: %s\n", impact.Severity, strings.Join(impact.AffectedAreas, ", "))
	}
	if diffChars > 0 {
		u.WriteString("\nDiff excerpt:\n")
		left := diffChars
		for _, f := range a.Files {
			if left <= 0 {
				u.WriteString("[… rest of the diff omitted]\n")
				break
			}
			if len(f.Hunks) == 0 {
				continue
			}
			head := fmt.Sprintf("--- %s\n", f.Path())
			u.WriteString(head)
			left -= len(head)
			for _, h := range f.Hunks {
				if left <= 0 {
					break
				}
				if len(h) > left {
					h = strings.ToValidUTF8(h[:left], "") + "\n[… hunk cut]\n"
				}
				u.WriteString(h)
				left -= len(h)
			}
		}
	}
	// The diff may hold credentials; they must not travel to the model.
	var patternsOnly *redact.Redactor
	return []llm.Message{{Role: llm.RoleSystem, Content: sys.String()}, {Role: llm.RoleUser, Content: patternsOnly.String(u.String())}}
}

// CommitInputSchema is the tool's JSON input schema (types, enums, bounds,
// size limits) for registration.
func CommitInputSchema() map[string]any {
	return map[string]any{
		"type":                 "object",
		"additionalProperties": false,
		"properties": map[string]any{
			"sinceDiff": map[string]any{
				"type":        "string",
				"minLength":   1,
				"maxLength":   MaxSinceDiffChars,
				"description": "Optional unified diff text (such as the output of git diff) to describe. Without it and sinceCommit, the working tree (staged, unstaged and untracked files) is compared with the last commit.",
			},
			"sinceCommit": map[string]any{
				"type":        "string",
				"maxLength":   maxSinceCommitChars,
				"pattern":     refPattern,
				"description": "Optional commit to start from: a hash (4-40 hex digits) or a ref such as main, v1.2.0 or HEAD~2. Describes everything from that commit to the working tree. Not with sinceDiff.",
			},
			"includeImpact": map[string]any{
				"type":        "boolean",
				"default":     false,
				"description": "Also return an impact analysis: severity (None, Minor, Moderate, Major), affected areas and what to review carefully.",
			},
			"format": map[string]any{
				"type":        "string",
				"enum":        []string{CommitConventional, CommitDetailed, CommitSummary},
				"default":     CommitConventional,
				"description": "Conventional: \"type(scope): subject\" with a bullet body (Conventional Commits). Detailed: a title and a body grouped by change type. Summary: a title only.",
			},
			"scope": map[string]any{
				"type":        "string",
				"minLength":   1,
				"maxLength":   maxScopeChars,
				"pattern":     scopeRE().String(),
				"description": "Optional commit scope, e.g. api; inferred from the changed paths when omitted.",
			},
			"maxLength": map[string]any{
				"type":        "integer",
				"minimum":     MinCommitLength,
				"maximum":     MaxCommitLength,
				"description": fmt.Sprintf("Maximum length of the whole message in characters (default %d). The title is at most 72 characters either way; a body that does not fit is cut with an indicator.", DefaultCommitLength),
			},
			"maxCost": map[string]any{
				"type":        "number",
				"minimum":     0,
				"maximum":     MaxCommitCost,
				"description": fmt.Sprintf("Maximum cost of LLM use for this request, in the configured price units (default %g). When it runs out, the rule-based message is returned, marked isPartialResult.", DefaultCommitCost),
			},
		},
		"not": map[string]any{"required": []string{"sinceDiff", "sinceCommit"}},
	}
}
