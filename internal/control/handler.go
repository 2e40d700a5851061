package control

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"

	"github.com/switchboard-mcp/switchboard/internal/answer"
	"github.com/switchboard-mcp/switchboard/internal/fault"
	"github.com/switchboard-mcp/switchboard/internal/store"
	"github.com/switchboard-mcp/switchboard/internal/toolcall"
)

// Log attribute keys.
const (
	logKeyMethod = "method"
	logKeyPath   = "path"
	logKeyKind   = "kind"
	logKeyErr    = "err"
)

// maxBody bounds a request body.
const maxBody = 8 << 20

// handler serves a Backend over HTTP+JSON.
type handler struct {
	b      Backend
	logger *slog.Logger
	// asks are the questions sent to callers, waiting for their answers.
	asks waiting
}

// NewHandler serves b as HTTP+JSON under /v1/. Errors are seed 002
// structured errors with a status that fits their kind; a call streams its
// progress as JSON lines before its result, and is cancelled when the
// client goes away. A nil logger discards.
func NewHandler(b Backend, logger *slog.Logger) http.Handler {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	h := &handler{b: b, logger: logger}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /v1/status", func(w http.ResponseWriter, r *http.Request) {
		v, err := h.b.Status(r.Context())
		h.reply(w, r, v, err)
	})
	mux.HandleFunc("GET /v1/servers", func(w http.ResponseWriter, r *http.Request) {
		v, err := h.b.Servers(r.Context())
		h.reply(w, r, v, err)
	})
	mux.HandleFunc("POST /v1/servers/{name}/{action}", func(w http.ResponseWriter, r *http.Request) {
		v, err := h.b.ServerAction(r.Context(), r.PathValue("action"), r.PathValue("name"))
		h.reply(w, r, v, err)
	})
	mux.HandleFunc("GET /v1/tools", func(w http.ResponseWriter, r *http.Request) {
		v, err := h.b.Tools(r.Context(), r.URL.Query().Get("server"))
		h.reply(w, r, v, err)
	})
	mux.HandleFunc("GET /v1/tools/{server}/{name}", func(w http.ResponseWriter, r *http.Request) {
		v, err := h.b.Tool(r.Context(), r.PathValue("server"), r.PathValue("name"))
		h.reply(w, r, v, err)
	})
	mux.HandleFunc("POST /v1/call", h.call)
	mux.HandleFunc("POST /v1/answer", h.postAnswer)
	mux.HandleFunc("POST /v1/task", func(w http.ResponseWriter, r *http.Request) {
		var req TaskRequest
		if !h.decode(w, r, &req) {
			return
		}
		tb, ok := b.(Tasker)
		if !ok {
			h.fail(w, r, missing("tasks"))
			return
		}
		if req.Answers && req.Method == TaskResult {
			// The server may ask while the result is awaited: streamed
			// as a call's questions are.
			h.stream(w, r, true, nil, func(ctx context.Context) (callLine, error) {
				v, err := tb.Task(ctx, req)
				return callLine{Task: v}, err
			})
			return
		}
		v, err := tb.Task(r.Context(), req)
		h.reply(w, r, v, err)
	})
	mux.HandleFunc("GET /v1/prompts", func(w http.ResponseWriter, r *http.Request) {
		v, err := h.b.Prompts(r.Context(), r.URL.Query().Get("server"))
		h.reply(w, r, v, err)
	})
	mux.HandleFunc("POST /v1/prompt", func(w http.ResponseWriter, r *http.Request) {
		var req PromptRequest
		if !h.decode(w, r, &req) {
			return
		}
		v, err := h.b.Prompt(r.Context(), req)
		h.reply(w, r, v, err)
	})
	mux.HandleFunc("GET /v1/resources", func(w http.ResponseWriter, r *http.Request) {
		v, err := h.b.Resources(r.Context(), r.URL.Query().Get("server"))
		h.reply(w, r, v, err)
	})
	mux.HandleFunc("POST /v1/read", func(w http.ResponseWriter, r *http.Request) {
		var req ReadRequest
		if !h.decode(w, r, &req) {
			return
		}
		v, err := h.b.ReadResource(r.Context(), req.Server, req.URI)
		h.reply(w, r, v, err)
	})
	mux.HandleFunc("POST /v1/history", func(w http.ResponseWriter, r *http.Request) {
		var f store.CallFilter
		if !h.decode(w, r, &f) {
			return
		}
		v, err := h.b.History(r.Context(), f)
		h.reply(w, r, v, err)
	})
	mux.HandleFunc("GET /v1/history/{id}", func(w http.ResponseWriter, r *http.Request) {
		v, err := h.b.HistoryCall(r.Context(), r.PathValue("id"))
		h.reply(w, r, v, err)
	})
	mux.HandleFunc("POST /v1/stop", func(w http.ResponseWriter, r *http.Request) {
		n, err := h.b.Stop(r.Context())
		h.reply(w, r, stopReply{Cancelled: n}, err)
	})
	mux.HandleFunc("POST /v1/resume", func(w http.ResponseWriter, r *http.Request) {
		was, err := h.b.Resume(r.Context())
		h.reply(w, r, resumeReply{WasStopped: was}, err)
	})
	mux.HandleFunc("POST /v1/reload", func(w http.ResponseWriter, r *http.Request) {
		v, err := h.b.Reload(r.Context())
		h.reply(w, r, v, err)
	})
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		h.fail(w, r, fault.New(fault.NotFound, "the control API has no %s %s", r.Method, r.URL.Path))
	})
	return mux
}

