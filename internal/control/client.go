package control

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/internal/answer"
	"github.com/switchboard-mcp/switchboard/internal/fault"
	"github.com/switchboard-mcp/switchboard/internal/store"
	"github.com/switchboard-mcp/switchboard/internal/toolcall"
)

// Client is a [Backend] served by a daemon over its unix socket.
type Client struct {
	path string
	hc   *http.Client
}

var _ Backend = (*Client)(nil)

// Dial returns a client for the daemon listening on the unix socket at
// path. It does not connect until the first request.
func Dial(path string) *Client {
	tr := &http.Transport{
		DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			var d net.Dialer
			return d.DialContext(ctx, "unix", path)
		},
		DisableCompression: true,
	}
	return &Client{path: path, hc: &http.Client{Transport: tr}}
}

// Close releases the client's idle connections.
func (c *Client) Close() { c.hc.CloseIdleConnections() }

// do sends one request and decodes the reply into out.
func (c *Client) do(ctx context.Context, method, path string, in, out any) error {
	resp, err := c.send(ctx, method, path, in)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
	if err != nil {
		return c.transportError(ctx, err)
	}
	if resp.StatusCode != http.StatusOK {
		var eb errorBody
		if json.Unmarshal(body, &eb) != nil || len(eb.Error) == 0 {
			return fault.New(fault.Protocol, "the switchboard daemon answered %s with %s", path, resp.Status)
		}
		return decodeError(eb.Error, eb.Cause)
	}
	if err := json.Unmarshal(body, out); err != nil {
		return fault.Wrap(fault.Protocol, err, "decoding the switchboard daemon's reply to %s", path)
	}
	return nil
}

// send sends one request.
func (c *Client) send(ctx context.Context, method, path string, in any) (*http.Response, error) {
	var body io.Reader
	if in != nil {
		b, err := json.Marshal(in)
		if err != nil {
			return nil, fmt.Errorf("encoding a control request: %w", err)
		}
		body = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, "http://switchboard"+path, body)
	if err != nil {
		return nil, fmt.Errorf("building a control request: %w", err)
	}
	if in != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		return nil, c.transportError(ctx, err)
	}
	return resp, nil
}

// transportError classifies a failure to talk to the daemon: no daemon to
// connect to, or a daemon that went away (stopped, crashed, killed) after
// taking the request, when what it was doing — a call — may have happened.
func (c *Client) transportError(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return fault.Wrap(fault.KindOf(ctx.Err()), ctx.Err(), "the request to the switchboard daemon was interrupted")
	}
	// The URL (http://switchboard/v1/...) is no address anyone knows;
	// the socket's path is.
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	var oe *net.OpError
	if errors.As(err, &oe) && oe.Op == "dial" {
		return fault.Wrap(fault.Connection, err, "talking to the switchboard daemon at %s", c.path).
			WithSuggestions("check that 'switchboard serve' is running, or set SWITCHBOARD_NO_DAEMON=1 to work in-process")
	}
	return fault.Wrap(fault.Connection, err, "the switchboard daemon at %s closed the connection before it answered: it stopped, crashed or was killed", c.path).
		WithSuggestions("a call it was running may have run: see switchboard history and the daemon's log",
			"start 'switchboard serve' again, or set SWITCHBOARD_NO_DAEMON=1 to work in-process")
}

// Status implements Backend.
func (c *Client) Status(ctx context.Context) (Status, error) {
	var v Status
	return v, c.do(ctx, http.MethodGet, "/v1/status", nil, &v)
}

// Servers implements Backend.
func (c *Client) Servers(ctx context.Context) ([]ServerInfo, error) {
	var v []ServerInfo
	return v, c.do(ctx, http.MethodGet, "/v1/servers", nil, &v)
}

// ServerAction implements Backend.
func (c *Client) ServerAction(ctx context.Context, action, server string) (ActionResult, error) {
	var v ActionResult
	return v, c.do(ctx, http.MethodPost, "/v1/servers/"+url.PathEscape(server)+"/"+url.PathEscape(action), nil, &v)
}

