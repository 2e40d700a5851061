// Package github is the small GitHub REST API client behind the hooks'
// `github` action: it creates issues and issue comments on github.com or a
// GitHub Enterprise Server. Failures are [*fault.Error] values whose kind
// follows the HTTP status (401 authentication, 403 authorization or
// limit_exceeded for a rate limit, 404 not_found, 422 validation with
// GitHub's field errors, 5xx backend) and whose message is GitHub's. The
// token is sent only in the Authorization header and never appears in an
// error or a log.
package github

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/switchboard-mcp/switchboard/internal/fault"
)

// DefaultBaseURL is the API of github.com. GitHub Enterprise Server's is
// https://HOST/api/v3.
const DefaultBaseURL = "https://api.github.com"

// APIVersion is the REST API version requested (X-GitHub-Api-Version).
const APIVersion = "2022-11-28"

// UserAgent identifies Switchboard to GitHub, which requires one.
const UserAgent = "switchboard"

// DefaultTimeout bounds one request when New is given no *http.Client.
const DefaultTimeout = 30 * time.Second

// maxResponse bounds how much of a response body is read.
const maxResponse = 1 << 20

// Client calls the GitHub REST API with one token.
type Client struct {
	base    *url.URL
	baseErr error
	token   string // secret; never logged or put in an error
	hc      *http.Client
}

// New returns a client for the API at baseURL ("" means [DefaultBaseURL])
// authenticating with token. A nil hc means a client with
// [DefaultTimeout]. A malformed baseURL is reported by each call, as a
// fault.Config error.
func New(baseURL, token string, hc *http.Client) *Client {
	if hc == nil {
		hc = &http.Client{Timeout: DefaultTimeout}
	}
	// GitHub answers a request for a renamed repository with a 307, which
	// net/http follows with the same method and body (and drops the
	// Authorization header if the host changes). A 301, 302 or 303 would
	// turn the POST into a GET, so it is returned as the answer instead.
	own := *hc
	own.CheckRedirect = func(req *http.Request, via []*http.Request) error {
		switch {
		case req.Response != nil && req.Response.StatusCode != http.StatusTemporaryRedirect && req.Response.StatusCode != http.StatusPermanentRedirect:
			return http.ErrUseLastResponse
		case len(via) >= 5:
			return errors.New("stopped after 5 redirects")
		}
		return nil
	}
	c := &Client{token: token, hc: &own}
	if baseURL == "" {
		baseURL = DefaultBaseURL
	}
	u, err := url.Parse(strings.TrimRight(baseURL, "/"))
	switch {
	case err != nil:
		c.baseErr = fault.New(fault.Config, "the GitHub API base URL %q is not a URL", baseURL)
	case u.Scheme != "http" && u.Scheme != "https" || u.Host == "":
		c.baseErr = fault.New(fault.Config, "the GitHub API base URL must be an http or https URL such as %s or https://HOST/api/v3, got %q", DefaultBaseURL, u.Redacted())
	case u.User != nil:
		c.baseErr = fault.New(fault.Config, "the GitHub API base URL must not carry credentials; give the token separately")
	}
	c.base = u
	return c
}

// String describes the client without its token.
func (c *Client) String() string {
	if c.base == nil {
		return "github.Client{}"
	}
	return fmt.Sprintf("github.Client{BaseURL: %q, Token: %s}", c.base.Redacted(), map[bool]string{true: "set", false: "none"}[c.token != ""])
}

// GoString is String, so that %#v does not print the token either.
func (c *Client) GoString() string { return c.String() }

// IssueRequest is a new issue.
type IssueRequest struct {
	Title  string
	Body   string
	Labels []string
}

// Issue is a created issue.
type Issue struct {
	Number  int
	URL     string // API URL
	HTMLURL string // web page
}

// Comment is a created issue or pull request comment.
type Comment struct {
	ID      int64
	URL     string // API URL
	HTMLURL string // web page
}

