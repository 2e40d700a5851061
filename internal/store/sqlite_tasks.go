package store

import (
	"context"
	"fmt"
)

// List implements TaskStore.
func (s *SQLite) List(ctx context.Context, userID string, completed *bool) ([]Task, error) {
	if err := checkUser(userID); err != nil {
		return nil, err
	}
	q, args := sqliteDialect.listTasksSQL(userID, completed)
	rows, err := s.read.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("listing tasks: %w", err)
	}
	defer rows.Close()
	return collect(rows, scanTask, "listing tasks")
}

// Create implements TaskStore.
func (s *SQLite) Create(ctx context.Context, userID string, t NewTask) (Task, error) {
	t, err := prepareNewTask(userID, t)
	if err != nil {
		return Task{}, err
	}
	q, args := sqliteDialect.insertTaskSQL(userID, t, taskNow())
	task, err := scanTask(s.write.QueryRowContext(ctx, q, args...))
	if err != nil {
		return Task{}, fmt.Errorf("creating a task: %w", err)
	}
	return task, nil
}

// Get implements TaskStore.
func (s *SQLite) Get(ctx context.Context, userID string, id int64) (Task, error) {
	q, args := sqliteDialect.getTaskSQL(userID, id)
	return s.oneTask(ctx, false, id, "reading", q, args)
}

// Update implements TaskStore. An update that changes nothing returns the
// task as it is.
func (s *SQLite) Update(ctx context.Context, userID string, id int64, u TaskUpdate) (Task, error) {
	u, err := prepareTaskUpdate(userID, u)
	if err != nil {
		return Task{}, err
	}
	if u.empty() {
		return s.Get(ctx, userID, id)
	}
	q, args := sqliteDialect.updateTaskSQL(userID, id, u, taskNow())
	return s.oneTask(ctx, true, id, "updating", q, args)
}

// SetCompleted implements TaskStore.
func (s *SQLite) SetCompleted(ctx context.Context, userID string, id int64, completed bool) (Task, error) {
	q, args := sqliteDialect.completeTaskSQL(userID, id, completed, taskNow())
	return s.oneTask(ctx, true, id, "completing", q, args)
}

// Delete implements TaskStore.
func (s *SQLite) Delete(ctx context.Context, userID string, id int64) error {
	q, args := sqliteDialect.deleteTaskSQL(userID, id)
	res, err := s.write.ExecContext(ctx, q, args...)
	if err != nil {
		return fmt.Errorf("deleting task %d: %w", id, err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return fmt.Errorf("deleting task %d: %w", id, err)
	}
	if n == 0 {
		return taskNotFound(id)
	}
	return nil
}

// oneTask runs q, which returns at most one task.
func (s *SQLite) oneTask(ctx context.Context, write bool, id int64, doing, q string, args []any) (Task, error) {
	db := s.read
	if write {
		db = s.write
	}
	t, err := scanTask(db.QueryRowContext(ctx, q, args...))
	if isNoRows(err) {
		return Task{}, taskNotFound(id)
	}
	if err != nil {
		return Task{}, fmt.Errorf("%s task %d: %w", doing, id, err)
	}
	return t, nil
}
