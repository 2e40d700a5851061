package store

import (
	"context"
	"database/sql"
	"errors"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/jackc/pgx/v5"

	"github.com/switchboard-mcp/switchboard/internal/fault"
)

// Priority is how urgent a task is.
type Priority string

// The task priorities, lowest first.
const (
	PriorityLow    Priority = "Low"
	PriorityMedium Priority = "Medium"
	PriorityHigh   Priority = "High"
	PriorityUrgent Priority = "Urgent"
)

// DefaultPriority is the priority of a task created without one.
const DefaultPriority = PriorityMedium

// MaxTitleLength is the longest task title, in characters.
const MaxTitleLength = 200

// Priorities returns the valid priorities, lowest first.
func Priorities() []Priority {
	return []Priority{PriorityLow, PriorityMedium, PriorityHigh, PriorityUrgent}
}

// Valid reports whether p is one of [Priorities].
func (p Priority) Valid() bool {
	switch p {
	case PriorityLow, PriorityMedium, PriorityHigh, PriorityUrgent:
		return true
	}
	return false
}

// Task is one to-do item of one user (seed 002's TaskResponse). Times are
// kept to the microsecond and read back in UTC.
type Task struct {
	ID     int64
	UserID string
	Title  string
	// Description is nil when the task has none.
	Description *string
	Completed   bool
	Priority    Priority
	// DueDate is nil when the task has none.
	DueDate   *time.Time
	CreatedAt time.Time
	UpdatedAt time.Time
}

// NewTask is what a task is created from. An empty Priority is
// [DefaultPriority].
type NewTask struct {
	Title       string
	Description *string
	Priority    Priority
	DueDate     *time.Time
}

// Change is an optional change to a field that may be empty: when Set, the
// field becomes Value, and a nil Value clears it.
type Change[T any] struct {
	Set   bool
	Value *T
}

// TaskUpdate changes some fields of a task; nil and unset fields are left
// as they are.
type TaskUpdate struct {
	Title       *string
	Priority    *Priority
	Description Change[string]
	DueDate     Change[time.Time]
}

func (u TaskUpdate) empty() bool {
	return u.Title == nil && u.Priority == nil && !u.Description.Set && !u.DueDate.Set
}

// TaskStore keeps each user's tasks. A task belongs to the user who created
// it: every method takes the user, and another user's task is not found,
// exactly as a task that does not exist. Errors for a missing task are
// *fault.Error of kind NotFound; invalid input is kind Validation.
// Implementations are safe for concurrent use.
type TaskStore interface {
	// List returns the user's tasks, newest first; a non-nil completed
	// keeps only tasks whose completion matches it.
	List(ctx context.Context, userID string, completed *bool) ([]Task, error)
	// Create stores a new, uncompleted task for the user and returns it.
	Create(ctx context.Context, userID string, t NewTask) (Task, error)
	// Get returns one of the user's tasks.
	Get(ctx context.Context, userID string, id int64) (Task, error)
	// Update applies u to one of the user's tasks and returns the result.
	Update(ctx context.Context, userID string, id int64, u TaskUpdate) (Task, error)
	// SetCompleted marks one of the user's tasks completed or not and
	// returns the result.
	SetCompleted(ctx context.Context, userID string, id int64, completed bool) (Task, error)
	// Delete removes one of the user's tasks.
	Delete(ctx context.Context, userID string, id int64) error
}

// Compile-time checks that both engines keep tasks.
var (
	_ TaskStore = (*SQLite)(nil)
	_ TaskStore = (*Postgres)(nil)
)

// TaskDatabase is a TaskStore that owns its database: close it when done.
type TaskDatabase interface {
	TaskStore
	Close() error
}

// OpenTasks opens the database at dsnOrPath for its tasks: a postgres:// or
// postgresql:// URL opens PostgreSQL, anything else is a SQLite file path,
// as with [Open]. The tasks share the database, and its migrations, with
// the call history.
func OpenTasks(ctx context.Context, dsnOrPath string, opts Options) (TaskDatabase, error) {
	if isPostgresDSN(dsnOrPath) {
		return OpenPostgres(ctx, dsnOrPath, opts)
	}
	return OpenSQLite(ctx, dsnOrPath, opts)
}

// checkTitle reports what is wrong with a task title, or "".
func checkTitle(title string) string {
	switch {
	case strings.TrimSpace(title) == "":
		return "title cannot be empty"
	case utf8.RuneCountInString(title) > MaxTitleLength:
		return "title is longer than 200 characters"
	}
	return ""
}

func checkUser(userID string) error {
	if userID == "" {
		return fault.New(fault.Validation, "no user given for the task")
	}
	return nil
}

func taskValidation(field, msg string) error {
	e := fault.New(fault.Validation, "invalid task: %s", msg)
	e.Fields = []fault.FieldDetail{{Field: field, Message: msg}}
	return e
}

// prepareNewTask checks t and returns it as it is stored.
func prepareNewTask(userID string, t NewTask) (NewTask, error) {
	if err := checkUser(userID); err != nil {
		return t, err
	}
	if msg := checkTitle(t.Title); msg != "" {
		return t, taskValidation("title", msg)
	}
	if t.Priority == "" {
		t.Priority = DefaultPriority
	}
	if !t.Priority.Valid() {
		return t, taskValidation("priority", "priority must be Low, Medium, High or Urgent")
	}
	t.Title = cleanText(t.Title)
	t.Description = cleanTextPtr(t.Description)
	t.DueDate = dbTimePtr(t.DueDate)
	return t, nil
}