// Tools implements Backend.
func (c *Client) Tools(ctx context.Context, server string) (ToolList, error) {
	var v ToolList
	return v, c.do(ctx, http.MethodGet, "/v1/tools?server="+url.QueryEscape(server), nil, &v)
}

// Prompts implements Backend.
func (c *Client) Prompts(ctx context.Context, server string) (PromptList, error) {
	var v PromptList
	return v, c.do(ctx, http.MethodGet, "/v1/prompts?server="+url.QueryEscape(server), nil, &v)
}

// Prompt implements Backend.
func (c *Client) Prompt(ctx context.Context, req PromptRequest) (*mcp.GetPromptResult, error) {
	var v mcp.GetPromptResult
	if err := c.do(ctx, http.MethodPost, "/v1/prompt", req, &v); err != nil {
		return nil, err
	}
	return &v, nil
}

// Resources implements Backend.
func (c *Client) Resources(ctx context.Context, server string) (ResourceList, error) {
	var v ResourceList
	return v, c.do(ctx, http.MethodGet, "/v1/resources?server="+url.QueryEscape(server), nil, &v)
}

// ReadResource implements Backend.
func (c *Client) ReadResource(ctx context.Context, server, uri string) (*mcp.ReadResourceResult, error) {
	var v mcp.ReadResourceResult
	if err := c.do(ctx, http.MethodPost, "/v1/read", ReadRequest{Server: server, URI: uri}, &v); err != nil {
		return nil, err
	}
	return &v, nil
}

// Tool implements Backend.
func (c *Client) Tool(ctx context.Context, server, name string) (ToolInfo, error) {
	var v ToolInfo
	return v, c.do(ctx, http.MethodGet, "/v1/tools/"+url.PathEscape(server)+"/"+url.PathEscape(name), nil, &v)
}

// Call implements Backend. Progress arrives on req.OnProgress as the call
// runs; cancelling ctx closes the connection, which cancels the call in
// the daemon.
func (c *Client) Call(ctx context.Context, req CallRequest) (*CallResult, error) {
	_, req.Answers = answer.From(ctx)
	l, err := c.stream(ctx, "/v1/call", req, req.OnProgress)
	if err != nil {
		return nil, err
	}
	if l.Result == nil {
		return nil, fault.New(fault.Protocol, "the switchboard daemon answered the call with no result")
	}
	return l.Result, nil
}

// stream posts body to a path the daemon answers with JSON lines
// (handler.stream) and reads them: progress goes to onProgress, questions
// and the server's log messages to the answerer of ctx, and the last line
// — the outcome — is returned.
func (c *Client) stream(ctx context.Context, path string, body any, onProgress func(toolcall.Progress)) (callLine, error) {
	ans, answers := answer.From(ctx)
	// Asks are answered beside the stream's reader, so that a withdrawn
	// one (the server said its URLs are complete) stops being asked; an
	// ask that fails ends the request.
	outer := ctx
	ctx, cancelCall := context.WithCancel(ctx)
	defer cancelCall()
	var asks callAsks
	defer asks.stop()
	resp, err := c.send(ctx, http.MethodPost, path, body)
	if err != nil {
		return callLine{}, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		var eb errorBody
		if json.NewDecoder(resp.Body).Decode(&eb) != nil || len(eb.Error) == 0 {
			return callLine{}, fault.New(fault.Protocol, "the switchboard daemon answered the call with %s", resp.Status)
		}
		return callLine{}, decodeError(eb.Error, eb.Cause)
	}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 64<<10), 256<<20)
	for sc.Scan() {
		var l callLine
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			return callLine{}, fault.Wrap(fault.Protocol, err, "decoding the switchboard daemon's call stream")
		}
		switch {
		case l.Progress != nil:
			if onProgress != nil {
				onProgress(toolcall.Progress{Processed: l.Progress.Processed, Total: l.Progress.Total, Message: l.Progress.Message, Cost: l.Progress.Cost})
			}
		case l.Log != nil:
			if lr, ok := ans.(answer.LogReceiver); ok && l.Log.Params != nil {
				lr.Log(ctx, l.Log.Server, l.Log.Params)
			}
		case l.Ask != nil && l.Ask.Withdrawn:
			var why error
			if l.Ask.Completed {
				why = answer.ErrURLsCompleted
			}
			asks.withdraw(l.Ask.ID, why)
		case l.Ask != nil && answers:
			asks.start(ctx, l.Ask.ID, func(actx context.Context) error {
				err := c.answerAsk(actx, ans, l.Ask)
				if err != nil && actx.Err() == nil {
					cancelCall()
					return err
				}
				return nil
			})
		case len(l.Error) > 0:
			return callLine{}, decodeError(l.Error, l.Cause)
		case l.Result != nil || l.Task != nil:
			return l, nil
		}
	}
	if err := asks.stop(); err != nil {
		return callLine{}, err
	}
	ctx = outer
	if err := sc.Err(); err != nil {
		return callLine{}, c.transportError(ctx, err)
	}
	if ctx.Err() != nil {
		return callLine{}, c.transportError(ctx, ctx.Err())
	}
	return callLine{}, fault.New(fault.Connection, "the switchboard daemon closed the call's stream before its result").
		WithSuggestions("check the daemon's log; the call may have run")
}

