package web

import (
	"mime"
	"net/http"
	"net/url"
	"path"
	"strconv"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/yosida95/uritemplate/v3"

	"github.com/switchboard-mcp/switchboard/internal/control"
	"github.com/switchboard-mcp/switchboard/internal/fault"
)

// promptURL is the page of a server's prompt.
func promptURL(server, name string) string {
	return Prefix + "prompt?server=" + url.QueryEscape(server) + "&name=" + url.QueryEscape(name)
}

// resourceURL is the page that reads one resource.
func resourceURL(server, uri string) string {
	return Prefix + "resource?server=" + url.QueryEscape(server) + "&uri=" + url.QueryEscape(uri)
}

// templateURL is the page of a resource template's form.
func templateURL(server, tpl string) string {
	return Prefix + "resource?server=" + url.QueryEscape(server) + "&template=" + url.QueryEscape(tpl)
}

// promptArg is one field of a prompt's form.
type promptArg struct {
	Name, Title, Description, Value, Error string
	Required                               bool
}

// promptMessage is one message a prompt returned.
type promptMessage struct {
	Role  string
	Block block
}

// promptData is the prompt page's data.
type promptData struct {
	pageData
	Server      string
	Prompt      *mcp.Prompt
	Args        []promptArg
	Got         bool
	Description string
	Messages    []promptMessage
	Error       *errorView
	CLI         string
}

