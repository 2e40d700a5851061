package taskapi

import (
	"encoding/json"
	"net/http"
	"strconv"
	"time"

	"github.com/switchboard-mcp/switchboard/internal/fault"
	"github.com/switchboard-mcp/switchboard/internal/store"
)

// taskResponse is seed 002's TaskResponse.
type taskResponse struct {
	ID          int64   `json:"id"`
	Title       string  `json:"title"`
	Description *string `json:"description"`
	Completed   bool    `json:"completed"`
	Priority    string  `json:"priority"`
	DueDate     *string `json:"due_date"`
	CreatedAt   string  `json:"created_at"`
	UpdatedAt   string  `json:"updated_at"`
	UserID      string  `json:"user_id"`
}

// wireTime is how times are written: RFC 3339 in UTC.
func wireTime(t time.Time) string { return t.UTC().Format(time.RFC3339Nano) }

func toResponse(t store.Task) taskResponse {
	out := taskResponse{
		ID: t.ID, Title: t.Title, Description: t.Description, Completed: t.Completed,
		Priority: string(t.Priority), CreatedAt: wireTime(t.CreatedAt), UpdatedAt: wireTime(t.UpdatedAt),
		UserID: t.UserID,
	}
	if t.DueDate != nil {
		d := wireTime(*t.DueDate)
		out.DueDate = &d
	}
	return out
}

func (h *handler) listTasks(w http.ResponseWriter, r *http.Request, user string) error {
	var completed *bool
	if q := r.URL.Query(); q.Has("completed") {
		v := q.Get("completed")
		b, err := strconv.ParseBool(v)
		if err != nil || (v != "true" && v != "false") {
			return validationFailed("Listing tasks failed due to invalid input", []fault.FieldDetail{{
				Field: "completed", Message: "completed must be true or false", ReceivedValue: shorten(v),
				Suggestion: "use ?completed=true or ?completed=false, or leave it out for all tasks",
			}})
		}
		completed = &b
	}
	tasks, err := h.store.List(r.Context(), user, completed)
	if err != nil {
		return err
	}
	out := make([]taskResponse, len(tasks))
	for i, t := range tasks {
		out[i] = toResponse(t)
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

func (h *handler) createTask(w http.ResponseWriter, r *http.Request, user string) error {
	t, err := decodeCreate(w, r)
	if err != nil {
		return err
	}
	task, err := h.store.Create(r.Context(), user, t)
	if err != nil {
		return err
	}
	w.Header().Set("Location", "/tasks/"+strconv.FormatInt(task.ID, 10))
	writeJSON(w, http.StatusCreated, toResponse(task))
	return nil
}

func (h *handler) getTask(w http.ResponseWriter, r *http.Request, user string) error {
	id, err := taskID(r)
	if err != nil {
		return err
	}
	task, err := h.store.Get(r.Context(), user, id)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, toResponse(task))
	return nil
}

func (h *handler) updateTask(w http.ResponseWriter, r *http.Request, user string) error {
	id, idErr := taskID(r)
	u, err := decodeUpdate(w, r)
	if err := joinValidation("Task update failed due to invalid input", idErr, err); err != nil {
		return err
	}
	task, err := h.store.Update(r.Context(), user, id, u)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, toResponse(task))
	return nil
}

func (h *handler) completeTask(w http.ResponseWriter, r *http.Request, user string) error {
	id, idErr := taskID(r)
	completed, err := decodeCompletion(w, r)
	if err := joinValidation("Task completion update failed due to invalid input", idErr, err); err != nil {
		return err
	}
	task, err := h.store.SetCompleted(r.Context(), user, id, completed)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, toResponse(task))
	return nil
}

func (h *handler) deleteTask(w http.ResponseWriter, r *http.Request, user string) error {
	id, err := taskID(r)
	if err != nil {
		return err
	}
	if err := h.store.Delete(r.Context(), user, id); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// taskID reads the {id} path segment: a positive integer.
func taskID(r *http.Request) (int64, error) {
	v := r.PathValue("id")
	id, err := strconv.ParseInt(v, 10, 64)
	if err != nil || id <= 0 {
		return 0, validationFailed("Invalid task ID", []fault.FieldDetail{{
			Field: "id", Message: "task ID must be a positive integer", ReceivedValue: shorten(v),
			Suggestion: "use the id of a task from GET /tasks",
		}})
	}
	return id, nil
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	data, err := json.Marshal(v)
	if err != nil {
		status = http.StatusInternalServerError
		data = []byte(`{"error_type":"backend_error","message":"the task backend failed"}`)
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	w.Write(append(data, '\n'))
}
