// Package taskapi is the reference task backend that seed 002's task MCP
// server sits in front of: a small JSON-over-HTTP service that keeps each
// user's to-do list in a [store.TaskStore].
//
// The caller is a trusted service, not an end user: it authenticates with a
// shared service token (Authorization: Bearer) and names the user it acts
// for in the X-User-ID header. Every task belongs to one user; another
// user's task is reported as not found, never as forbidden, so that task
// IDs reveal nothing. Errors are seed 002's ErrorResponse, rendered by
// [fault.Error]. GET /openapi.json describes the API.
//
// [NewHandler] returns the http.Handler; the CLI serves it
// (switchboard builtin task-api).
package taskapi

import (
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"errors"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/switchboard-mcp/switchboard/internal/builtin/taskwire"
	"github.com/switchboard-mcp/switchboard/internal/fault"
	"github.com/switchboard-mcp/switchboard/internal/store"
)

// MaxBodyBytes is the largest request body accepted; larger ones are
// answered 413.
const MaxBodyBytes = 1 << 20

// MaxUserIDLength is the longest X-User-ID accepted, in characters.
const MaxUserIDLength = taskwire.MaxUserIDLength

// Header names.
const (
	headerUserID    = "X-User-ID"
	headerRequestID = "X-Request-ID"
)

// Log attribute keys.
const (
	logKeyRequestID = "request_id"
	logKeyUserID    = "user_id"
	logKeyMethod    = "method"
	logKeyPath      = "path"
	logKeyStatus    = "status"
	logKeyDuration  = "duration"
	logKeyError     = "error"
)

// Options configures NewHandler.
type Options struct {
	// Store keeps the tasks. Required.
	Store store.TaskStore
	// ServiceToken is the shared secret callers send as
	// "Authorization: Bearer <token>". Required.
	ServiceToken string
	// Logger receives one event per request; nil discards them.
	Logger *slog.Logger
}

type handler struct {
	store     store.TaskStore
	tokenHash [sha256.Size]byte
	log       *slog.Logger
	mux       *http.ServeMux
	openapi   []byte
}

// route is one operation of the API. The OpenAPI document and the router
// are both built from the routes.
type route struct {
	method, path string
	// auth says whether the operation needs the service token and a user.
	auth   bool
	handle func(h *handler, w http.ResponseWriter, r *http.Request, user string) error
}

var routes = []route{
	{http.MethodGet, "/tasks", true, (*handler).listTasks},
	{http.MethodPost, "/tasks", true, (*handler).createTask},
	{http.MethodGet, "/tasks/{id}", true, (*handler).getTask},
	{http.MethodPut, "/tasks/{id}", true, (*handler).updateTask},
	{http.MethodPatch, "/tasks/{id}", true, (*handler).completeTask},
	{http.MethodDelete, "/tasks/{id}", true, (*handler).deleteTask},
	{http.MethodGet, "/openapi.json", false, (*handler).serveOpenAPI},
	{http.MethodGet, "/healthz", false, (*handler).healthz},
}

// NewHandler returns the task API. It fails if the store or the service
// token is missing.
func NewHandler(opts Options) (http.Handler, error) {
	if opts.Store == nil {
		return nil, fault.New(fault.Config, "the task API needs a task store")
	}
	if opts.ServiceToken == "" {
		return nil, fault.New(fault.Config, "the task API needs a service token").
			WithSuggestions("set SWITCHBOARD_TASKS_TOKEN to a long random secret")
	}
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	doc, err := openAPIJSON()
	if err != nil {
		return nil, err
	}
	h := &handler{
		store:     opts.Store,
		tokenHash: sha256.Sum256([]byte(opts.ServiceToken)),
		log:       log,
		mux:       http.NewServeMux(),
		openapi:   doc,
	}
	allowed := map[string][]string{}
	for _, rt := range routes {
		h.mux.Handle(rt.method+" "+rt.path, h.operation(rt))
		allowed[rt.path] = append(allowed[rt.path], rt.method)
	}
	// A known path with another method is 405, anything else 404, both
	// in seed 002's error shape rather than the mux's plain text.
	for path, methods := range allowed {
		allow := strings.Join(methods, ", ")
		h.mux.HandleFunc(path, func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Allow", allow)
			writeError(w, r, http.StatusMethodNotAllowed, fault.New(fault.Validation,
				"method %s is not allowed on %s", r.Method, path).WithSuggestions("use one of: "+allow))
		})
	}
	h.mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		writeError(w, r, http.StatusNotFound, fault.New(fault.NotFound, "no such endpoint: %s", r.URL.Path).
			WithSuggestions("see GET /openapi.json for the endpoints"))
	})
	return h, nil
}

