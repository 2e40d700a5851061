package control

import (
	"bytes"
	"encoding/json"
	"errors"
	"net/http"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/internal/fault"
)

// errorBody is how an error crosses the socket: seed 002's structured
// error (fault.Error's JSON) and, apart, the text of its cause, so that the
// client's error prints exactly as the server's would.
type errorBody struct {
	Error json.RawMessage `json:"error"`
	Cause string          `json:"cause,omitempty"`
}

// callLine is one line of a call's response stream: progress and what
// the server asks the caller (asks.go), then a result or an error.
type callLine struct {
	Progress *progressWire `json:"progress,omitempty"`
	Ask      *askWire      `json:"ask,omitempty"`
	Log      *logWire      `json:"log,omitempty"`
	Result   *CallResult   `json:"result,omitempty"`
	// Task is the outcome of a streamed task request (its result).
	Task  *TaskAnswer     `json:"task,omitempty"`
	Error json.RawMessage `json:"error,omitempty"`
	Cause string          `json:"cause,omitempty"`
}

// logWire is a log message a server sent during a call, for the caller
// to show (answer.LogReceiver).
type logWire struct {
	Server string `json:"server"`
	//lint:ignore SA1019 shown to the person who made the call.
	Params *mcp.LoggingMessageParams `json:"params"`
}

// progressWire is toolcall.Progress on the wire.
type progressWire struct {
	Processed float64 `json:"processed"`
	Total     float64 `json:"total,omitempty"`
	Message   string  `json:"message,omitempty"`
	Cost      float64 `json:"cost,omitempty"`
}

// encodeError returns err's wire form.
func encodeError(err error) (json.RawMessage, string) {
	fe := fault.As(err)
	b, merr := json.Marshal(fe)
	if merr != nil {
		// Details that do not marshal are dropped rather than losing the error.
		plain := *fe
		plain.Details = nil
		b, _ = json.Marshal(&plain)
	}
	cause := ""
	if fe.Err != nil {
		cause = fe.Err.Error()
	}
	return b, cause
}

// decodeError rebuilds the *fault.Error encodeError sent.
func decodeError(raw json.RawMessage, cause string) error {
	var w struct {
		ErrorType   string                     `json:"error_type"`
		Message     string                     `json:"message"`
		Details     map[string]json.RawMessage `json:"details"`
		Suggestions []string                   `json:"suggestions"`
	}
	if err := json.Unmarshal(raw, &w); err != nil || w.ErrorType == "" {
		return fault.New(fault.Protocol, "the switchboard daemon sent an error that does not decode: %s", bytes.TrimSpace(raw))
	}
	kind := fault.Kind(strings.TrimSuffix(w.ErrorType, "_error"))
	if kind == "" {
		return fault.New(fault.Protocol, "the switchboard daemon sent an error of no kind: %s", bytes.TrimSpace(raw))
	}
	fe := &fault.Error{
		Kind:        kind,
		Message:     w.Message,
		Suggestions: w.Suggestions,
	}
	if cause != "" {
		fe.Err = errors.New(cause)
	}
	for k, v := range w.Details {
		if k == "fields" {
			var fields []map[string]json.RawMessage
			if json.Unmarshal(v, &fields) == nil {
				for _, f := range fields {
					var d fault.FieldDetail
					_ = json.Unmarshal(f["field"], &d.Field)
					_ = json.Unmarshal(f["message"], &d.Message)
					_ = json.Unmarshal(f["suggestion"], &d.Suggestion)
					if rv, ok := f["received_value"]; ok {
						_ = json.Unmarshal(rv, &d.ReceivedValue)
						d.Received = d.ReceivedValue == "" // only an empty value needs the mark
					}
					fe.Fields = append(fe.Fields, d)
				}
				continue
			}
		}
		var val any
		if json.Unmarshal(v, &val) == nil {
			fe = fe.WithDetail(k, val)
		}
	}
	return fe
}

// statusOf is the HTTP status for an error of the given kind.
func statusOf(k fault.Kind) int {
	switch k {
	case fault.Validation:
		return http.StatusBadRequest
	case fault.NotFound:
		return http.StatusNotFound
	case fault.Authentication:
		return http.StatusUnauthorized
	case fault.Authorization:
		return http.StatusForbidden
	case fault.Connection, fault.Protocol, fault.Backend:
		return http.StatusBadGateway
	case fault.Timeout:
		return http.StatusGatewayTimeout
	case fault.LimitExceeded, fault.RateLimited:
		return http.StatusTooManyRequests
	case fault.BudgetExceeded, fault.Config:
		return http.StatusUnprocessableEntity
	case fault.Cancelled:
		return 499 // client closed request
	}
	return http.StatusInternalServerError
}
