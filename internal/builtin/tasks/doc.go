// Package tasks is the stateless task MCP server of seed 002: five tools
// (list_tasks, create_task, update_task, delete_task, mark_task_completed)
// that an AI assistant calls, each validated, attributed to the user named
// in the request's _meta, and forwarded to a REST task backend.
//
// The server keeps no state; the backend is the source of truth. Every
// failure reaches the AI as an isError tool result whose text is seed 002's
// ErrorResponse JSON (see [fault.Error]), never as a JSON-RPC error. Each
// backend request is logged as one structured "backend_request" event.
package tasks
