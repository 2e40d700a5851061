package gateway

import (
	"bufio"
	"bytes"
	"encoding/json"
	"net/http"
	"strings"

	"github.com/switchboard-mcp/switchboard/internal/config"
)

// The go-sdk's server has no field for a server's capabilities.tasks nor
// for a tool's execution (its taskSupport), so the answers it gives to
// initialize and tools/list lack them. When a server of the view declares
// task support, the gateway adds them to those answers as the servers
// declared them (tasks.go forwards the requests they announce): the
// union of the view's servers' capabilities.tasks, and each tool's
// execution under the name the view gives the tool.

// taskAnnotations says what to add to an answer of the SDK's.
type taskAnnotations struct {
	caps json.RawMessage            // capabilities.tasks, for initialize
	exec map[string]json.RawMessage // exposed tool name -> execution, for tools/list
}

// taskAnnotationsFor returns what to add to the answer to m, a request
// posted with r to view, or nil when there is nothing to add.
func (h *httpHandler) taskAnnotationsFor(r *http.Request, m *message, view config.View, gw config.Gateway) *taskAnnotations {
	if m.batch || !m.isCall() || (m.method != "initialize" && m.method != "tools/list") {
		return nil
	}
	spec, ok := h.spec(r, view)
	if !ok {
		return nil
	}
	var vs *viewServer
	if m.method == "tools/list" {
		if sid := r.Header.Get("Mcp-Session-Id"); sid != "" {
			if si := h.g.sess.get(sid); si != nil {
				if sv := si.vs.Load(); sv != nil && sv.spec().view.Name == view.Name {
					vs = sv
				}
			}
		} else if gw.Stateless {
			vs, _ = h.g.serverFor(r.Context(), spec)
		}
	}
	return h.g.taskAnnotations(m.method, spec, vs)
}

// taskAnnotations returns what to add to the SDK's answer to method
// (initialize or tools/list) for a session of spec served by vs, or nil
// when there is nothing to add. Every transport's answers get them
// (tryTask's and taskConn's).
func (g *Gateway) taskAnnotations(method string, spec viewSpec, vs *viewServer) *taskAnnotations {
	if method == "initialize" {
		var merged map[string]any
		for _, s := range g.config().Servers {
			if !spec.hasServer(s.Name) {
				continue
			}
			c, err := g.ups.Client(s.Name)
			if err != nil {
				continue
			}
			var caps map[string]any
			if json.Unmarshal(c.TaskCapabilities(), &caps) != nil || caps == nil {
				continue
			}
			merged = mergeObjects(merged, caps)
		}
		if merged == nil {
			return nil
		}
		raw, err := json.Marshal(merged)
		if err != nil {
			return nil
		}
		return &taskAnnotations{caps: raw}
	}
	if method != "tools/list" || vs == nil {
		return nil
	}
	exec := map[string]json.RawMessage{}
	vs.mu.Lock()
	entries := make(map[string]toolEntry, len(vs.tools))
	for name, e := range vs.tools {
		entries[name] = e
	}
	vs.mu.Unlock()
	for name, e := range entries {
		c, err := g.ups.Client(e.server)
		if err != nil {
			continue
		}
		if x := c.ToolExecution(e.name); x != nil {
			exec[name] = x
		}
	}
	if len(exec) == 0 {
		return nil
	}
	return &taskAnnotations{exec: exec}
}

// mergeObjects returns the union of two JSON objects: b's keys added to
// a's, objects merged key by key.
func mergeObjects(a, b map[string]any) map[string]any {
	if a == nil {
		a = map[string]any{}
	}
	for k, v := range b {
		am, aok := a[k].(map[string]any)
		bm, bok := v.(map[string]any)
		if aok && bok {
			a[k] = mergeObjects(am, bm)
			continue
		}
		if _, seen := a[k]; !seen {
			a[k] = v
		}
	}
	return a
}

