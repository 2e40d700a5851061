package taskapi

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/switchboard-mcp/switchboard/internal/store"
)

// The OpenAPI 3.1 document served at GET /openapi.json. It is built from
// the same routes and limits as the handler; the tests check that every
// route is described.

type obj = map[string]any

func ref(name string) obj { return obj{"$ref": "#/components/" + name} }

func jsonContent(schema obj) obj {
	return obj{"application/json": obj{"schema": schema}}
}

// operations describes each route, keyed by "METHOD path".
var operations = map[string]obj{
	"GET /tasks": {
		"operationId": "listTasks",
		"summary":     "List the user's tasks, newest first",
		"parameters": []any{obj{
			"name": "completed", "in": "query", "required": false,
			"description": "Keep only completed (true) or open (false) tasks; leave out for all.",
			"schema":      obj{"type": "string", "enum": []string{"true", "false"}},
		}},
		"responses": withErrors(obj{
			"200": obj{"description": "The user's tasks, newest first.",
				"content": jsonContent(obj{"type": "array", "items": ref("schemas/Task")})},
		}, "401", "422", "500"),
	},
	"POST /tasks": {
		"operationId": "createTask",
		"summary":     "Create a task",
		"requestBody": obj{"required": true, "content": jsonContent(ref("schemas/TaskCreate"))},
		"responses": withErrors(obj{
			"201": obj{"description": "The new task.",
				"headers": obj{"Location": obj{"description": "The task's URL.", "schema": obj{"type": "string"}}},
				"content": jsonContent(ref("schemas/Task"))},
		}, "401", "413", "422", "500"),
	},
	"GET /tasks/{id}": {
		"operationId": "getTask",
		"summary":     "Get one of the user's tasks",
		"responses": withErrors(obj{
			"200": obj{"description": "The task.", "content": jsonContent(ref("schemas/Task"))},
		}, "401", "404", "422", "500"),
	},
	"PUT /tasks/{id}": {
		"operationId": "updateTask",
		"summary":     "Update a task's title, description, priority or due date",
		"description": "Fields left out are unchanged; null clears description and due_date.",
		"requestBody": obj{"required": true, "content": jsonContent(ref("schemas/TaskUpdate"))},
		"responses": withErrors(obj{
			"200": obj{"description": "The updated task.", "content": jsonContent(ref("schemas/Task"))},
		}, "401", "404", "413", "422", "500"),
	},
	"PATCH /tasks/{id}": {
		"operationId": "setTaskCompleted",
		"summary":     "Mark a task completed or not",
		"requestBody": obj{"required": true, "content": jsonContent(ref("schemas/CompletionUpdate"))},
		"responses": withErrors(obj{
			"200": obj{"description": "The updated task.", "content": jsonContent(ref("schemas/Task"))},
		}, "401", "404", "413", "422", "500"),
	},
	"DELETE /tasks/{id}": {
		"operationId": "deleteTask",
		"summary":     "Delete a task",
		"responses": withErrors(obj{
			"204": obj{"description": "The task is deleted."},
		}, "401", "404", "422", "500"),
	},
	"GET /openapi.json": {
		"operationId": "getOpenAPI",
		"summary":     "This document",
		"security":    []any{},
		"responses": obj{
			"200": obj{"description": "The OpenAPI 3.1 document.", "content": jsonContent(obj{"type": "object"})},
		},
	},
	"GET /healthz": {
		"operationId": "healthz",
		"summary":     "Liveness check",
		"security":    []any{},
		"responses": obj{
			"200": obj{"description": "The service is up.", "content": jsonContent(obj{
				"type": "object", "required": []string{"status"},
				"properties": obj{"status": obj{"const": "ok"}},
			})},
		},
	},
}

// errorResponses are the shared error responses, by status.
var errorResponses = map[string]string{
	"401": "Unauthorized",
	"404": "NotFound",
	"413": "PayloadTooLarge",
	"422": "ValidationError",
	"500": "BackendError",
}

func withErrors(responses obj, statuses ...string) obj {
	for _, s := range statuses {
		responses[s] = ref("responses/" + errorResponses[s])
	}
	return responses
}

func errorResponse(description, errorType string) obj {
	return obj{"description": description, "content": jsonContent(obj{
		"allOf": []any{
			ref("schemas/ErrorResponse"),
			obj{"properties": obj{"error_type": obj{"const": errorType}}},
		},
	})}
}

