package github_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/switchboard-mcp/switchboard/internal/fault"
	"github.com/switchboard-mcp/switchboard/internal/github"
)

const token = "ghp_TESTTOKEN0123456789"

// recorded is one request a test server saw.
type recorded struct {
	method, path string
	header       http.Header
	body         map[string]any
}

// server starts a GitHub stand-in on 127.0.0.1 that records each request
// and answers with handle.
func server(t *testing.T, handle func(w http.ResponseWriter, r *http.Request)) (url string, seen func() []recorded) {
	t.Helper()
	reqs := make(chan recorded, 10)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		data, _ := io.ReadAll(r.Body)
		var body map[string]any
		if err := json.Unmarshal(data, &body); err != nil {
			t.Errorf("request body %q is not a JSON object: %v", data, err)
		}
		reqs <- recorded{r.Method, r.URL.Path, r.Header.Clone(), body}
		handle(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv.URL, func() []recorded {
		var out []recorded
		for {
			select {
			case r := <-reqs:
				out = append(out, r)
			default:
				return out
			}
		}
	}
}

func answer(status int, headers map[string]string, body string) func(http.ResponseWriter, *http.Request) {
	return func(w http.ResponseWriter, r *http.Request) {
		for k, v := range headers {
			w.Header().Set(k, v)
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		io.WriteString(w, body)
	}
}

func checkHeaders(t *testing.T, h http.Header) {
	t.Helper()
	want := map[string]string{
		"Authorization":        "Bearer " + token,
		"Accept":               "application/vnd.github+json",
		"X-Github-Api-Version": "2022-11-28",
		"User-Agent":           "switchboard",
		"Content-Type":         "application/json",
	}
	for k, v := range want {
		if got := h.Get(k); got != v {
			t.Errorf("header %s: got %q, want %q", k, got, v)
		}
	}
}

func TestCreateIssue(t *testing.T) {
	url, seen := server(t, answer(201, nil, `{"number":42,"url":"https://api.example/repos/octo/hello/issues/42","html_url":"https://example/octo/hello/issues/42","title":"x"}`))
	c := github.New(url+"/api/v3/", token, nil)
	got, err := c.CreateIssue(context.Background(), "octo/hello.go", github.IssueRequest{Title: "Build failed", Body: "on 003-user-auth", Labels: []string{"ci", "bug"}})
	if err != nil {
		t.Fatalf("CreateIssue: %v", err)
	}
	want := github.Issue{Number: 42, URL: "https://api.example/repos/octo/hello/issues/42", HTMLURL: "https://example/octo/hello/issues/42"}
	if got != want {
		t.Errorf("got %+v, want %+v", got, want)
	}
	reqs := seen()
	if len(reqs) != 1 {
		t.Fatalf("got %d requests, want 1", len(reqs))
	}
	r := reqs[0]
	if r.method != "POST" || r.path != "/api/v3/repos/octo/hello.go/issues" {
		t.Errorf("got %s %s, want POST /api/v3/repos/octo/hello.go/issues", r.method, r.path)
	}
	checkHeaders(t, r.header)
	wantBody := map[string]any{"title": "Build failed", "body": "on 003-user-auth", "labels": []any{"ci", "bug"}}
	if diff := cmp.Diff(wantBody, r.body); diff != "" {
		t.Errorf("body (-want +got):\n%s", diff)
	}
}

func TestCreateComment(t *testing.T) {
	url, seen := server(t, answer(201, nil, `{"id":9007199254740993,"url":"https://api.example/c/1","html_url":"https://example/c/1"}`))
	c := github.New(url, token, nil)
	got, err := c.CreateComment(context.Background(), "octo/hello", 7, "Deployed **003-user-auth**")
	if err != nil {
		t.Fatalf("CreateComment: %v", err)
	}
	want := github.Comment{ID: 9007199254740993, URL: "https://api.example/c/1", HTMLURL: "https://example/c/1"}
	if got != want {
		t.Errorf("got %+v, want %+v", got, want)
	}
	r := seen()[0]
	if r.method != "POST" || r.path != "/repos/octo/hello/issues/7/comments" {
		t.Errorf("got %s %s, want POST /repos/octo/hello/issues/7/comments", r.method, r.path)
	}
	checkHeaders(t, r.header)
	if diff := cmp.Diff(map[string]any{"body": "Deployed **003-user-auth**"}, r.body); diff != "" {
		t.Errorf("body (-want +got):\n%s", diff)
	}
}

func TestRenamedRepositoryRedirect(t *testing.T) {
	url, seen := server(t, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/repos/octo/old/issues/3/comments" {
			http.Redirect(w, r, "/repos/octo/new/issues/3/comments", http.StatusTemporaryRedirect)
			return
		}
		answer(201, nil, `{"id":5}`)(w, r)
	})
	got, err := github.New(url, token, nil).CreateComment(context.Background(), "octo/old", 3, "b")
	if err != nil || got.ID != 5 {
		t.Fatalf("got %+v, %v; want comment 5", got, err)
	}
	reqs := seen()
	if len(reqs) != 2 || reqs[1].method != "POST" || reqs[1].path != "/repos/octo/new/issues/3/comments" {
		t.Fatalf("got requests %+v, want the POST repeated at the new path", reqs)
	}
	checkHeaders(t, reqs[1].header)
	if diff := cmp.Diff(map[string]any{"body": "b"}, reqs[1].body); diff != "" {
		t.Errorf("redirected body (-want +got):\n%s", diff)
	}
}