// apply adds the annotations to result, the result of the answer. A
// result that has them already (a tools/list a view that is its server
// answers as the server wrote it: asgiven.go) is returned unchanged.
func (t *taskAnnotations) apply(result json.RawMessage) (json.RawMessage, bool) {
	if t.caps == nil && t.annotated(result) {
		return result, true
	}
	var obj map[string]json.RawMessage
	if json.Unmarshal(result, &obj) != nil {
		return nil, false
	}
	if t.caps != nil {
		var caps map[string]json.RawMessage
		if json.Unmarshal(obj["capabilities"], &caps) != nil || caps == nil {
			return nil, false
		}
		caps["tasks"] = t.caps
		obj["capabilities"], _ = json.Marshal(caps)
	}
	if t.exec != nil {
		var tools []map[string]json.RawMessage
		if json.Unmarshal(obj["tools"], &tools) != nil {
			return nil, false
		}
		for _, tool := range tools {
			var name string
			_ = json.Unmarshal(tool["name"], &name)
			if x, ok := t.exec[name]; ok {
				tool["execution"] = x
			}
		}
		obj["tools"], _ = marshalNoEscape(tools)
	}
	out, err := marshalNoEscape(obj)
	return out, err == nil
}

// annotated reports whether every tool of result, a tools/list result,
// already has the execution t gives it.
func (t *taskAnnotations) annotated(result json.RawMessage) bool {
	var r struct {
		Tools []struct {
			Name      string          `json:"name"`
			Execution json.RawMessage `json:"execution"`
		} `json:"tools"`
	}
	if json.Unmarshal(result, &r) != nil {
		return false
	}
	for _, tool := range r.Tools {
		if x, ok := t.exec[tool.Name]; ok && !sameJSON(json.RawMessage(bytes.TrimSpace(tool.Execution)), x) {
			return false
		}
	}
	return true
}

// annotatingWriter holds the SDK's answer to an initialize or tools/list
// (an event stream or JSON) and writes it with the annotations added.
type annotatingWriter struct {
	http.ResponseWriter
	t      *taskAnnotations
	id     json.RawMessage
	status int
	pass   bool // not a result: written as it comes
	body   bytes.Buffer
}

func (w *annotatingWriter) WriteHeader(code int) {
	if w.status != 0 {
		return
	}
	w.status = code
	if code != http.StatusOK {
		w.pass = true
		w.ResponseWriter.WriteHeader(code)
	}
}

func (w *annotatingWriter) Write(p []byte) (int, error) {
	if w.status == 0 {
		w.WriteHeader(http.StatusOK)
	}
	if w.pass {
		return w.ResponseWriter.Write(p)
	}
	return w.body.Write(p)
}

// Flush holds a result, which finish writes whole.
func (w *annotatingWriter) Flush() {
	if f, ok := w.ResponseWriter.(http.Flusher); ok && w.pass {
		f.Flush()
	}
}

// finish writes the answer, annotated when it is the expected result.
func (w *annotatingWriter) finish() {
	if w.status == 0 || w.pass {
		return
	}
	body := w.body.Bytes()
	if w.status == http.StatusOK {
		if strings.HasPrefix(w.Header().Get("Content-Type"), "text/event-stream") {
			body = w.annotateStream(body)
		} else if out, ok := w.annotate(body); ok {
			body = out
		}
	}
	w.Header().Del("Content-Length")
	w.ResponseWriter.WriteHeader(w.status)
	_, _ = w.ResponseWriter.Write(body)
}

// annotate annotates one message, if it is the answer's result.
func (w *annotatingWriter) annotate(msg []byte) ([]byte, bool) {
	var m map[string]json.RawMessage
	if json.Unmarshal(msg, &m) != nil || string(bytes.TrimSpace(m["id"])) != string(w.id) || m["result"] == nil {
		return nil, false
	}
	res, ok := w.t.apply(m["result"])
	if !ok {
		return nil, false
	}
	m["result"] = res
	out, err := marshalNoEscape(m)
	return out, err == nil
}

// annotateStream annotates the answer's data lines in an event stream.
func (w *annotatingWriter) annotateStream(body []byte) []byte {
	var out bytes.Buffer
	sc := bufio.NewScanner(bytes.NewReader(body))
	sc.Buffer(nil, len(body)+1)
	for sc.Scan() {
		line := sc.Bytes()
		if data, ok := bytes.CutPrefix(line, []byte("data: ")); ok {
			if a, ok := w.annotate(data); ok {
				out.WriteString("data: ")
				out.Write(a)
				out.WriteByte('\n')
				continue
			}
		}
		out.Write(line)
		out.WriteByte('\n')
	}
	if sc.Err() != nil {
		return body
	}
	return out.Bytes()
}
