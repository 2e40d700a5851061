package fault

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestMarshalJSON(t *testing.T) {
	e := New(Validation, "task creation failed due to invalid input").
		WithSuggestions("Provide a valid title (1-200 characters)").
		WithDetail("tool", "create_task")
	e.Fields = []FieldDetail{{Field: "title", Message: "Title cannot be empty", ReceivedValue: "", Suggestion: "Provide a task title (1-200 characters)"}}
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
		d    FieldDetail
		want string
	}{
		{FieldDetail{Field: "title", Message: "Title cannot be empty", Received: true}, `{"field":"title","message":"Title cannot be empty","received_value":""}`},
		{FieldDetail{Field: "title", Message: "title is required"}, `{"field":"title","message":"title is required"}`},
		{FieldDetail{Field: "due_date", Message: "bad", ReceivedValue: "tomorrow"}, `{"field":"due_date","message":"bad","received_value":"tomorrow"}`},
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
		want Kind
	}{
		{nil, ""},
		{New(NotFound, "x"), NotFound},
		{fmt.Errorf("calling: %w", New(Timeout, "slow")), Timeout},
		{context.Canceled, Cancelled},
		{fmt.Errorf("wrapped: %w", context.DeadlineExceeded), Timeout},
		{errors.New("plain"), Internal},
		{kinded{}, Config},
	}
	for _, tt := range tests {
		if got := KindOf(tt.err); got != tt.want {
			t.Errorf("KindOf(%v) = %q, want %q", tt.err, got, tt.want)
		}
	}
}

type kinded struct{}

func (kinded) Error() string   { return "kinded" }
func (kinded) FaultKind() Kind { return Config }

func TestErrorAndAs(t *testing.T) {
	cause := errors.New("dial tcp: refused")
	e := Wrap(Connection, cause, "connecting to %s", "github")
	if got, want := e.Error(), "connecting to github: dial tcp: refused"; got != want {
		t.Errorf("Error() = %q, want %q", got, want)
	}
	if !errors.Is(e, cause) {
		t.Error("errors.Is does not reach the cause")
	}
	var fe *Error
	if !errors.As(fmt.Errorf("outer: %w", e), &fe) || fe.Kind != Connection {
		t.Errorf("errors.As: got %v, want the connection error", fe)
	}
	if got := As(errors.New("plain")); got.Kind != Internal || got.Message != "plain" {
		t.Errorf("As(plain) = %+v, want an internal error with the message", got)
	}
	if As(nil) != nil {
		t.Error("As(nil) is not nil")
	}
}
