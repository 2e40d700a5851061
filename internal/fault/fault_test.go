package fault_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/switchboard-mcp/switchboard/internal/fault"
)

func TestMarshalJSON(t *testing.T) {
	e := fault.New(fault.Validation, "task creation failed due to invalid input").
		WithSuggestions("Provide a valid title (1-200 characters)").
		WithDetail("tool", "create_task")
	e.Fields = []fault.FieldDetail{{Field: "title", Message: "Title cannot be empty", ReceivedValue: "", Suggestion: "Provide a task title (1-200 characters)"}}
	e.Err = errors.New("internal detail that must not be shown")
	got, err := json.Marshal(e)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(got, &m); err != nil {
		t.Fatal(err)
	}
	want := map[string]any{
		"error_type": "validation_error",
		"message":    "task creation failed due to invalid input",
		"details": map[string]any{
			"tool":   "create_task",
			"fields": []any{map[string]any{"field": "title", "message": "Title cannot be empty", "suggestion": "Provide a task title (1-200 characters)"}},
		},
		"suggestions": []any{"Provide a valid title (1-200 characters)"},
	}
	if diff := cmp.Diff(want, m); diff != "" {
		t.Errorf("JSON mismatch (-want +got):\n%s", diff)
	}
}

func TestFieldDetailReceivedValue(t *testing.T) {
	tests := []struct {
		d    fault.FieldDetail
		want string
	}{
		{fault.FieldDetail{Field: "title", Message: "Title cannot be empty", Received: true}, `{"field":"title","message":"Title cannot be empty","received_value":""}`},
		{fault.FieldDetail{Field: "title", Message: "title is required"}, `{"field":"title","message":"title is required"}`},
		{fault.FieldDetail{Field: "due_date", Message: "bad", ReceivedValue: "tomorrow"}, `{"field":"due_date","message":"bad","received_value":"tomorrow"}`},
	}
	for _, tt := range tests {
		got, err := json.Marshal(tt.d)
		if err != nil || string(got) != tt.want {
			t.Errorf("Marshal(%+v) = %s, %v; want %s", tt.d, got, err, tt.want)
		}
	}
}

func TestKindOf(t *testing.T) {
	tests := []struct {
		err  error
		want fault.Kind
	}{
		{nil, ""},
		{fault.New(fault.NotFound, "x"), fault.NotFound},
		{fmt.Errorf("calling: %w", fault.New(fault.Timeout, "slow")), fault.Timeout},
		{context.Canceled, fault.Cancelled},
		{fmt.Errorf("wrapped: %w", context.DeadlineExceeded), fault.Timeout},
		{errors.New("plain"), fault.Internal},
		{kinded{}, fault.Config},
	}
	for _, tt := range tests {
		if got := fault.KindOf(tt.err); got != tt.want {
			t.Errorf("KindOf(%v) = %q, want %q", tt.err, got, tt.want)
		}
	}
}

type kinded struct{}

func (kinded) Error() string         { return "kinded" }
func (kinded) FaultKind() fault.Kind { return fault.Config }

func TestErrorAndAs(t *testing.T) {
	cause := errors.New("dial tcp: refused")
	e := fault.Wrap(fault.Connection, cause, "connecting to %s", "github")
	if got, want := e.Error(), "connecting to github: dial tcp: refused"; got != want {
		t.Errorf("Error() = %q, want %q", got, want)
	}
	if !errors.Is(e, cause) {
		t.Error("errors.Is does not reach the cause")
	}
	var fe *fault.Error
	if !errors.As(fmt.Errorf("outer: %w", e), &fe) || fe.Kind != fault.Connection {
		t.Errorf("errors.As: got %v, want the connection error", fe)
	}
	if got := fault.As(errors.New("plain")); got.Kind != fault.Internal || got.Message != "plain" {
		t.Errorf("As(plain) = %+v, want an internal error with the message", got)
	}
	if fault.As(nil) != nil {
		t.Error("As(nil) is not nil")
	}
}
