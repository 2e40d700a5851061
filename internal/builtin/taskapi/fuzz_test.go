// Internal on purpose: fuzzes the unexported request decoders (decodeCreate, decodeUpdate, decodeCompletion) with bodies no HTTP client of a test would send.

package taskapi

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/switchboard-mcp/switchboard/internal/fault"
)

// FuzzDecode feeds arbitrary bodies to the three request decoders: each
// either accepts the body or rejects it as a validation error that names
// a field.
func FuzzDecode(f *testing.F) {
	for _, seed := range []string{
		`{"title":"t"}`, `{"title":"","due_date":"tomorrow","x":1}`, `{"completed":true}`, `[`, `null`, ``,
		`{"title":"t","description":null,"priority":"High","due_date":"2025-12-20"}`, `{"title":"\u0000"}`,
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, body string) {
		newReq := func() (*httptest.ResponseRecorder, *http.Request) {
			return httptest.NewRecorder(), httptest.NewRequest("POST", "/tasks", strings.NewReader(body))
		}
		w, r := newReq()
		_, err1 := decodeCreate(w, r)
		w, r = newReq()
		_, err2 := decodeUpdate(w, r)
		w, r = newReq()
		_, err3 := decodeCompletion(w, r)
		for _, err := range []error{err1, err2, err3} {
			if err == nil {
				continue
			}
			fe := fault.As(err)
			if fe.Kind != fault.Validation || len(fe.Fields) == 0 {
				t.Errorf("body %q: got %v (kind %q, %d fields), want a validation error naming fields", body, err, fe.Kind, len(fe.Fields))
			}
		}
	})
}