func TestDefaultBaseURL(t *testing.T) {
	c := github.New("", token, nil)
	if got, want := c.String(), fmt.Sprintf("github.Client{BaseURL: %q, Token: set}", github.DefaultBaseURL); got != want {
		t.Errorf("got %s, want %s", got, want)
	}
	if s := fmt.Sprintf("%v %#v %+v", c, c, c); strings.Contains(s, token) {
		t.Errorf("got the token in the client's formatting: %s", s)
	}
}

func TestStatusErrors(t *testing.T) {
	tests := []struct {
		name    string
		status  int
		headers map[string]string
		body    string
		kind    fault.Kind
		message string
		fields  []fault.FieldDetail
		details map[string]any
	}{
		{"unauthorized", 401, nil, `{"message":"Bad credentials","documentation_url":"https://docs.github.com/rest"}`,
			fault.Authentication, "GitHub answered 401: Bad credentials", nil,
			map[string]any{"status": 401, "documentation_url": "https://docs.github.com/rest"}},
		{"forbidden", 403, map[string]string{"X-RateLimit-Remaining": "4999"}, `{"message":"Resource not accessible by personal access token"}`,
			fault.Authorization, "GitHub answered 403: Resource not accessible by personal access token", nil, map[string]any{"status": 403}},
		{"primary rate limit", 403, map[string]string{"X-RateLimit-Remaining": "0", "X-RateLimit-Reset": "1700000000", "X-GitHub-Request-Id": "AB:CD"},
			`{"message":"API rate limit exceeded for user ID 1."}`,
			fault.LimitExceeded, "API rate limit exceeded", nil,
			map[string]any{"status": 403, "rate_limit_reset": "1700000000", "request_id": "AB:CD"}},
		{"secondary rate limit", 403, map[string]string{"Retry-After": "60"}, `{"message":"You have exceeded a secondary rate limit."}`,
			fault.LimitExceeded, "secondary rate limit", nil, map[string]any{"status": 403, "retry_after": "60"}},
		{"too many requests", 429, map[string]string{"Retry-After": "5"}, `{"message":"Too many"}`,
			fault.LimitExceeded, "GitHub answered 429: Too many", nil, map[string]any{"status": 429, "retry_after": "5"}},
		{"not found", 404, nil, `{"message":"Not Found"}`, fault.NotFound, "GitHub answered 404: Not Found", nil, map[string]any{"status": 404}},
		{"gone", 410, nil, `{"message":"Issues are disabled for this repo"}`, fault.NotFound, "Issues are disabled for this repo", nil, map[string]any{"status": 410}},
		{"validation", 422, nil, `{"message":"Validation Failed","errors":[{"resource":"Issue","field":"title","code":"missing_field"},{"resource":"Label","field":"labels","code":"invalid","message":"label does not exist"}]}`,
			fault.Validation, "GitHub answered 422: Validation Failed",
			[]fault.FieldDetail{{Field: "title", Message: "Issue missing_field"}, {Field: "labels", Message: "label does not exist"}},
			map[string]any{"status": 422}},
		{"token echoed", 401, nil, `{"message":"Bad credentials: ` + token + `","errors":[{"field":"auth","message":"token ` + token + `"}]}`,
			fault.Authentication, "Bad credentials: [redacted]", []fault.FieldDetail{{Field: "auth", Message: "token [redacted]"}},
			map[string]any{"status": 401}},
		{"server error", 502, nil, `<html>bad gateway</html>`, fault.Backend, "GitHub answered 502: Bad Gateway", nil, map[string]any{"status": 502}},
		{"unexpected", 302, map[string]string{"Location": "/elsewhere"}, ``, fault.Protocol, "GitHub answered 302", nil, map[string]any{"status": 302}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			url, _ := server(t, answer(tt.status, tt.headers, tt.body))
			_, err := github.New(url, token, nil).CreateIssue(context.Background(), "octo/hello", github.IssueRequest{Title: "t"})
			fe := fault.As(err)
			if fe == nil {
				t.Fatal("got no error")
			}
			if fe.Kind != tt.kind {
				t.Errorf("got kind %s (%v), want %s", fe.Kind, err, tt.kind)
			}
			if !strings.Contains(fe.Message, tt.message) || !strings.HasPrefix(fe.Message, "creating an issue in octo/hello: ") {
				t.Errorf("got message %q, want it to contain %q", fe.Message, tt.message)
			}
			if diff := cmp.Diff(tt.fields, fe.Fields); diff != "" {
				t.Errorf("fields (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.details, fe.Details); diff != "" {
				t.Errorf("details (-want +got):\n%s", diff)
			}
			rendered, _ := json.Marshal(fe)
			if strings.Contains(err.Error(), token) || strings.Contains(string(rendered), token) {
				t.Errorf("got the token in the error: %v / %s", err, rendered)
			}
		})
	}
}