// prepareTaskUpdate checks u and returns it as it is stored.
func prepareTaskUpdate(userID string, u TaskUpdate) (TaskUpdate, error) {
	if err := checkUser(userID); err != nil {
		return u, err
	}
	if u.Title != nil {
		if msg := checkTitle(*u.Title); msg != "" {
			return u, taskValidation("title", msg)
		}
		t := cleanText(*u.Title)
		u.Title = &t
	}
	if u.Priority != nil && !u.Priority.Valid() {
		return u, taskValidation("priority", "priority must be Low, Medium, High or Urgent")
	}
	u.Description.Value = cleanTextPtr(u.Description.Value)
	u.DueDate.Value = dbTimePtr(u.DueDate.Value)
	return u, nil
}

func cleanTextPtr(s *string) *string {
	if s == nil {
		return nil
	}
	c := cleanText(*s)
	return &c
}

func dbTimePtr(t *time.Time) *time.Time {
	if t == nil {
		return nil
	}
	c := dbTime(*t)
	return &c
}

func taskNotFound(id int64) error {
	return fault.New(fault.NotFound, "no task %d", id).
		WithSuggestions("list your tasks to find the task's ID")
}

func isNoRows(err error) bool {
	return errors.Is(err, sql.ErrNoRows) || errors.Is(err, pgx.ErrNoRows)
}

// taskColumns are the columns of tasks, in the order scanTask uses.
const taskColumns = "id, user_id, title, description, completed, priority, due_date, created_at, updated_at"

// bind replaces each ? in q with the dialect's placeholder, in order.
func (d dialect) bind(q string) string {
	var b strings.Builder
	n := 0
	for _, r := range q {
		if r == '?' {
			n++
			b.WriteString(d.param(n))
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

func (d dialect) listTasksSQL(userID string, completed *bool) (string, []any) {
	q := "SELECT " + taskColumns + " FROM tasks WHERE user_id = ?"
	args := []any{userID}
	if completed != nil {
		q += " AND completed = ?"
		args = append(args, *completed)
	}
	return d.bind(q + " ORDER BY id DESC"), args
}

func (d dialect) insertTaskSQL(userID string, t NewTask, now time.Time) (string, []any) {
	q := "INSERT INTO tasks (user_id, title, description, completed, priority, due_date, created_at, updated_at) " +
		"VALUES (?, ?, ?, ?, ?, ?, ?, ?) RETURNING " + taskColumns
	return d.bind(q), []any{userID, t.Title, textArg(t.Description), false, string(t.Priority),
		d.timePtrArg(t.DueDate), d.timeArg(now), d.timeArg(now)}
}

func (d dialect) getTaskSQL(userID string, id int64) (string, []any) {
	return d.bind("SELECT " + taskColumns + " FROM tasks WHERE user_id = ? AND id = ?"), []any{userID, id}
}

func (d dialect) updateTaskSQL(userID string, id int64, u TaskUpdate, now time.Time) (string, []any) {
	var (
		sets []string
		args []any
	)
	set := func(col string, v any) {
		sets = append(sets, col+" = ?")
		args = append(args, v)
	}
	if u.Title != nil {
		set("title", *u.Title)
	}
	if u.Priority != nil {
		set("priority", string(*u.Priority))
	}
	if u.Description.Set {
		set("description", textArg(u.Description.Value))
	}
	if u.DueDate.Set {
		set("due_date", d.timePtrArg(u.DueDate.Value))
	}
	set("updated_at", d.timeArg(now))
	q := "UPDATE tasks SET " + strings.Join(sets, ", ") + " WHERE user_id = ? AND id = ? RETURNING " + taskColumns
	return d.bind(q), append(args, userID, id)
}

func (d dialect) completeTaskSQL(userID string, id int64, completed bool, now time.Time) (string, []any) {
	q := "UPDATE tasks SET completed = ?, updated_at = ? WHERE user_id = ? AND id = ? RETURNING " + taskColumns
	return d.bind(q), []any{completed, d.timeArg(now), userID, id}
}

func (d dialect) deleteTaskSQL(userID string, id int64) (string, []any) {
	return d.bind("DELETE FROM tasks WHERE user_id = ? AND id = ?"), []any{userID, id}
}

func (d dialect) timePtrArg(t *time.Time) any {
	if t == nil {
		return nil
	}
	return d.timeArg(*t)
}

func textArg(s *string) any {
	if s == nil {
		return nil
	}
	return *s
}

func scanTask(sc rowScanner) (Task, error) {
	var (
		t                 Task
		priority          string
		desc              nullString
		due, created, upd nullTime
		completed         bool
	)
	if err := sc.Scan(&t.ID, &t.UserID, &t.Title, &desc, &completed, &priority, &due, &created, &upd); err != nil {
		return Task{}, err
	}
	if desc.valid {
		t.Description = &desc.s
	}
	if !due.t.IsZero() {
		t.DueDate = &due.t
	}
	t.Completed, t.Priority = completed, Priority(priority)
	t.CreatedAt, t.UpdatedAt = created.t, upd.t
	return t, nil
}

// taskNow is the time a task is created or changed, as stored.
func taskNow() time.Time { return dbTime(time.Now()) }