func openAPIDocument() obj {
	priorities := []string{}
	for _, p := range store.Priorities() {
		priorities = append(priorities, string(p))
	}
	dateTime := obj{"type": "string", "format": "date-time"}
	nullableDateTime := obj{"type": []string{"string", "null"}, "format": "date-time"}
	title := obj{"type": "string", "minLength": 1, "maxLength": store.MaxTitleLength,
		"description": "Task title, 1-200 characters, not blank, without NUL characters.", "examples": []string{"Buy milk"}}
	description := obj{"type": []string{"string", "null"}, "description": "Task description, without NUL characters; null for none."}
	dueDate := obj{"type": []string{"string", "null"},
		"description": "ISO 8601 date-time (RFC 3339, e.g. 2025-12-20T10:00:00Z); without a zone, or a date " +
			"alone (2025-12-20), it is taken as UTC. Stored to the microsecond.",
		"examples": []string{"2025-12-20T10:00:00Z"}}

	paths := obj{}
	for _, rt := range routes {
		op := operations[rt.method+" "+rt.path]
		item, _ := paths[rt.path].(obj)
		if item == nil {
			item = obj{}
			if strings.Contains(rt.path, "{id}") {
				item["parameters"] = []any{ref("parameters/TaskID")}
			}
			paths[rt.path] = item
		}
		item[strings.ToLower(rt.method)] = op
	}

	return obj{
		"openapi": "3.1.0",
		"info": obj{
			"title":   "Switchboard reference task API",
			"version": "1.0.0",
			"description": "The task backend that seed 002's task MCP server sits in front of. " +
				"A trusted service calls it with a shared service token and names the user it acts for in " +
				"X-User-ID. Each task belongs to one user: another user's task is 404, exactly as a missing " +
				"one, so that IDs reveal nothing; 403 is never sent. Errors are seed 002's ErrorResponse.",
		},
		"security": []any{obj{"serviceToken": []any{}, "userId": []any{}}},
		"paths":    paths,
		"components": obj{
			"securitySchemes": obj{
				"serviceToken": obj{"type": "http", "scheme": "bearer",
					"description": "The shared service token (SWITCHBOARD_TASKS_TOKEN)."},
				"userId": obj{"type": "apiKey", "in": "header", "name": headerUserID,
					"description": fmt.Sprintf("The user the request acts for: 1-%d characters.", MaxUserIDLength)},
			},
			"parameters": obj{
				"TaskID": obj{"name": "id", "in": "path", "required": true,
					"description": "The task's ID, a positive integer.",
					"schema":      obj{"type": "integer", "format": "int64", "minimum": 1}},
			},
			"schemas": obj{
				"Priority": obj{"type": "string", "enum": priorities, "default": string(store.DefaultPriority)},
				"Task": obj{
					"type":                 "object",
					"description":          "Seed 002's TaskResponse. Times are RFC 3339 in UTC.",
					"additionalProperties": false,
					"required": []string{"id", "title", "description", "completed", "priority", "due_date",
						"created_at", "updated_at", "user_id"},
					"properties": obj{
						"id":          obj{"type": "integer", "format": "int64", "minimum": 1},
						"title":       obj{"type": "string", "maxLength": store.MaxTitleLength},
						"description": description,
						"completed":   obj{"type": "boolean"},
						"priority":    ref("schemas/Priority"),
						"due_date":    nullableDateTime,
						"created_at":  dateTime,
						"updated_at":  dateTime,
						"user_id":     obj{"type": "string"},
					},
				},
				"TaskCreate": obj{
					"type": "object", "additionalProperties": false, "required": []string{"title"},
					"properties": obj{
						"title":       title,
						"description": description,
						"priority":    ref("schemas/Priority"),
						"due_date":    dueDate,
					},
				},
				"TaskUpdate": obj{
					"type": "object", "additionalProperties": false,
					"description": "Fields left out are unchanged; null clears description and due_date.",
					"properties": obj{
						"title":       title,
						"description": description,
						"priority":    ref("schemas/Priority"),
						"due_date":    dueDate,
					},
				},
				"CompletionUpdate": obj{
					"type": "object", "additionalProperties": false, "required": []string{"completed"},
					"properties": obj{"completed": obj{"type": "boolean"}},
				},
				"ValidationErrorDetail": obj{
					"type": "object", "required": []string{"field", "message"},
					"properties": obj{
						"field":          obj{"type": "string", "description": "The invalid field; body for the body as a whole, id for the path."},
						"message":        obj{"type": "string"},
						"received_value": obj{"type": "string", "description": "The rejected value (up to 100 characters); left out when empty."},
						"suggestion":     obj{"type": "string"},
					},
				},
				"ErrorResponse": obj{
					"type": "object", "required": []string{"error_type", "message"},
					"description": "Seed 002's ErrorResponse.",
					"properties": obj{
						"error_type": obj{"type": "string", "enum": []string{"authentication_error", "not_found_error",
							"validation_error", "limit_exceeded_error", "backend_error"}},
						"message": obj{"type": "string"},
						"details": obj{"type": "object", "properties": obj{
							"fields": obj{"type": "array", "items": ref("schemas/ValidationErrorDetail")},
						}},
						"suggestions": obj{"type": "array", "items": obj{"type": "string"}},
					},
				},
			},
			"responses": obj{
				"Unauthorized": errorResponse("Missing or wrong service token, or missing or invalid "+
					headerUserID+" (authentication_error).", "authentication_error"),
				"NotFound": errorResponse("No such task for this user: it does not exist or belongs to "+
					"another user (not_found_error).", "not_found_error"),
				"ValidationError": errorResponse("Invalid input (validation_error): every invalid field is "+
					"listed in details.fields.", "validation_error"),
				"PayloadTooLarge": errorResponse(fmt.Sprintf("The request body is larger than %d bytes "+
					"(limit_exceeded_error).", MaxBodyBytes), "limit_exceeded_error"),
				"BackendError": errorResponse("The backend failed (backend_error); the cause is logged "+
					"under the response's X-Request-ID.", "backend_error"),
			},
		},
	}
}

// openAPIJSON is the rendered document.
func openAPIJSON() ([]byte, error) {
	for _, rt := range routes {
		if operations[rt.method+" "+rt.path] == nil {
			return nil, fmt.Errorf("rendering the OpenAPI document: %s %s is not described", rt.method, rt.path)
		}
	}
	data, err := json.MarshalIndent(openAPIDocument(), "", "  ")
	if err != nil {
		return nil, fmt.Errorf("rendering the OpenAPI document: %w", err)
	}
	return data, nil
}
