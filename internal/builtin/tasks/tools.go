package tasks

import (
	"encoding/json"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The tool names.
const (
	ToolListTasks         = "list_tasks"
	ToolCreateTask        = "create_task"
	ToolUpdateTask        = "update_task"
	ToolDeleteTask        = "delete_task"
	ToolMarkTaskCompleted = "mark_task_completed"
)

// Priorities are the task priority levels, lowest first.
var Priorities = []string{"Low", "Medium", "High", "Urgent"}

// The tools' input schemas (seed 002's parameter models as JSON Schema).
var (
	listTasksSchema = json.RawMessage(`{
  "type": "object",
  "properties": {},
  "additionalProperties": false
}`)
	createTaskSchema = json.RawMessage(`{
  "type": "object",
  "properties": {
    "title": {"type": "string", "minLength": 1, "maxLength": 200, "pattern": "^[^\u0000]*$", "description": "Task title (required; no NUL characters)", "examples": ["Buy milk", "Finish project report"]},
    "description": {"type": ["string", "null"], "pattern": "^[^\u0000]*$", "description": "Detailed task description (optional; no NUL characters)", "examples": ["Pick up 2% milk from grocery store"]},
    "priority": {"type": "string", "enum": ["Low", "Medium", "High", "Urgent"], "default": "Medium", "description": "Task priority level (default: Medium)"},
    "due_date": {"type": ["string", "null"], "pattern": "^[0-9]{4}-[0-9]{2}-[0-9]{2}(T[0-9]{2}:[0-9]{2}:[0-9]{2}(\\.[0-9]+)?(Z|[+-][0-9]{2}:[0-9]{2})?)?$", "description": "Task due date in ISO 8601 format (optional): RFC 3339, or a date-time without a zone or a date alone, taken as UTC", "examples": ["2025-12-20T10:00:00Z", "2025-12-20"]}
  },
  "required": ["title"],
  "additionalProperties": false
}`)
	updateTaskSchema = json.RawMessage(`{
  "type": "object",
  "properties": {
    "task_id": {"type": "integer", "exclusiveMinimum": 0, "description": "ID of task to update"},
    "title": {"type": "string", "minLength": 1, "maxLength": 200, "pattern": "^[^\u0000]*$", "description": "New task title (optional; no NUL characters)"},
    "description": {"type": ["string", "null"], "pattern": "^[^\u0000]*$", "description": "New task description (optional, null to clear; no NUL characters)"},
    "priority": {"type": "string", "enum": ["Low", "Medium", "High", "Urgent"], "description": "New priority level (optional)"},
    "due_date": {"type": ["string", "null"], "pattern": "^[0-9]{4}-[0-9]{2}-[0-9]{2}(T[0-9]{2}:[0-9]{2}:[0-9]{2}(\\.[0-9]+)?(Z|[+-][0-9]{2}:[0-9]{2})?)?$", "description": "New due date in ISO 8601 format (optional, null to clear): RFC 3339, or a date-time without a zone or a date alone, taken as UTC", "examples": ["2025-12-20T10:00:00Z", "2025-12-20"]}
  },
  "required": ["task_id"],
  "additionalProperties": false
}`)
	deleteTaskSchema = json.RawMessage(`{
  "type": "object",
  "properties": {
    "task_id": {"type": "integer", "exclusiveMinimum": 0, "description": "ID of task to delete"}
  },
  "required": ["task_id"],
  "additionalProperties": false
}`)
	markTaskCompletedSchema = json.RawMessage(`{
  "type": "object",
  "properties": {
    "task_id": {"type": "integer", "exclusiveMinimum": 0, "description": "ID of task to mark as completed"}
  },
  "required": ["task_id"],
  "additionalProperties": false
}`)
)

func boolPtr(b bool) *bool { return &b }

// toolDefs returns the five tools, with descriptions written for an AI.
func toolDefs() []*mcp.Tool {
	return []*mcp.Tool{
		{
			Name: ToolListTasks,
			Description: "List all of the current user's tasks. Returns {\"tasks\": [...]}, each task with id, title, " +
				"description, completed, priority (Low, Medium, High or Urgent), due_date, created_at, updated_at and user_id. " +
				"Call this to answer questions about the todo list, or to find the task_id another tool needs.",
			InputSchema: listTasksSchema,
			Annotations: &mcp.ToolAnnotations{Title: "List tasks", ReadOnlyHint: true, IdempotentHint: true, OpenWorldHint: boolPtr(false)},
		},
		{
			Name: ToolCreateTask,
			Description: "Create a new task for the current user and return it, with the id the backend assigned. " +
				"Only title is required (1-200 characters). priority defaults to Medium; due_date is an ISO 8601 " +
				"date-time such as 2025-12-20T10:00:00Z. Do not call this twice for the same request: it is not idempotent.",
			InputSchema: createTaskSchema,
			Annotations: &mcp.ToolAnnotations{Title: "Create task", DestructiveHint: boolPtr(false), OpenWorldHint: boolPtr(false)},
		},
		{
			Name: ToolUpdateTask,
			Description: "Change a task's title, description, priority or due_date and return the updated task. " +
				"Pass task_id and only the fields to change; omitted fields keep their values. Set description or " +
				"due_date to null to clear it. This tool does not change completion: use mark_task_completed for that. " +
				"Use list_tasks first if you do not know the task_id.",
			InputSchema: updateTaskSchema,
			Annotations: &mcp.ToolAnnotations{Title: "Update task", DestructiveHint: boolPtr(false), IdempotentHint: true, OpenWorldHint: boolPtr(false)},
		},
		{
			Name: ToolDeleteTask,
			Description: "Permanently delete one of the current user's tasks by task_id. This cannot be undone; " +
				"confirm with the user when their intent is unclear, and use list_tasks to find the task_id.",
			InputSchema: deleteTaskSchema,
			Annotations: &mcp.ToolAnnotations{Title: "Delete task", DestructiveHint: boolPtr(true), IdempotentHint: true, OpenWorldHint: boolPtr(false)},
		},
		{
			Name: ToolMarkTaskCompleted,
			Description: "Mark one of the current user's tasks as completed and return the updated task. " +
				"Marking a completed task again is harmless. Use list_tasks to find the task_id.",
			InputSchema: markTaskCompletedSchema,
			Annotations: &mcp.ToolAnnotations{Title: "Mark task completed", DestructiveHint: boolPtr(false), IdempotentHint: true, OpenWorldHint: boolPtr(false)},
		},
	}
}
