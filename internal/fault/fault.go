// Package fault is Switchboard's one error vocabulary.
//
// Every failure that a user, a script or an AI sees is a [*Error] of one
// [Kind] (seed 002's taxonomy, extended). Each renders as seed 002's
// structured JSON — error_type, message, details, suggestions — through
// [Error.MarshalJSON], and Go callers branch on it with [errors.As] or
// [KindOf]. The message is what is safe to show; the wrapped cause carries
// internal detail and is only logged.
package fault

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

// Kind classifies a failure.
type Kind string

// The kinds of failure.
const (
	Validation     Kind = "validation"
	NotFound       Kind = "not_found"
	Authentication Kind = "authentication"
	Authorization  Kind = "authorization"
	Connection     Kind = "connection"
	Timeout        Kind = "timeout"
	Protocol       Kind = "protocol"
	Backend        Kind = "backend"
	LimitExceeded  Kind = "limit_exceeded"
	// RateLimited is a call over its caller's limits.rate: it was refused
	// before it ran, and details.retry_after says in how many seconds a
	// call may succeed.
	RateLimited    Kind = "rate_limited"
	BudgetExceeded Kind = "budget_exceeded"
	Cancelled      Kind = "cancelled"
	// ElicitationRequired is a request the server would not serve until
	// the person completes the URL-mode elicitations it named (MCP error
	// -32042): the cause says which.
	ElicitationRequired Kind = "elicitation_required"
	Config              Kind = "config"
	Internal            Kind = "internal"
)

// ErrorType is the seed 002 error_type string for the kind, e.g.
// "validation_error".
func (k Kind) ErrorType() string { return string(k) + "_error" }

// FieldDetail describes one invalid field (seed 002 ValidationErrorDetail).
type FieldDetail struct {
	Field         string `json:"field"`
	Message       string `json:"message"`
	ReceivedValue string `json:"received_value,omitempty"`
	Suggestion    string `json:"suggestion,omitempty"`
	// Received marks that a value was received even when ReceivedValue is
	// empty, so that an empty string shows as "received_value": "" (seed
	// 002's "Title cannot be empty" example) while a missing field shows
	// no received_value at all.
	Received bool `json:"-"`
}

// MarshalJSON renders received_value when a value was received.
func (d FieldDetail) MarshalJSON() ([]byte, error) {
	type plain struct {
		Field         string  `json:"field"`
		Message       string  `json:"message"`
		ReceivedValue *string `json:"received_value,omitempty"`
		Suggestion    string  `json:"suggestion,omitempty"`
	}
	p := plain{Field: d.Field, Message: d.Message, Suggestion: d.Suggestion}
	if d.Received || d.ReceivedValue != "" {
		p.ReceivedValue = &d.ReceivedValue
	}
	return json.Marshal(p)
}

// Error is a classified failure.
type Error struct {
	Kind    Kind
	Message string // safe to show to a user or an AI
	// Fields holds per-field problems, for validation errors.
	Fields []FieldDetail
	// Suggestions are next actions the reader can take.
	Suggestions []string
	// Details holds additional structured context safe to show (server,
	// tool, stderr tail, ...).
	Details map[string]any
	// Err is the underlying cause; it is not part of the rendered JSON.
	Err error
}

// New returns an error of the given kind with a formatted message.
func New(kind Kind, format string, args ...any) *Error {
	return &Error{Kind: kind, Message: fmt.Sprintf(format, args...)}
}

// Wrap returns an error of the given kind whose cause is err.
func Wrap(kind Kind, err error, format string, args ...any) *Error {
	return &Error{Kind: kind, Message: fmt.Sprintf(format, args...), Err: err}
}

// Error implements error. It includes the cause, for logs and terminals.
func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString(e.Message)
	if e.Err != nil {
		msg := e.Err.Error()
		// A cause whose own message this one already quotes adds only
		// what follows that message (its cause's words).
		for c := e.Err; c != nil && msg != ""; c = errors.Unwrap(c) {
			if fe, ok := c.(*Error); ok && fe.Message != "" && strings.Contains(e.Message, fe.Message) && strings.HasPrefix(msg, fe.Message) {
				msg = strings.TrimPrefix(msg[len(fe.Message):], ": ")
			}
		}
		if msg != "" && !strings.Contains(e.Message, msg) {
			b.WriteString(": ")
			b.WriteString(msg)
		}
	}
	for _, f := range e.Fields {
		fmt.Fprintf(&b, "; %s: %s", f.Field, f.Message)
	}
	return b.String()
}

// Unwrap returns the cause.
func (e *Error) Unwrap() error { return e.Err }

// WithSuggestions appends suggestions and returns e.
func (e *Error) WithSuggestions(s ...string) *Error {
	e.Suggestions = append(e.Suggestions, s...)
	return e
}

// WithDetail records one detail and returns e.
func (e *Error) WithDetail(key string, value any) *Error {
	if e.Details == nil {
		e.Details = map[string]any{}
	}
	e.Details[key] = value
	return e
}

// wire is seed 002's ErrorResponse.
type wire struct {
	ErrorType   string         `json:"error_type"`
	Message     string         `json:"message"`
	Details     map[string]any `json:"details,omitempty"`
	Suggestions []string       `json:"suggestions,omitempty"`
}

// MarshalJSON renders seed 002's ErrorResponse. Per-field problems appear
// under details.fields.
func (e *Error) MarshalJSON() ([]byte, error) {
	w := wire{ErrorType: e.Kind.ErrorType(), Message: e.Message, Suggestions: e.Suggestions}
	if len(e.Details) > 0 || len(e.Fields) > 0 {
		w.Details = make(map[string]any, len(e.Details)+1)
		for k, v := range e.Details {
			w.Details[k] = v
		}
		if len(e.Fields) > 0 {
			w.Details["fields"] = e.Fields
		}
	}
	return json.Marshal(w)
}

// KindOf reports the kind of err: the kind of the first *Error in its chain,
// Cancelled for context cancellation, Timeout for deadline expiry, and
// Internal otherwise. KindOf(nil) is "".
func KindOf(err error) Kind {
	if err == nil {
		return ""
	}
	var fe *Error
	if errors.As(err, &fe) {
		return fe.Kind
	}
	var k interface{ FaultKind() Kind }
	if errors.As(err, &k) {
		return k.FaultKind()
	}
	switch {
	case errors.Is(err, context.Canceled):
		return Cancelled
	case errors.Is(err, context.DeadlineExceeded):
		return Timeout
	}
	return Internal
}

// As returns err as an *Error, wrapping an unclassified error as Internal.
func As(err error) *Error {
	if err == nil {
		return nil
	}
	var fe *Error
	if errors.As(err, &fe) {
		return fe
	}
	return &Error{Kind: KindOf(err), Message: err.Error(), Err: err}
}