// promptPage shows a prompt's argument form; a POST of the form gets the
// prompt (through the same backend as `switchboard prompt`) and shows the
// messages it returned under the form, which keeps the values.
func (c *Console) promptPage(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	server, name := q.Get("server"), q.Get("name")
	if r.Method == http.MethodPost {
		server, name = r.PostFormValue("server"), r.PostFormValue("name")
	}
	if server == "" || name == "" {
		c.renderError(w, r, http.StatusBadRequest, fault.New(fault.Validation, "name a server and a prompt").
			WithSuggestions("pick a prompt from the Prompts tab of the Tools page"))
		return
	}
	var def *mcp.Prompt
	for _, p := range c.opts.Catalog.Prompts() {
		if p.Server == server && p.Def.Name == name {
			def = p.Def
		}
	}
	if def == nil {
		c.renderError(w, r, http.StatusNotFound, fault.New(fault.NotFound, "server %s lists no prompt named %q", server, name).
			WithSuggestions("the Prompts tab lists the prompts of connected servers"))
		return
	}
	d := &promptData{pageData: pageData{Title: cmpOr(def.Title, def.Name)}, Server: server, Prompt: def}
	values := map[string]string{}
	for _, a := range def.Arguments {
		pa := promptArg{Name: a.Name, Title: a.Title, Description: a.Description, Required: a.Required}
		if r.Method == http.MethodPost {
			pa.Value = r.PostFormValue("arg." + a.Name)
			// An empty field is left out, so that a required one left
			// empty is reported as missing.
			if pa.Value != "" {
				values[a.Name] = pa.Value
			}
		}
		d.Args = append(d.Args, pa)
	}
	d.CLI = cliPrompt(server, name, values)
	if r.Method == http.MethodPost {
		d.Got = true
		res, err := c.opts.Backend.Prompt(r.Context(), control.PromptRequest{Server: server, Name: name, Arguments: values})
		if err != nil {
			d.Error = newErrorView(err)
			field, _ := fault.As(err).Details["field"].(string)
			for i := range d.Args {
				if d.Args[i].Name == field {
					d.Args[i].Error = fault.As(err).Message
				}
			}
			c.render(w, r, statusOf(err), "prompt", d)
			return
		}
		d.Description = res.Description
		for _, m := range res.Messages {
			d.Messages = append(d.Messages, promptMessage{Role: string(m.Role), Block: renderContent(m.Content, "")})
		}
	}
	c.render(w, r, http.StatusOK, "prompt", d)
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// templateVar is one variable of a resource template's form.
type templateVar struct {
	Name, Value string
}

// contentView is one of a resource's contents.
type contentView struct {
	Index    int
	URI      string
	MIME     string
	Block    block
	Download string
}

// resourceData is the resource page's data.
type resourceData struct {
	pageData
	Server      string
	URI         string
	Name        string
	Description string
	MIME        string
	// Template is set on a template's page: its form fills Vars.
	Template string
	Vars     []templateVar
	Contents []contentView
	Error    *errorView
	CLI      string
	// Subscribable says the server announced resources.subscribe.
	Subscribable bool
}

// resourcePage reads one resource (?uri=) and shows its contents: text
// as text (Markdown rendered, JSON pretty-printed), images inline, other
// bytes as a download. With ?template= it shows a form for the
// template's variables; filled in (var.NAME=…), it reads the URI they
// make.
func (c *Console) resourcePage(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	server, uri, tpl := q.Get("server"), q.Get("uri"), q.Get("template")
	if server == "" || (uri == "" && tpl == "") {
		c.renderError(w, r, http.StatusBadRequest, fault.New(fault.Validation, "name a server and a resource URI or template").
			WithSuggestions("pick a resource from the Resources tab of the Tools page"))
		return
	}
	d := &resourceData{pageData: pageData{Title: "Resource"}, Server: server, URI: uri, Template: tpl,
		Subscribable: c.subscribable(server)}
	for _, rs := range c.opts.Catalog.Resources() {
		if rs.Server == server && rs.Def.URI == uri {
			d.Name, d.Description, d.MIME = rs.Def.Name, rs.Def.Description, rs.Def.MIMEType
		}
	}
	if tpl != "" {
		for _, rt := range c.opts.Catalog.ResourceTemplates() {
			if rt.Server == server && rt.Def.URITemplate == tpl {
				d.Name, d.Description, d.MIME = rt.Def.Name, rt.Def.Description, rt.Def.MIMEType
			}
		}
		t, err := uritemplate.New(tpl)
		if err != nil {
			c.renderError(w, r, http.StatusBadRequest, fault.Wrap(fault.Validation, err, "the resource template %q does not parse", tpl))
			return
		}
		vals := uritemplate.Values{}
		filled := false
		for _, name := range t.Varnames() {
			v := q.Get("var." + name)
			d.Vars = append(d.Vars, templateVar{Name: name, Value: v})
			if v != "" {
				vals.Set(name, uritemplate.String(v))
				filled = true
			}
		}
		if !filled {
			d.Title = cmpOr(d.Name, "Resource template")
			c.render(w, r, http.StatusOK, "resource", d)
			return
		}
		if uri, err = t.Expand(vals); err != nil {
			d.Error = newErrorView(fault.Wrap(fault.Validation, err, "the values do not fill the template %q", tpl))
			c.render(w, r, http.StatusUnprocessableEntity, "resource", d)
			return
		}
		d.URI = uri
	}
	d.Title = cmpOr(d.Name, uri)
	d.CLI = shellJoin("switchboard", "read", server, uri)
	res, err := c.opts.Backend.ReadResource(r.Context(), server, uri)
	if err != nil {
		d.Error = newErrorView(err)
		c.render(w, r, statusOf(err), "resource", d)
		return
	}
	for i, rc := range res.Contents {
		d.Contents = append(d.Contents, c.contentView(server, uri, i, rc))
	}
	c.render(w, r, http.StatusOK, "resource", d)
}

// contentView renders one of a resource's contents.
func (c *Console) contentView(server, uri string, i int, rc *mcp.ResourceContents) contentView {
	v := contentView{Index: i, URI: rc.URI, MIME: rc.MIMEType}
	if rc.Blob != nil {
		v.Block = renderMedia(rc.MIMEType, rc.Blob, rc.URI)
	} else {
		v.Block = renderText(rc.Text, strings.HasPrefix(rc.MIMEType, "text/markdown"))
	}
	v.Download = Prefix + "resource/download?server=" + url.QueryEscape(server) + "&uri=" + url.QueryEscape(uri) + "&i=" + strconv.Itoa(i)
	return v
}

// resourceDownload reads a resource again and sends one of its contents
// as a file: the bytes of a blob, or the text.
func (c *Console) resourceDownload(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	server, uri := q.Get("server"), q.Get("uri")
	i, err := strconv.Atoi(q.Get("i"))
	if server == "" || uri == "" || err != nil || i < 0 {
		c.renderError(w, r, http.StatusBadRequest, fault.New(fault.Validation, "a download needs server, uri and i (the index of the contents)").
			WithSuggestions("use the Download link on the resource's page"))
		return
	}
	res, err := c.opts.Backend.ReadResource(r.Context(), server, uri)
	if err != nil {
		c.renderError(w, r, statusOf(err), err)
		return
	}
	if i >= len(res.Contents) {
		c.renderError(w, r, http.StatusNotFound, fault.New(fault.NotFound, "resource %s has %d contents, not %d", uri, len(res.Contents), i+1))
		return
	}
	rc := res.Contents[i]
	data := rc.Blob
	if data == nil {
		data = []byte(rc.Text)
	}
	// Always a download of opaque bytes: never rendered by the browser,
	// whatever type the server claimed.
	w.Header().Set("Content-Type", "application/octet-stream")
	w.Header().Set("Content-Disposition", mime.FormatMediaType("attachment", map[string]string{"filename": downloadName(cmpOr(rc.URI, uri), rc.MIMEType)}))
	w.Header().Set("Content-Length", strconv.Itoa(len(data)))
	_, _ = w.Write(data)
}

// downloadName is a file name for a resource: the last segment of its URI,
// cut to safe characters, with an extension for its type when it has none.
func downloadName(uri, mimeType string) string {
	base := "resource"
	if u, err := url.Parse(uri); err == nil {
		p := u.Path
		if p == "" {
			p = u.Opaque
		}
		if b := path.Base(p); b != "." && b != "/" && b != "" {
			base = b
		} else if u.Host != "" {
			base = u.Host // library://data.bin
		}
	}
	var sb strings.Builder
	for _, r := range base {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '.', r == '-', r == '_':
			sb.WriteRune(r)
		default:
			sb.WriteRune('_')
		}
	}
	name := strings.Trim(sb.String(), ".")
	if name == "" {
		name = "resource"
	}
	if len(name) > 100 {
		name = name[:100]
	}
	if !strings.Contains(name, ".") {
		base, _, _ := strings.Cut(mimeType, ";")
		if ext, ok := commonExt[strings.TrimSpace(base)]; ok {
			name += ext
		} else if exts, _ := mime.ExtensionsByType(mimeType); len(exts) > 0 {
			name += exts[0]
		} else {
			name += ".bin"
		}
	}
	return name
}

// commonExt names the usual extension of common types (the system's MIME
// table may list a rarer one first: .asc for text/plain).
var commonExt = map[string]string{
	"text/plain": ".txt", "text/markdown": ".md", "text/html": ".html", "text/csv": ".csv",
	"application/json": ".json", "application/pdf": ".pdf", "image/png": ".png", "image/jpeg": ".jpg",
}

// subscribable reports whether a server announced that its resources can
// be subscribed to.
func (c *Console) subscribable(server string) bool {
	if c.opts.Capabilities == nil {
		return false
	}
	caps := c.opts.Capabilities(server)
	return caps != nil && caps.Resources != nil && caps.Resources.Subscribe
}
