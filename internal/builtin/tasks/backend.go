package tasks

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/switchboard-mcp/switchboard/internal/fault"
)

// Log attribute keys of the backend_request event (seed 002's
// BackendRequestLogEvent).
const (
	logEvent      = "backend_request"
	keyEvent      = "event"
	keyRequestID  = "request_id"
	keyUserID     = "user_id"
	keySessionID  = "session_id"
	keyMethod     = "method"
	keyEndpoint   = "endpoint"
	keyStatusCode = "status_code"
	keyDurationMS = "duration_ms"
	keyError      = "error"
	keyAttempt    = "attempt"
)

// maxResponseBytes bounds how much of a backend response is read.
const maxResponseBytes = 8 << 20

// backend sends requests to the REST task backend.
type backend struct {
	baseURL    string
	token      string
	client     *http.Client
	timeout    time.Duration
	maxRetries int
	backoff    func(retry int) time.Duration
	logger     *slog.Logger
}

// defaultBackoff waits 100ms before the first retry, doubling each time,
// up to 2s.
func defaultBackoff(retry int) time.Duration {
	d := 100 * time.Millisecond << min(retry, 5)
	return min(d, 2*time.Second)
}

// request is one logical backend request, which may take several attempts.
type request struct {
	id       string
	user     UserContext
	method   string
	endpoint string // e.g. /tasks/42
	body     any    // nil for none
	subject  string // what the request is about, for messages: "Task 42"
}

// newRequestID returns a random request identifier.
func newRequestID() string { return strings.ToLower(rand.Text()[:16]) }

// idempotent reports whether r may be retried. Every method the tools use
// is idempotent except POST (PATCH only ever sets completed to true).
func (r request) idempotent() bool { return r.method != http.MethodPost }

// do sends r, retrying transient failures of idempotent requests, and
// returns the body of a 2xx response.
func (b *backend) do(ctx context.Context, r request) ([]byte, *fault.Error) {
	var payload []byte
	if r.body != nil {
		var err error
		if payload, err = json.Marshal(r.body); err != nil {
			return nil, fault.Wrap(fault.Internal, err, "encoding the request to the task service")
		}
	}
	for attempt := 1; ; attempt++ {
		status, body, err := b.once(ctx, r, payload, attempt)
		if err == nil && status >= 200 && status < 300 {
			return body, nil
		}
		var fe *fault.Error
		if err != nil {
			fe = b.transportError(ctx, r, err)
		} else {
			fe = statusError(r, status, body)
		}
		if attempt > 1 {
			fe.WithDetail("attempts", attempt)
		}
		if !r.idempotent() || attempt > b.maxRetries || !transient(status, err, fe) || ctx.Err() != nil {
			return nil, fe
		}
		t := time.NewTimer(b.backoff(attempt - 1))
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, fe
		case <-t.C:
		}
	}
}

// transient reports whether a failure is worth retrying: connection
// errors, timeouts, and 502, 503 and 504 responses.
func transient(status int, err error, fe *fault.Error) bool {
	if err != nil {
		return fe.Kind == fault.Connection || fe.Kind == fault.Timeout
	}
	return status == http.StatusBadGateway || status == http.StatusServiceUnavailable || status == http.StatusGatewayTimeout
}

// once makes one attempt and logs it.
func (b *backend) once(ctx context.Context, r request, payload []byte, attempt int) (status int, body []byte, err error) {
	ctx, cancel := context.WithTimeout(ctx, b.timeout)
	defer cancel()
	start := time.Now()
	defer func() {
		var statusAttr, errAttr any
		if status != 0 {
			statusAttr = status
		}
		switch {
		case err != nil:
			errAttr = err.Error()
		case status >= 400:
			errAttr = fmt.Sprintf("HTTP %d %s", status, http.StatusText(status))
		}
		attrs := []slog.Attr{
			slog.String(keyEvent, logEvent),
			slog.String(keyRequestID, r.id),
			slog.String(keyUserID, r.user.UserID),
			slog.String(keyMethod, r.method),
			slog.String(keyEndpoint, r.endpoint),
			slog.Any(keyStatusCode, statusAttr),
			slog.Float64(keyDurationMS, float64(time.Since(start).Microseconds())/1000),
			slog.Any(keyError, errAttr),
			slog.Int(keyAttempt, attempt),
		}
		if r.user.SessionID != "" {
			attrs = append(attrs, slog.String(keySessionID, r.user.SessionID))
		}
		b.logger.LogAttrs(ctx, slog.LevelInfo, logEvent, attrs...)
	}()

	var rd io.Reader
	if payload != nil {
		rd = bytes.NewReader(payload)
	}
	req, err := http.NewRequestWithContext(ctx, r.method, b.baseURL+r.endpoint, rd)
	if err != nil {
		return 0, nil, err
	}
	req.Header.Set("Authorization", "Bearer "+b.token)
	req.Header.Set("X-User-ID", r.user.UserID)
	req.Header.Set("X-Request-ID", r.id)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	resp, err := b.client.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	body, err = io.ReadAll(io.LimitReader(resp.Body, maxResponseBytes))
	if err != nil {
		return resp.StatusCode, nil, fmt.Errorf("reading response: %w", err)
	}
	return resp.StatusCode, body, nil
}