func TestClientErrors(t *testing.T) {
	ctx := context.Background()
	url, seen := server(t, answer(201, nil, `{}`))
	tests := []struct {
		name string
		call func() error
		kind fault.Kind
		want string
	}{
		{"bad repo", func() error {
			_, err := github.New(url, token, nil).CreateIssue(ctx, "octo", github.IssueRequest{Title: "t"})
			return err
		}, fault.Validation, `repository must be "owner/name", got "octo"`},
		{"repo with a path", func() error {
			_, err := github.New(url, token, nil).CreateIssue(ctx, "octo/hello/../x", github.IssueRequest{Title: "t"})
			return err
		}, fault.Validation, "repository must be"},
		{"dot repo", func() error {
			_, err := github.New(url, token, nil).CreateComment(ctx, "octo/..", 1, "b")
			return err
		}, fault.Validation, "repository must be"},
		{"empty title", func() error {
			_, err := github.New(url, token, nil).CreateIssue(ctx, "octo/hello", github.IssueRequest{Title: " "})
			return err
		}, fault.Validation, "an issue needs a title"},
		{"bad number", func() error {
			_, err := github.New(url, token, nil).CreateComment(ctx, "octo/hello", 0, "b")
			return err
		}, fault.Validation, "issue number must be positive"},
		{"empty comment", func() error {
			_, err := github.New(url, token, nil).CreateComment(ctx, "octo/hello", 1, "")
			return err
		}, fault.Validation, "a comment needs a body"},
		{"no token", func() error {
			_, err := github.New(url, "", nil).CreateIssue(ctx, "octo/hello", github.IssueRequest{Title: "t"})
			return err
		}, fault.Authentication, "no GitHub token is configured"},
		{"bad base URL", func() error {
			_, err := github.New("ftp://example.com", token, nil).CreateIssue(ctx, "octo/hello", github.IssueRequest{Title: "t"})
			return err
		}, fault.Config, "must be an http or https URL"},
		{"credentials in base URL", func() error {
			_, err := github.New("https://u:p@example.com", token, nil).CreateIssue(ctx, "octo/hello", github.IssueRequest{Title: "t"})
			return err
		}, fault.Config, "must not carry credentials"},
		{"answer without a number", func() error {
			_, err := github.New(url, token, nil).CreateIssue(ctx, "octo/hello", github.IssueRequest{Title: "t"})
			return err
		}, fault.Protocol, "without an issue number"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.call()
			if got := fault.KindOf(err); got != tt.kind {
				t.Fatalf("got kind %s (%v), want %s", got, err, tt.kind)
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("got %q, want it to contain %q", err, tt.want)
			}
		})
	}
	if n := len(seen()); n != 1 {
		t.Errorf("got %d requests, want 1 (only the call that passed validation)", n)
	}
}

func TestTransportErrors(t *testing.T) {
	t.Run("connection refused", func(t *testing.T) {
		srv := httptest.NewServer(http.NotFoundHandler())
		url := srv.URL
		srv.Close()
		_, err := github.New(url, token, nil).CreateIssue(context.Background(), "octo/hello", github.IssueRequest{Title: "t"})
		if got := fault.KindOf(err); got != fault.Connection {
			t.Errorf("got kind %s (%v), want connection", got, err)
		}
		if strings.Contains(err.Error(), token) {
			t.Errorf("got the token in %v", err)
		}
	})
	t.Run("deadline", func(t *testing.T) {
		release := make(chan struct{})
		url, _ := server(t, func(w http.ResponseWriter, r *http.Request) {
			select {
			case <-release:
			case <-r.Context().Done():
			}
		})
		defer close(release)
		ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
		defer cancel()
		_, err := github.New(url, token, nil).CreateComment(ctx, "octo/hello", 1, "b")
		if got := fault.KindOf(err); got != fault.Timeout {
			t.Errorf("got kind %s (%v), want timeout", got, err)
		}
	})
	t.Run("client timeout", func(t *testing.T) {
		release := make(chan struct{})
		url, _ := server(t, func(w http.ResponseWriter, r *http.Request) {
			select {
			case <-release:
			case <-r.Context().Done():
			}
		})
		defer close(release)
		_, err := github.New(url, token, &http.Client{Timeout: 50 * time.Millisecond}).CreateComment(context.Background(), "octo/hello", 1, "b")
		if got := fault.KindOf(err); got != fault.Timeout {
			t.Errorf("got kind %s (%v), want timeout", got, err)
		}
	})
}