// CreateIssue opens an issue in repo ("owner/name").
func (c *Client) CreateIssue(ctx context.Context, repo string, req IssueRequest) (Issue, error) {
	if err := validRepo(repo); err != nil {
		return Issue{}, err
	}
	if strings.TrimSpace(req.Title) == "" {
		return Issue{}, &fault.Error{Kind: fault.Validation, Message: "an issue needs a title",
			Fields: []fault.FieldDetail{{Field: "title", Message: "cannot be empty", Received: true}}}
	}
	body := struct {
		Title  string   `json:"title"`
		Body   string   `json:"body,omitempty"`
		Labels []string `json:"labels,omitempty"`
	}{req.Title, req.Body, req.Labels}
	var out struct {
		Number  int    `json:"number"`
		URL     string `json:"url"`
		HTMLURL string `json:"html_url"`
	}
	if err := c.post(ctx, "creating an issue in "+repo, "/repos/"+repo+"/issues", body, &out); err != nil {
		return Issue{}, err
	}
	if out.Number <= 0 {
		return Issue{}, fault.New(fault.Protocol, "GitHub answered the new issue in %s without an issue number", repo)
	}
	return Issue(out), nil
}

// CreateComment comments on issue or pull request number in repo
// ("owner/name").
func (c *Client) CreateComment(ctx context.Context, repo string, number int, body string) (Comment, error) {
	if err := validRepo(repo); err != nil {
		return Comment{}, err
	}
	if number <= 0 {
		return Comment{}, &fault.Error{Kind: fault.Validation, Message: fmt.Sprintf("issue number must be positive, got %d", number),
			Fields: []fault.FieldDetail{{Field: "number", Message: "must be a positive integer", ReceivedValue: strconv.Itoa(number)}}}
	}
	if strings.TrimSpace(body) == "" {
		return Comment{}, &fault.Error{Kind: fault.Validation, Message: "a comment needs a body",
			Fields: []fault.FieldDetail{{Field: "body", Message: "cannot be empty", Received: true}}}
	}
	var out struct {
		ID      int64  `json:"id"`
		URL     string `json:"url"`
		HTMLURL string `json:"html_url"`
	}
	what := fmt.Sprintf("commenting on %s#%d", repo, number)
	path := fmt.Sprintf("/repos/%s/issues/%d/comments", repo, number)
	if err := c.post(ctx, what, path, struct {
		Body string `json:"body"`
	}{body}, &out); err != nil {
		return Comment{}, err
	}
	if out.ID <= 0 {
		return Comment{}, fault.New(fault.Protocol, "GitHub answered the new comment on %s#%d without a comment id", repo, number)
	}
	return Comment(out), nil
}

