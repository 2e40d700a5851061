package hooks

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strconv"

	"github.com/switchboard-mcp/switchboard/internal/fault"
)

// maxEventBody bounds the JSON body of POST /hooks/events/NAME.
const maxEventBody = 1 << 20

// EventPath is the pattern Handler serves.
const EventPath = "POST /hooks/events/{name}"

// Handler serves POST /hooks/events/{name}: the JSON object body holds the
// event's fields (an empty body is no fields). By default the event is
// queued and the answer is 202 with {"event_id": ...}; with ?wait=true the
// answer is 200 with the Report once every hook has finished (Blocked
// says whether a hook denied the event). Errors are seed 002 JSON:
// 400 for a bad name or body. Authentication is the caller's: mount it
// behind the gateway's token check.
func (e *Engine) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc(EventPath, e.serveEvent)
	return mux
}

func (e *Engine) serveEvent(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("name")
	fields := map[string]any{}
	body, err := io.ReadAll(io.LimitReader(r.Body, maxEventBody+1))
	switch {
	case err != nil:
		writeError(w, http.StatusBadRequest, fault.Wrap(fault.Validation, err, "reading the request body"))
		return
	case len(body) > maxEventBody:
		writeError(w, http.StatusRequestEntityTooLarge, fault.New(fault.Validation, "the event body is larger than %d bytes", maxEventBody))
		return
	case len(body) > 0:
		dec := json.NewDecoder(bytes.NewReader(body))
		dec.UseNumber()
		if err := dec.Decode(&fields); err != nil || fields == nil {
			writeError(w, http.StatusBadRequest, fault.New(fault.Validation, "the body must be a JSON object of event fields").WithSuggestions(`e.g. {"feature": "003-user-auth"}`))
			return
		}
	}
	wait, _ := strconv.ParseBool(r.URL.Query().Get("wait"))
	if !wait {
		id, err := e.Emit(r.Context(), name, fields)
		if err != nil {
			writeError(w, http.StatusBadRequest, err)
			return
		}
		writeJSON(w, http.StatusAccepted, map[string]string{"event_id": id})
		return
	}
	rep, err := e.Fire(r.Context(), name, fields)
	if err != nil {
		status := http.StatusBadRequest
		if fault.KindOf(err) == fault.Cancelled {
			status = http.StatusServiceUnavailable
		}
		writeError(w, status, err)
		return
	}
	writeJSON(w, http.StatusOK, rep)
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

func writeError(w http.ResponseWriter, status int, err error) {
	var fe *fault.Error
	if !errors.As(err, &fe) {
		fe = fault.As(err)
	}
	writeJSON(w, status, map[string]any{"error": fe})
}