// History implements Backend.
func (c *Client) History(ctx context.Context, f store.CallFilter) ([]store.CallRecord, error) {
	var v []store.CallRecord
	return v, c.do(ctx, http.MethodPost, "/v1/history", f, &v)
}

// HistoryCall implements Backend.
func (c *Client) HistoryCall(ctx context.Context, id string) (store.CallRecord, error) {
	var v store.CallRecord
	return v, c.do(ctx, http.MethodGet, "/v1/history/"+url.PathEscape(id), nil, &v)
}

// Stop implements Backend.
func (c *Client) Stop(ctx context.Context) (int, error) {
	var v stopReply
	return v.Cancelled, c.do(ctx, http.MethodPost, "/v1/stop", nil, &v)
}

// Resume implements Backend.
func (c *Client) Resume(ctx context.Context) (bool, error) {
	var v resumeReply
	return v.WasStopped, c.do(ctx, http.MethodPost, "/v1/resume", nil, &v)
}

// Reload implements Backend.
func (c *Client) Reload(ctx context.Context) (ReloadReport, error) {
	var v ReloadReport
	return v, c.do(ctx, http.MethodPost, "/v1/reload", nil, &v)
}

// callAsks are the asks of one call being answered, each with its own
// context, so that the daemon can withdraw one.
type callAsks struct {
	mu      sync.Mutex
	cancels map[string]context.CancelCauseFunc
	wg      sync.WaitGroup
	err     error // the first ask that failed
}

// start answers one ask under a context of its own.
func (a *callAsks) start(ctx context.Context, id string, f func(context.Context) error) {
	actx, cancel := context.WithCancelCause(ctx)
	a.mu.Lock()
	if a.cancels == nil {
		a.cancels = map[string]context.CancelCauseFunc{}
	}
	a.cancels[id] = cancel
	a.mu.Unlock()
	a.wg.Go(func() {
		err := f(actx)
		a.mu.Lock()
		defer a.mu.Unlock()
		if err != nil && a.err == nil {
			a.err = err
		}
		delete(a.cancels, id)
		cancel(nil)
	})
}

// withdraw stops answering the ask of id, for why (nil: the daemon no
// longer waits for it).
func (a *callAsks) withdraw(id string, why error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if cancel, ok := a.cancels[id]; ok {
		cancel(why)
	}
}

// stop ends every ask still being answered, waits for them, and returns
// the first failure.
func (a *callAsks) stop() error {
	a.mu.Lock()
	for _, cancel := range a.cancels {
		cancel(nil)
	}
	a.mu.Unlock()
	a.wg.Wait()
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.err
}
