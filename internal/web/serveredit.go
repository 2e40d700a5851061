package web

import (
	"errors"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"sync"

	"github.com/switchboard-mcp/switchboard/internal/config"
	"github.com/switchboard-mcp/switchboard/internal/control"
	"github.com/switchboard-mcp/switchboard/internal/fault"
)

// ServerEntry is the part of a server's configuration the console edits
// (config.ServerEntry).
type ServerEntry = config.ServerEntry

// hiddenValue stands in the edit form for an env or header value that is
// written literally in the file (a secret, perhaps): sent back unchanged,
// it keeps the value in the file.
const hiddenValue = "********"

// editForm is the server form's fields and their problems.
type editForm struct {
	Original    string
	Name        string
	Description string
	Transport   string
	Command     string
	Args        string
	Env         string
	URL         string
	Headers     string
	Enabled     bool
	// Errors maps a field (name, command, args, env, url, headers,
	// transport, description) to its problems.
	Errors map[string][]string
}

// editData is the server form page's data.
type editData struct {
	pageData
	Form       editForm
	Path       string
	Exists     bool
	Transports []string
	Error      *errorView
	Problems   []string
	Report     *control.ReloadReport
}

// transports are the form's choices.
var transports = []string{"stdio", "http", "sse", "websocket"}

// formFromEntry fills the form from a file entry; literal env and header
// values are hidden.
func formFromEntry(e ServerEntry) editForm {
	f := editForm{Original: e.Name, Name: e.Name, Description: e.Description, Transport: e.Transport, Command: e.Command,
		Args: strings.Join(e.Args, "\n"), URL: e.URL, Enabled: !e.Disabled}
	if f.Transport == "" {
		f.Transport = "stdio"
	}
	f.Env, f.Headers = kvText(e.Env), kvText(e.Headers)
	return f
}

// kvText writes KEY=VALUE lines, hiding values that are not references.
func kvText(kvs []config.KeyValue) string {
	var b strings.Builder
	for _, kv := range kvs {
		v := kv.Value
		if !strings.Contains(v, "${") {
			v = hiddenValue
		}
		b.WriteString(kv.Key + "=" + v + "\n")
	}
	return b.String()
}

// parseKV reads KEY=VALUE lines; a hidden value takes the old one.
func parseKV(text string, old []config.KeyValue, field string, errs map[string][]string) []config.KeyValue {
	var out []config.KeyValue
	for i, line := range strings.Split(text, "\n") {
		line = strings.TrimRight(line, "\r")
		if strings.TrimSpace(line) == "" {
			continue
		}
		k, v, ok := strings.Cut(line, "=")
		k = strings.TrimSpace(k)
		if !ok || k == "" {
			errs[field] = append(errs[field], "line "+strconv.Itoa(i+1)+" is not KEY=VALUE")
			continue
		}
		if v == hiddenValue {
			found := false
			for _, o := range old {
				if o.Key == k {
					v, found = o.Value, true
				}
			}
			if !found {
				errs[field] = append(errs[field], "line "+strconv.Itoa(i+1)+": "+k+" has no value to keep; type the value")
				continue
			}
		}
		out = append(out, config.KeyValue{Key: k, Value: v})
	}
	return out
}

// serverEditPage shows the form to add a server (no ?name=) or edit one.
func (c *Console) serverEditPage(w http.ResponseWriter, r *http.Request) {
	ed := c.opts.Editor
	if ed == nil {
		c.renderError(w, r, http.StatusNotFound, fault.New(fault.Config, "this console does not edit the configuration"))
		return
	}
	path, exists := ed.Path()
	d := &editData{pageData: pageData{Title: "Add a server"}, Path: path, Exists: exists, Transports: transports,
		Form: editForm{Transport: "stdio", Enabled: true}}
	if name := r.URL.Query().Get("name"); name != "" {
		e, err := ed.Server(name)
		if err != nil {
			c.renderError(w, r, statusOf(err), err)
			return
		}
		d.Title = "Edit " + name
		d.Form = formFromEntry(e)
	}
	c.render(w, r, http.StatusOK, "serveredit", d)
}

