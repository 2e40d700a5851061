package store

import (
	"context"
	"fmt"
)

// List implements TaskStore.
func (p *Postgres) List(ctx context.Context, userID string, completed *bool) ([]Task, error) {
	if err := checkUser(userID); err != nil {
		return nil, err
	}
	q, args := postgresDialect.listTasksSQL(userID, completed)
	rows, err := p.pool.Query(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("listing tasks: %w", err)
	}
	defer rows.Close()
	return collect(rows, scanTask, "listing tasks")
}

// Create implements TaskStore.
func (p *Postgres) Create(ctx context.Context, userID string, t NewTask) (Task, error) {
	t, err := prepareNewTask(userID, t)
	if err != nil {
		return Task{}, err
	}
	q, args := postgresDialect.insertTaskSQL(userID, t, taskNow())
	task, err := scanTask(p.pool.QueryRow(ctx, q, args...))
	if err != nil {
		return Task{}, fmt.Errorf("creating a task: %w", err)
	}
	return task, nil
}

// Get implements TaskStore.
func (p *Postgres) Get(ctx context.Context, userID string, id int64) (Task, error) {
	q, args := postgresDialect.getTaskSQL(userID, id)
	return p.oneTask(ctx, id, "reading", q, args)
}

// Update implements TaskStore. An update that changes nothing returns the
// task as it is.
func (p *Postgres) Update(ctx context.Context, userID string, id int64, u TaskUpdate) (Task, error) {
	u, err := prepareTaskUpdate(userID, u)
	if err != nil {
		return Task{}, err
	}
	if u.empty() {
		return p.Get(ctx, userID, id)
	}
	q, args := postgresDialect.updateTaskSQL(userID, id, u, taskNow())
	return p.oneTask(ctx, id, "updating", q, args)
}

// SetCompleted implements TaskStore.
func (p *Postgres) SetCompleted(ctx context.Context, userID string, id int64, completed bool) (Task, error) {
	q, args := postgresDialect.completeTaskSQL(userID, id, completed, taskNow())
	return p.oneTask(ctx, id, "completing", q, args)
}

// Delete implements TaskStore.
func (p *Postgres) Delete(ctx context.Context, userID string, id int64) error {
	q, args := postgresDialect.deleteTaskSQL(userID, id)
	tag, err := p.pool.Exec(ctx, q, args...)
	if err != nil {
		return fmt.Errorf("deleting task %d: %w", id, err)
	}
	if tag.RowsAffected() == 0 {
		return taskNotFound(id)
	}
	return nil
}

// oneTask runs q, which returns at most one task.
func (p *Postgres) oneTask(ctx context.Context, id int64, doing, q string, args []any) (Task, error) {
	t, err := scanTask(p.pool.QueryRow(ctx, q, args...))
	if isNoRows(err) {
		return Task{}, taskNotFound(id)
	}
	if err != nil {
		return Task{}, fmt.Errorf("%s task %d: %w", doing, id, err)
	}
	return t, nil
}