// repoPattern is GitHub's owner/name shape: an owner of letters, digits and
// hyphens; a name of letters, digits, '.', '_' and '-'.
var repoPattern = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^[A-Za-z0-9](?:[A-Za-z0-9-]{0,38})/[A-Za-z0-9._-]{1,100}$`)
})

// validRepo checks that repo is "owner/name".
func validRepo(repo string) error {
	name := repo[strings.IndexByte(repo, '/')+1:]
	if !repoPattern().MatchString(repo) || name == "." || name == ".." {
		return &fault.Error{Kind: fault.Validation, Message: fmt.Sprintf("repository must be \"owner/name\", got %q", repo),
			Fields: []fault.FieldDetail{{Field: "repo", Message: "must be owner/name, e.g. octocat/hello-world", ReceivedValue: repo, Received: true}}}
	}
	return nil
}

// post sends body as JSON to path and decodes a 2xx answer into out.
func (c *Client) post(ctx context.Context, what, path string, body, out any) error {
	if c.baseErr != nil {
		return c.baseErr
	}
	if c.token == "" {
		return fault.New(fault.Authentication, "%s: no GitHub token is configured", what).
			WithSuggestions("Set the token the github action reads from the environment (a fine-grained token with Issues: write)")
	}
	payload, err := json.Marshal(body)
	if err != nil {
		return fault.Wrap(fault.Internal, err, "%s: encoding the request", what)
	}
	u := *c.base
	u.Path = strings.TrimRight(u.Path, "/") + path
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u.String(), bytes.NewReader(payload))
	if err != nil {
		return fault.Wrap(fault.Internal, err, "%s: building the request", what)
	}
	req.Header.Set("Authorization", "Bearer "+c.token)
	req.Header.Set("Accept", "application/vnd.github+json")
	req.Header.Set("X-GitHub-Api-Version", APIVersion)
	req.Header.Set("User-Agent", UserAgent)
	req.Header.Set("Content-Type", "application/json")

	resp, err := c.hc.Do(req)
	if err != nil {
		return c.transportError(ctx, what, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxResponse))
	if err != nil {
		return c.transportError(ctx, what, err)
	}
	if resp.StatusCode/100 != 2 {
		return c.statusError(what, resp, data)
	}
	if err := json.Unmarshal(data, out); err != nil {
		return fault.Wrap(fault.Protocol, err, "%s: GitHub answered with something that is not the expected JSON", what)
	}
	return nil
}

// transportError classifies a failure to get an answer. The error from
// net/http names the URL, which holds no secret (the token is a header).
func (c *Client) transportError(ctx context.Context, what string, err error) error {
	where := c.base.Redacted()
	if ctxErr := ctx.Err(); ctxErr != nil {
		if errors.Is(ctxErr, context.DeadlineExceeded) {
			return fault.Wrap(fault.Timeout, ctxErr, "%s: GitHub (%s) did not answer in the time allowed", what, where)
		}
		return fault.Wrap(fault.Cancelled, ctxErr, "%s: cancelled", what)
	}
	var ne interface{ Timeout() bool }
	if errors.As(err, &ne) && ne.Timeout() {
		return fault.Wrap(fault.Timeout, err, "%s: GitHub (%s) did not answer in time", what, where)
	}
	return fault.Wrap(fault.Connection, err, "%s: unable to reach GitHub at %s", what, where)
}

// scrub removes the token from text taken from an answer, should GitHub
// ever echo it.
func (c *Client) scrub(text string) string {
	if c.token == "" {
		return text
	}
	return strings.ReplaceAll(text, c.token, "[redacted]")
}

// apiError is GitHub's error body.
type apiError struct {
	Message          string `json:"message"`
	DocumentationURL string `json:"documentation_url"`
	Errors           []struct {
		Resource string `json:"resource"`
		Field    string `json:"field"`
		Code     string `json:"code"`
		Message  string `json:"message"`
	} `json:"errors"`
}

// statusError maps a non-2xx answer to a fault.Error carrying GitHub's
// message.
func (c *Client) statusError(what string, resp *http.Response, data []byte) error {
	var body apiError
	_ = json.Unmarshal(data, &body) // a non-JSON body leaves Message empty
	msg := strings.TrimSpace(c.scrub(body.Message))
	if r := []rune(msg); len(r) > 500 {
		msg = string(r[:500]) + "…"
	}
	if msg == "" {
		msg = http.StatusText(resp.StatusCode)
	}
	retryAfter := resp.Header.Get("Retry-After")
	rateLimited := resp.Header.Get("X-RateLimit-Remaining") == "0" || retryAfter != "" ||
		strings.Contains(strings.ToLower(msg), "rate limit")

	var kind fault.Kind
	var suggestion string
	switch code := resp.StatusCode; {
	case code == http.StatusUnauthorized:
		kind, suggestion = fault.Authentication, "Check that the GitHub token is valid and has not expired"
	case code == http.StatusTooManyRequests || code == http.StatusForbidden && rateLimited:
		kind, suggestion = fault.LimitExceeded, "Wait for GitHub's rate limit to reset, then try again"
	case code == http.StatusForbidden:
		kind, suggestion = fault.Authorization, "Give the token write access to issues in this repository"
	case code == http.StatusNotFound:
		kind, suggestion = fault.NotFound, "Check the repository and number; GitHub also answers 404 when the token cannot see a private repository"
	case code == http.StatusGone:
		kind = fault.NotFound // issues are disabled on the repository
	case code == http.StatusUnprocessableEntity || code == http.StatusBadRequest:
		kind = fault.Validation
	case code >= 500:
		kind, suggestion = fault.Backend, "GitHub had a problem; try again later"
	default:
		kind = fault.Protocol
	}
	fe := fault.New(kind, "%s: GitHub answered %d: %s", what, resp.StatusCode, msg).
		WithDetail("status", resp.StatusCode)
	if suggestion != "" {
		fe.WithSuggestions(suggestion)
	}
	if id := resp.Header.Get("X-GitHub-Request-Id"); id != "" {
		fe.WithDetail("request_id", id)
	}
	if body.DocumentationURL != "" {
		fe.WithDetail("documentation_url", c.scrub(body.DocumentationURL))
	}
	if kind == fault.LimitExceeded {
		if retryAfter != "" {
			fe.WithDetail("retry_after", retryAfter)
		}
		if reset := resp.Header.Get("X-RateLimit-Reset"); reset != "" {
			fe.WithDetail("rate_limit_reset", reset)
		}
	}
	for _, e := range body.Errors {
		m := e.Message
		if m == "" {
			m = e.Code
			if e.Resource != "" {
				m = e.Resource + " " + m
			}
		}
		fe.Fields = append(fe.Fields, fault.FieldDetail{Field: e.Field, Message: c.scrub(m)})
	}
	return fe
}
