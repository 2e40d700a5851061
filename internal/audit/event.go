// Package audit is the audit trail: one JSON line per security-relevant
// event (a sign-in, a refused token, a denied view, a call a guard hook
// denied, a reload, a trust grant, a server enabled or disabled, the stop
// switch), saying who did what, from where, and how it ended. The daemon
// builds an Auditor from the audit: block of the configuration and hands
// it to the packages that decide those things; each records its events
// with one call, and a nil *Auditor records nothing. The writer rotates
// its file by size; Read reads the file and its rotated backups back,
// filtered, for `switchboard audit`. docs/audit.md documents every field.
package audit

import (
	"context"
	"encoding/json"
	"fmt"
	"time"
)

// Event names: the value of an event's "event" field.
const (
	// SignIn is an upstream server's OAuth sign-in (switchboard auth login
	// or the console's Sign in).
	SignIn = "auth.sign_in"
	// SignOut is an upstream sign-in removed (switchboard auth logout).
	SignOut = "auth.sign_out"
	// TokenRefused is a gateway request refused for its token: a missing
	// or unknown static token, or an OAuth access token that is expired,
	// for another audience, lacks a scope or cannot be checked.
	TokenRefused = "auth.token_refused"
	// ConsoleLogin is a sign-in to the web console, ok or failed.
	ConsoleLogin = "auth.console_login"
	// ViewDenied is a gateway request for a view (or a narrowing of one)
	// its token may not use.
	ViewDenied = "gateway.view_denied"
	// CallDenied is a tool call a tool.before guard hook denied.
	CallDenied = "call.denied"
	// ConfigReload is a configuration reload, applied or refused.
	ConfigReload = "config.reload"
	// ConfigTrust is a configuration file trusted (its hooks may run, and
	// a client's file the commands it names): by switchboard config trust,
	// or by a yes to the question asked while a configuration loads.
	ConfigTrust = "config.trust"
	// ConfigTrustRefused is a person's no to the question whether to trust
	// a configuration file.
	ConfigTrustRefused = "config.trust_refused"
	// ConfigInputStored is the value of a VS Code input stored in the
	// secret store (switchboard config input); the value is never in the
	// event.
	ConfigInputStored = "config.input_stored"
	// ConfigInputDeleted is a stored value of a VS Code input removed
	// from the secret store (switchboard config input --delete).
	ConfigInputDeleted = "config.input_deleted"
	// ServerEnabled is a server enabled by a person or a program.
	ServerEnabled = "server.enabled"
	// ServerDisabled is a server disabled by a person or a program.
	ServerDisabled = "server.disabled"
	// Stopped is the stop switch set: running calls cancelled, new ones
	// refused.
	Stopped = "engine.stopped"
	// Resumed is the stop switch lifted.
	Resumed = "engine.resumed"
)

// Events lists every event name, for documentation and the CLI's help.
var Events = []string{SignIn, SignOut, TokenRefused, ConsoleLogin, ViewDenied, CallDenied,
	ConfigReload, ConfigTrust, ConfigTrustRefused, ConfigInputStored, ConfigInputDeleted, ServerEnabled, ServerDisabled,
	Stopped, Resumed}

// Outcome says how an event ended.
type Outcome string

// The outcomes: allowed and denied for a decision on a request, ok and
// failed for an action.
const (
	Allowed Outcome = "allowed"
	Denied  Outcome = "denied"
	OK      Outcome = "ok"
	Failed  Outcome = "failed"
)

// Outcomes lists every outcome.
var Outcomes = []Outcome{Allowed, Denied, OK, Failed}

// Ways an actor reaches Switchboard: the value of actor.via.
const (
	ViaCLI     = "cli"
	ViaGateway = "gateway"
	ViaConsole = "console"
	ViaControl = "control"
	ViaHooks   = "hooks"
	ViaDaemon  = "daemon" // the daemon itself (a reload on SIGHUP or a file change)
	// ViaPrompt is a person answering a question on the terminal while a
	// configuration loaded (whether to trust a client's file at first use).
	ViaPrompt = "prompt"
)

// Actor is who did it. Token is a configured token's name, never the
// token itself.
type Actor struct {
	User string `json:"user,omitempty"`
	// UID and PID are the user id and process id of a local peer (the
	// control socket's, read from the kernel), where known.
	UID     string `json:"uid,omitempty"`
	PID     int    `json:"pid,omitempty"`
	Via     string `json:"via,omitempty"`
	Token   string `json:"token,omitempty"`
	Remote  string `json:"remote,omitempty"`
	Session string `json:"session,omitempty"`
}

// Target is what it was done to.
type Target struct {
	Server string `json:"server,omitempty"`
	Tool   string `json:"tool,omitempty"`
	View   string `json:"view,omitempty"`
	File   string `json:"file,omitempty"`
	Hash   string `json:"hash,omitempty"`
	// Input is the id of a VS Code input of File (never its value).
	Input string `json:"input,omitempty"`
}

// Instance is the Switchboard process that wrote an event (replicas share
// a trail).
type Instance struct {
	Host string `json:"host"`
	PID  int    `json:"pid"`
}

// Event is one line of the audit trail. Record fills Time and Instance
// when they are zero, and passes Reason through the redactor.
type Event struct {
	Time    time.Time `json:"-"`
	Event   string    `json:"event"`
	Outcome Outcome   `json:"outcome"`
	Actor   Actor     `json:"actor"`
	Target  Target    `json:"target,omitzero"`
	// Reason is why it was refused or failed: the error's message.
	Reason string `json:"reason,omitempty"`
	// RequestID is the id of the client's JSON-RPC request the event is
	// about, as the client sent it (a JSON string or number, kept as it
	// was), where there is one.
	RequestID json.RawMessage `json:"request_id,omitempty"`
	// CallID is the tool call's id, where there is one.
	CallID   string   `json:"call_id,omitempty"`
	Instance Instance `json:"instance"`
}

// TimeFormat is the layout of the time field: RFC 3339 in UTC with
// milliseconds.
const TimeFormat = "2006-01-02T15:04:05.000Z07:00"

// wire is Event with its time as text, first on the line.
type wire struct {
	Time string `json:"time"`
	eventAlias
}

type eventAlias Event

// MarshalJSON writes the event with its time first, in TimeFormat (UTC).
func (e Event) MarshalJSON() ([]byte, error) {
	return json.Marshal(wire{Time: e.Time.UTC().Format(TimeFormat), eventAlias: eventAlias(e)})
}

// UnmarshalJSON reads a line MarshalJSON wrote.
func (e *Event) UnmarshalJSON(b []byte) error {
	var w wire
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	*e = Event(w.eventAlias)
	if w.Time != "" {
		t, err := time.Parse(time.RFC3339Nano, w.Time)
		if err != nil {
			return fmt.Errorf("reading the time %q: %w", w.Time, err)
		}
		e.Time = t
	}
	return nil
}

type actorKey struct{}

// WithActor returns ctx carrying who makes the requests done under it (the
// control socket's peer, the console's user), for the code that records
// what they do.
func WithActor(ctx context.Context, a Actor) context.Context {
	return context.WithValue(ctx, actorKey{}, a)
}

// ActorFrom returns the actor WithActor put in ctx, or def when there is
// none.
func ActorFrom(ctx context.Context, def Actor) Actor {
	if a, ok := ctx.Value(actorKey{}).(Actor); ok {
		return a
	}
	return def
}