// problemField matches a validation problem's field in a server entry:
// servers.NAME.FIELD or servers[N].FIELD (and deeper paths).
var problemField = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^servers(?:\.([^.\[]+)|\[\d+\])(?:\.([a-z_]+))?`) })

// formFields are the keys the form edits.
var formFields = map[string]bool{"name": true, "description": true, "transport": true, "command": true, "args": true,
	"env": true, "url": true, "headers": true, "enabled": true}

// serverSave writes the form to the configuration file through the
// editor: validated as `config validate` validates, applied with the
// daemon's all-or-nothing reload. A refusal shows the form again with
// each problem at its field.
func (c *Console) serverSave(w http.ResponseWriter, r *http.Request) {
	ed := c.opts.Editor
	if ed == nil {
		c.renderError(w, r, http.StatusNotFound, fault.New(fault.Config, "this console does not edit the configuration"))
		return
	}
	path, exists := ed.Path()
	f := editForm{
		Original: r.PostFormValue("original"), Name: strings.TrimSpace(r.PostFormValue("name")),
		Description: r.PostFormValue("description"), Transport: r.PostFormValue("transport"),
		Command: strings.TrimSpace(r.PostFormValue("command")), Args: r.PostFormValue("args"),
		Env: r.PostFormValue("env"), URL: strings.TrimSpace(r.PostFormValue("url")), Headers: r.PostFormValue("headers"),
		Enabled: r.PostFormValue("enabled") != "", Errors: map[string][]string{},
	}
	d := &editData{pageData: pageData{Title: "Add a server"}, Path: path, Exists: exists, Transports: transports, Form: f}
	if f.Original != "" {
		d.Title = "Edit " + f.Original
	}
	var old ServerEntry
	if f.Original != "" {
		var err error
		if old, err = ed.Server(f.Original); err != nil {
			d.Error = newErrorView(err)
			c.render(w, r, statusOf(err), "serveredit", d)
			return
		}
	}
	e := ServerEntry{Name: f.Name, Description: f.Description, Transport: f.Transport, Command: f.Command,
		URL: f.URL, Disabled: !f.Enabled}
	for _, a := range strings.Split(f.Args, "\n") {
		if a = strings.TrimRight(a, "\r"); strings.TrimSpace(a) != "" {
			e.Args = append(e.Args, a)
		}
	}
	e.Env = parseKV(f.Env, old.Env, "env", f.Errors)
	e.Headers = parseKV(f.Headers, old.Headers, "headers", f.Errors)
	if f.Name == "" {
		f.Errors["name"] = append(f.Errors["name"], "a server needs a name")
	}
	if !exists && r.PostFormValue("create") == "" {
		f.Errors["create"] = append(f.Errors["create"], "confirm that the file may be created at "+path)
	}
	if len(f.Errors) > 0 {
		d.Form = f
		d.Error = newErrorView(fault.New(fault.Validation, "the server was not saved: fix the fields marked below"))
		c.render(w, r, http.StatusUnprocessableEntity, "serveredit", d)
		return
	}
	rep, err := ed.Save(r.Context(), f.Original, e)
	if err != nil {
		c.markProblems(&f, err, d)
		d.Form = f
		c.logger.Info("console: a server edit was refused", logKeyServer, f.Name, logKeyErr, err)
		c.render(w, r, statusOf(err), "serveredit", d)
		return
	}
	c.logger.Info("console: server saved to the configuration", logKeyServer, f.Name, "user", sessionOf(r).user,
		"added", len(rep.Added), "changed", len(rep.Changed))
	http.Redirect(w, r, Prefix+"server?name="+url.QueryEscape(f.Name)+"&saved=1", http.StatusSeeOther)
}

// markProblems puts a refusal's problems next to the form's fields: a
// configuration's validation problems by their field, a fault's field
// detail by name; the rest above the form.
func (c *Console) markProblems(f *editForm, err error, d *editData) {
	d.Error = newErrorView(err)
	var ve *config.ValidationError
	if errors.As(err, &ve) {
		d.Error = newErrorView(fault.New(fault.Validation, "the configuration would not be valid, so nothing was written"))
		for _, p := range ve.Problems {
			m := problemField().FindStringSubmatch(p.Field)
			msg := p.Message
			if p.Fix != "" {
				msg += "; " + p.Fix
			}
			if m != nil && (m[1] == "" || m[1] == f.Name || m[1] == f.Original) && formFields[m[2]] {
				key := m[2]
				if key == "enabled" {
					key = "name"
				}
				f.Errors[key] = append(f.Errors[key], msg)
				continue
			}
			d.Problems = append(d.Problems, p.String())
		}
		return
	}
	if field, ok := fault.As(err).Details["field"].(string); ok && formFields[field] {
		f.Errors[field] = append(f.Errors[field], fault.As(err).Message)
	}
}

// serverRemove deletes a server from the configuration file and applies
// it.
func (c *Console) serverRemove(w http.ResponseWriter, r *http.Request) {
	ed := c.opts.Editor
	name := r.PostFormValue("name")
	if ed == nil || name == "" {
		c.renderError(w, r, http.StatusBadRequest, fault.New(fault.Validation, "name the server to remove"))
		return
	}
	if r.PostFormValue("confirm") == "" {
		c.renderError(w, r, http.StatusUnprocessableEntity, fault.New(fault.Validation, "removing %s needs the confirmation box ticked", name).
			WithSuggestions("go back, tick the box and remove again"))
		return
	}
	if _, err := ed.Remove(r.Context(), name); err != nil {
		c.renderError(w, r, statusOf(err), err)
		return
	}
	c.logger.Info("console: server removed from the configuration", logKeyServer, name, "user", sessionOf(r).user)
	http.Redirect(w, r, "/?removed="+url.QueryEscape(name), http.StatusSeeOther)
}
