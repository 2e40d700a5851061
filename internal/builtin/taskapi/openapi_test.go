package taskapi_test

import (
	"bytes"
	"net/http"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/switchboard-mcp/switchboard/internal/builtin/taskapi"
)

// getOpenAPI fetches and parses the served document.
func getOpenAPI(t *testing.T, s *testServer) map[string]any {
	t.Helper()
	r := s.doWith(nil, "GET", "/openapi.json", "")
	if r.status != http.StatusOK {
		t.Fatalf("GET /openapi.json: got status %d", r.status)
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(r.body))
	if err != nil {
		t.Fatalf("GET /openapi.json is not JSON: %v", err)
	}
	return doc.(map[string]any)
}

func TestOpenAPIListsEveryOperation(t *testing.T) {
	doc := getOpenAPI(t, newTestServer(t, nil))
	if doc["openapi"] != "3.1.0" {
		t.Errorf("openapi: got %v, want 3.1.0", doc["openapi"])
	}
	want := []string{
		"DELETE /tasks/{id}", "GET /healthz", "GET /openapi.json", "GET /tasks", "GET /tasks/{id}",
		"PATCH /tasks/{id}", "POST /tasks", "PUT /tasks/{id}",
	}
	var got []string
	for path, item := range doc["paths"].(map[string]any) {
		for method, op := range item.(map[string]any) {
			if method == "parameters" {
				continue
			}
			got = append(got, strings.ToUpper(method)+" "+path)
			responses, _ := op.(map[string]any)["responses"].(map[string]any)
			if len(responses) == 0 {
				t.Errorf("%s %s has no responses", method, path)
			}
			if path == "/tasks" || strings.HasPrefix(path, "/tasks/") {
				if _, ok := responses["401"]; !ok {
					t.Errorf("%s %s does not describe 401", method, path)
				}
			}
			if strings.Contains(path, "{id}") {
				for _, s := range []string{"404", "422"} {
					if _, ok := responses[s]; !ok {
						t.Errorf("%s %s does not describe %s", method, path, s)
					}
				}
			}
		}
	}
	sort.Strings(got)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("operations (-want +got):\n%s", diff)
	}
	// And the router serves exactly what the document lists.
	routed := taskapi.Routes()
	sort.Strings(routed)
	if diff := cmp.Diff(want, routed); diff != "" {
		t.Errorf("routes (-want +got):\n%s", diff)
	}
	// Every $ref resolves.
	var walk func(v any)
	walk = func(v any) {
		switch v := v.(type) {
		case map[string]any:
			if r, ok := v["$ref"].(string); ok {
				if resolve(doc, r) == nil {
					t.Errorf("$ref %q does not resolve", r)
				}
			}
			for _, c := range v {
				walk(c)
			}
		case []any:
			for _, c := range v {
				walk(c)
			}
		}
	}
	walk(doc)
}

func resolve(doc map[string]any, ref string) any {
	var v any = doc
	for _, part := range strings.Split(strings.TrimPrefix(ref, "#/"), "/") {
		m, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = m[part]
	}
	return v
}

// TestResponsesMatchOpenAPI checks real responses against the document's
// schemas, compiled as JSON Schema 2020-12 (OpenAPI 3.1's dialect).
func TestResponsesMatchOpenAPI(t *testing.T) {
	forEachStore(t, func(t *testing.T, s *testServer) {
		doc := getOpenAPI(t, s)
		c := jsonschema.NewCompiler()
		c.DefaultDraft(jsonschema.Draft2020)
		c.AssertFormat()
		if err := c.AddResource("openapi.json", doc); err != nil {
			t.Fatal(err)
		}
		schema := func(name string) *jsonschema.Schema {
			sch, err := c.Compile("openapi.json#/components/schemas/" + name)
			if err != nil {
				t.Fatalf("compiling schema %s: %v", name, err)
			}
			return sch
		}
		task, errResp, create, update, completion := schema("Task"), schema("ErrorResponse"), schema("TaskCreate"),
			schema("TaskUpdate"), schema("CompletionUpdate")

		check := func(sch *jsonschema.Schema, what string, body []byte) {
			t.Helper()
			v, err := jsonschema.UnmarshalJSON(bytes.NewReader(body))
			if err != nil {
				t.Fatalf("%s: %v", what, err)
			}
			if err := sch.Validate(v); err != nil {
				t.Errorf("%s does not match the document: %v\n%s", what, err, body)
			}
		}
		// Request bodies the API accepts match the request schemas.
		for _, b := range []string{`{"title":"t"}`, `{"title":"t","description":null,"priority":"High","due_date":"2025-12-20T10:00:00Z"}`} {
			check(create, "TaskCreate "+b, []byte(b))
		}
		check(update, "TaskUpdate", []byte(`{"description":null,"due_date":null}`))
		check(completion, "CompletionUpdate", []byte(`{"completed":true}`))

		// Responses match the response schemas.
		r := s.expect(http.StatusCreated, "alice", "POST", "/tasks", `{"title":"t","due_date":"2025-12-20T10:00:00.5+02:00"}`)
		check(task, "POST /tasks response", r.body)
		id := jsonNumber(r.obj(t)["id"])
		check(task, "PATCH response", s.expect(http.StatusOK, "alice", "PATCH", "/tasks/"+id, `{"completed":true}`).body)
		for _, req := range []struct {
			status             int
			user, method, path string
			body               string
		}{
			{422, "alice", "POST", "/tasks", `{"title":""}`},
			{404, "bob", "GET", "/tasks/" + id, ""},
			{401, "", "GET", "/tasks", ""},
			{413, "alice", "POST", "/tasks", `"` + strings.Repeat("a", taskapi.MaxBodyBytes) + `"`},
		} {
			check(errResp, req.method+" "+req.path, s.expect(req.status, req.user, req.method, req.path, req.body).body)
		}
		// And a wrong body does not.
		v, _ := jsonschema.UnmarshalJSON(strings.NewReader(`{"id":1}`))
		if task.Validate(v) == nil {
			t.Error("the Task schema accepts an incomplete task")
		}
	})
}