// stopReply and resumeReply are the bodies of stop and resume.
type stopReply struct {
	Cancelled int `json:"cancelled"`
}

type resumeReply struct {
	WasStopped bool `json:"was_stopped"`
}

// decode reads a JSON request body into v, or answers with a validation
// error and returns false.
func (h *handler) decode(w http.ResponseWriter, r *http.Request, v any) bool {
	dec := json.NewDecoder(io.LimitReader(r.Body, maxBody))
	if err := dec.Decode(v); err != nil {
		h.fail(w, r, fault.Wrap(fault.Validation, err, "the request body is not valid JSON for %s", r.URL.Path))
		return false
	}
	return true
}

// reply writes v, or the error.
func (h *handler) reply(w http.ResponseWriter, r *http.Request, v any, err error) {
	if err != nil {
		h.fail(w, r, err)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	if err := json.NewEncoder(w).Encode(v); err != nil {
		h.logger.Warn("writing a control reply", logKeyPath, r.URL.Path, logKeyErr, err)
	}
}

// fail writes err as a structured error.
func (h *handler) fail(w http.ResponseWriter, r *http.Request, err error) {
	kind := fault.KindOf(err)
	h.logger.Debug("control request failed", logKeyMethod, r.Method, logKeyPath, r.URL.Path, logKeyKind, string(kind), logKeyErr, err)
	raw, cause := encodeError(err)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(statusOf(kind))
	_ = json.NewEncoder(w).Encode(errorBody{Error: raw, Cause: cause})
}

// call runs a tool call, streaming progress lines and then the result or
// the error. The call runs under the request's context, so a client that
// goes away cancels it.
func (h *handler) call(w http.ResponseWriter, r *http.Request) {
	var req CallRequest
	if !h.decode(w, r, &req) {
		return
	}
	lines := make(chan toolcall.Progress, 16)
	req.OnProgress = func(p toolcall.Progress) {
		select {
		case lines <- p:
		default: // progress is advisory; a slow reader loses some
		}
	}
	h.stream(w, r, req.Answers, lines, func(ctx context.Context) (callLine, error) {
		res, err := h.b.Call(ctx, req)
		return callLine{Result: res}, err
	})
}

// stream answers a request whose outcome comes after a while — a call, a
// task's result — as JSON lines: the progress run reports on lines (nil:
// none), the questions its server asks (when answers: the caller answers
// them with /v1/answer), then its outcome, last (an error line, or the
// line run returns). The work is cancelled when the client goes away.
func (h *handler) stream(w http.ResponseWriter, r *http.Request, answers bool, lines chan toolcall.Progress, run func(context.Context) (callLine, error)) {
	w.Header().Set("Content-Type", "application/x-ndjson")
	w.WriteHeader(http.StatusOK)
	flusher, _ := w.(http.Flusher)
	enc := json.NewEncoder(w)
	write := func(l callLine) {
		if err := enc.Encode(l); err != nil {
			h.logger.Debug("writing a call line", logKeyErr, err)
			return
		}
		if flusher != nil {
			flusher.Flush()
		}
	}
	progress := func(p toolcall.Progress) callLine {
		return callLine{Progress: &progressWire{Processed: p.Processed, Total: p.Total, Message: p.Message, Cost: p.Cost}}
	}
	type outcome struct {
		line callLine
		err  error
	}
	done := make(chan outcome, 1)
	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	asks := make(chan askWire)
	logs := make(chan logWire, 64)
	ended := make(chan struct{})
	defer close(ended) // nothing reads asks once this returns
	if answers {
		ctx = answer.With(ctx, &remoteAnswerer{w: &h.asks, out: asks, logs: logs, ended: ended})
	}
	go func() {
		l, err := run(ctx)
		done <- outcome{l, err}
	}()
	for {
		select {
		case p := <-lines:
			write(progress(p))
		case a := <-asks:
			write(callLine{Ask: &a})
		case l := <-logs:
			write(callLine{Log: &l})
		case o := <-done:
			for drained := false; !drained; {
				select {
				case p := <-lines:
					write(progress(p))
				case l := <-logs:
					write(callLine{Log: &l})
				default:
					drained = true
				}
			}
			if o.err != nil {
				raw, cause := encodeError(o.err)
				write(callLine{Error: raw, Cause: cause})
				return
			}
			write(o.line)
			return
		}
	}
}