// transportError classifies a failure to get a response.
func (b *backend) transportError(ctx context.Context, r request, err error) *fault.Error {
	if ctx.Err() != nil {
		return fault.Wrap(fault.Cancelled, ctx.Err(), "The request was cancelled")
	}
	var ne net.Error
	if errors.Is(err, context.DeadlineExceeded) || (errors.As(err, &ne) && ne.Timeout()) {
		fe := fault.Wrap(fault.Timeout, err, "The task service did not respond within %s", b.timeout).
			WithSuggestions("Try again in a moment")
		if !r.idempotent() {
			fe.WithSuggestions("The task may have been created anyway: call list_tasks before creating it again")
		}
		return fe.WithSuggestions("If it keeps timing out, tell the user the task service is slow or unavailable")
	}
	return fault.Wrap(fault.Connection, err, "Unable to connect to the task service").
		WithSuggestions("Try again in a moment", "If it keeps failing, tell the user the task service is unavailable")
}

// statusError maps a non-2xx backend response to seed 002's error types.
func statusError(r request, status int, body []byte) *fault.Error {
	switch {
	case status == http.StatusUnauthorized:
		return fault.New(fault.Authentication, "The task service rejected this server's credentials").
			WithSuggestions(
				"This is a server configuration problem, not the user's: the operator should check SERVICE_AUTH_TOKEN",
				"Tell the user their tasks are unavailable right now")
	case status == http.StatusForbidden:
		return fault.New(fault.Authorization, "%s is not accessible to this user", r.subject).
			WithSuggestions(
				"The task may belong to another user: call list_tasks to see this user's tasks",
				"Do not retry with the same task_id")
	case status == http.StatusNotFound:
		return fault.New(fault.NotFound, "%s was not found", r.subject).
			WithSuggestions(
				"Call list_tasks to find the correct task_id",
				"The task may already have been deleted")
	case status == http.StatusUnprocessableEntity || status == http.StatusBadRequest:
		return backendValidationError(r, body)
	case status >= 500:
		return fault.New(fault.Backend, "The task service failed (HTTP %d)", status).
			WithDetail("status_code", status).
			WithSuggestions("Try again in a moment", "If it keeps failing, tell the user the task service has a problem")
	default:
		return fault.New(fault.Backend, "The task service answered with unexpected HTTP status %d", status).
			WithDetail("status_code", status).
			WithSuggestions("Tell the user the request could not be completed")
	}
}

// backendValidationError turns a 422 body into seed 002 field details. It
// understands seed 002's ErrorResponse (details.fields) and FastAPI's
// {"detail": [{"loc": [...], "msg": ..., "type": ...}]}.
func backendValidationError(r request, body []byte) *fault.Error {
	var seed struct {
		Message string `json:"message"`
		Details struct {
			Fields []fault.FieldDetail `json:"fields"`
		} `json:"details"`
		Suggestions []string `json:"suggestions"`
	}
	var fastapi struct {
		Detail json.RawMessage `json:"detail"`
	}
	fe := fault.New(fault.Validation, "The task service rejected the input")
	if json.Unmarshal(body, &seed) == nil && (len(seed.Details.Fields) > 0 || seed.Message != "") {
		if seed.Message != "" {
			fe.Message = seed.Message
		}
		fe.Fields = seed.Details.Fields
		fe.Suggestions = seed.Suggestions
	} else if json.Unmarshal(body, &fastapi) == nil && len(fastapi.Detail) > 0 {
		var items []struct {
			Loc   []any           `json:"loc"`
			Msg   string          `json:"msg"`
			Type  string          `json:"type"`
			Input json.RawMessage `json:"input"`
		}
		var msg string
		if json.Unmarshal(fastapi.Detail, &items) == nil {
			for _, it := range items {
				fe.Fields = append(fe.Fields, fault.FieldDetail{
					Field:         fieldFromLoc(it.Loc),
					Message:       it.Msg,
					ReceivedValue: display(it.Input),
				})
			}
		} else if json.Unmarshal(fastapi.Detail, &msg) == nil && msg != "" {
			fe.Message = msg
		}
	}
	for i := range fe.Fields {
		if fe.Fields[i].Suggestion == "" {
			fe.Fields[i].Suggestion = fieldSuggestions[fe.Fields[i].Field]
		}
		if s := fe.Fields[i].Suggestion; s != "" && !slices.Contains(fe.Suggestions, s) {
			fe.Suggestions = append(fe.Suggestions, s)
		}
	}
	if len(fe.Suggestions) == 0 {
		fe.Suggestions = []string{"Check the parameters against the tool's schema and try again"}
	}
	return fe
}

// fieldFromLoc names a field from a FastAPI error location, dropping the
// leading "body", "query" or "path".
func fieldFromLoc(loc []any) string {
	var parts []string
	for i, p := range loc {
		s := fmt.Sprint(p)
		if i == 0 && len(loc) > 1 && (s == "body" || s == "query" || s == "path") {
			continue
		}
		if s == "id" {
			s = "task_id"
		}
		parts = append(parts, s)
	}
	return strings.Join(parts, ".")
}