// ServeHTTP logs each request once, after it is answered.
func (h *handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	id := requestID(r)
	w.Header().Set(headerRequestID, id)
	rec := &recorder{ResponseWriter: w, status: http.StatusOK}
	h.mux.ServeHTTP(rec, r)
	attrs := []slog.Attr{
		slog.String(logKeyRequestID, id),
		slog.String(logKeyUserID, rec.user),
		slog.String(logKeyMethod, r.Method),
		slog.String(logKeyPath, r.URL.Path),
		slog.Int(logKeyStatus, rec.status),
		slog.Duration(logKeyDuration, time.Since(start)),
	}
	level := slog.LevelInfo
	if rec.err != nil {
		level = slog.LevelError
		attrs = append(attrs, slog.String(logKeyError, rec.err.Error()))
	}
	h.log.LogAttrs(r.Context(), level, "task api request", attrs...)
}

// operation wraps a route's handler with authentication and error
// rendering.
func (h *handler) operation(rt route) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var user string
		if rt.auth {
			var err error
			if user, err = h.authenticate(r); err != nil {
				w.Header().Set("WWW-Authenticate", `Bearer realm="switchboard-tasks"`)
				writeError(w, r, http.StatusUnauthorized, err)
				return
			}
			if rec, ok := w.(*recorder); ok {
				rec.user = user
			}
		}
		if err := rt.handle(h, w, r, user); err != nil {
			writeFault(w, r, err)
		}
	})
}

// authenticate checks the service token and returns the user the caller
// acts for.
func (h *handler) authenticate(r *http.Request) (string, error) {
	scheme, token, ok := strings.Cut(r.Header.Get("Authorization"), " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") || token == "" {
		return "", fault.New(fault.Authentication, "missing service token").
			WithSuggestions("send the header Authorization: Bearer <service token>")
	}
	// Comparing hashes keeps the comparison constant-time whatever the
	// lengths.
	got := sha256.Sum256([]byte(strings.TrimSpace(token)))
	if subtle.ConstantTimeCompare(got[:], h.tokenHash[:]) != 1 {
		return "", fault.New(fault.Authentication, "invalid service token").
			WithSuggestions("check that the MCP server and the task API share the same service token")
	}
	user := r.Header.Get(headerUserID)
	if user == "" {
		return "", fault.New(fault.Authentication, "missing user: the %s header is required", headerUserID).
			WithSuggestions("send the ID of the user the request acts for in the " + headerUserID + " header")
	}
	if problem := taskwire.UserIDProblem(user); problem != "" {
		return "", fault.New(fault.Authentication, "invalid user: the %s header %s", headerUserID, problem)
	}
	return user, nil
}

// requestID is the caller's X-Request-ID when it is short and printable,
// else a new random one.
func requestID(r *http.Request) string {
	id := r.Header.Get(headerRequestID)
	if id != "" && len(id) <= 128 && strings.IndexFunc(id, func(c rune) bool {
		return c < '!' || c > '~'
	}) < 0 {
		return id
	}
	return strings.ToLower(rand.Text())
}

// recorder remembers what the log event needs.
type recorder struct {
	http.ResponseWriter
	status int
	user   string
	err    error // the internal cause of a 5xx
}

func (r *recorder) WriteHeader(status int) {
	r.status = status
	r.ResponseWriter.WriteHeader(status)
}

func (r *recorder) Unwrap() http.ResponseWriter { return r.ResponseWriter }

func (h *handler) healthz(w http.ResponseWriter, r *http.Request, _ string) error {
	writeJSON(w, http.StatusOK, map[string]string{"status": "ok"})
	return nil
}

func (h *handler) serveOpenAPI(w http.ResponseWriter, r *http.Request, _ string) error {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	w.Write(h.openapi)
	return nil
}

// errorStatus is the HTTP status for an error kind.
func errorStatus(k fault.Kind) int {
	switch k {
	case fault.Validation:
		return http.StatusUnprocessableEntity
	case fault.NotFound:
		return http.StatusNotFound
	case fault.Authentication:
		return http.StatusUnauthorized
	case fault.Authorization:
		return http.StatusForbidden
	case fault.LimitExceeded:
		return http.StatusRequestEntityTooLarge
	}
	return http.StatusInternalServerError
}

// writeFault answers with err. Errors the client may see keep their
// message; anything else is a 500 backend_error whose cause is only
// logged.
func writeFault(w http.ResponseWriter, r *http.Request, err error) {
	var fe *fault.Error
	if errors.As(err, &fe) {
		if status := errorStatus(fe.Kind); status != http.StatusInternalServerError {
			writeError(w, r, status, fe)
			return
		}
	}
	if rec, ok := w.(*recorder); ok {
		rec.err = err
	}
	writeError(w, r, http.StatusInternalServerError, fault.New(fault.Backend, "the task backend failed").
		WithSuggestions("try again later; if it keeps failing, check the task API's log for the request ID"))
}

func writeError(w http.ResponseWriter, _ *http.Request, status int, err error) {
	writeJSON(w, status, fault.As(err))
}
