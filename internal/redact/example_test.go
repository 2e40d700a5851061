package redact_test

import (
	"encoding/json"
	"fmt"
	"os"

	"github.com/switchboard-mcp/switchboard/internal/redact"
)

// A Redactor removes the configured secret values and common credential shapes from
// text; ordinary text is left as it was.
func ExampleRedactor_String() {
	r := redact.New([]string{"configured-secret-value-42"})
	fmt.Println(r.String("connecting with configured-secret-value-42"))
	fmt.Println(r.String("Authorization: Bearer eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.c2lnbmF0dXJlLWJ5dGVz"))
	fmt.Println(r.String("see auth/token.go:42 for the details"))
	// Output:
	// connecting with [REDACTED]
	// Authorization: Bearer [REDACTED]
	// see auth/token.go:42 for the details
}

// JSON hides the whole value of any credential-like key; numbers keep their text. (A
// document with nothing to redact comes back byte for byte; one that changed is
// re-encoded, with its keys sorted.)
func ExampleRedactor_JSON() {
	r := redact.New(nil)
	fmt.Println(string(r.JSON(json.RawMessage(`{"user":"ada","api_key":"k-123","n":12345678901234567890}`))))
	// Output:
	// {"api_key":"[REDACTED]","n":12345678901234567890,"user":"ada"}
}

// Shape keeps a call's argument structure without its values, for a history that does
// not record values.
func ExampleShape() {
	var args any
	_ = json.Unmarshal([]byte(`{"query":"who is ada","limit":5,"tags":["a","b"],"deep":true}`), &args)
	b, _ := json.Marshal(redact.Shape(args))
	fmt.Println(string(b))
	// Output:
	// {"deep":"boolean","limit":"number","query":"string","tags":["string"]}
}

// Writer redacts whole lines as they are written, for log output.
func ExampleRedactor_Writer() {
	r := redact.New([]string{"hunter2-but-longer"})
	w := r.Writer(os.Stdout)
	fmt.Fprintln(w, "login password=hunter2-but-longer ok")
	_ = w.Flush()
	// Output:
	// login password=[REDACTED] ok
}
