package hooks

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/switchboard-mcp/switchboard/internal/config"
)

// template is a parsed template with its field paths split once.
type template struct {
	src   string
	parts []part
}

type part struct {
	config.HookTemplatePart
	path []string
}

// parseTemplate parses a template (config.ParseHookTemplate's syntax).
func parseTemplate(s string) (template, error) {
	t, err := config.ParseHookTemplate(s)
	if err != nil {
		return template{}, err
	}
	out := template{src: s, parts: make([]part, len(t.Parts))}
	for i, p := range t.Parts {
		out.parts[i] = part{HookTemplatePart: p}
		if p.Field != "" {
			out.parts[i].path = strings.Split(p.Field, ".")
		}
	}
	return out, nil
}

// MissingFieldError reports a placeholder whose field the event does not
// have and that gives no default.
type MissingFieldError struct{ Field string }

func (e *MissingFieldError) Error() string {
	return fmt.Sprintf("the event has no field %q (give a default: {%s|...})", e.Field, e.Field)
}

// single reports whether the template is exactly one placeholder.
func (t template) single() bool { return len(t.parts) == 1 && t.parts[0].Field != "" }

// value expands the template. A template that is exactly one placeholder
// keeps the value's JSON type (its default, when used, is read as JSON if
// it is valid JSON, else as a string); anything else is a string.
func (t template) value(ctx map[string]any) (any, error) {
	if !t.single() {
		return t.expand(ctx)
	}
	p := t.parts[0]
	if v, ok := lookupPath(ctx, p.path); ok && (v != nil && v != "" || !p.HasDefault) {
		return v, nil
	}
	if !p.HasDefault {
		return nil, &MissingFieldError{Field: p.Field}
	}
	var v any
	if json.Unmarshal([]byte(p.Default), &v) == nil {
		return v, nil
	}
	return p.Default, nil
}

// expand renders the template as a string. A missing field, or one that
// is null or empty, takes its default; a missing field without one is an
// error.
func (t template) expand(ctx map[string]any) (string, error) {
	if len(t.parts) == 1 && t.parts[0].Field == "" {
		return t.parts[0].Literal, nil
	}
	var b strings.Builder
	for _, p := range t.parts {
		if p.Field == "" {
			b.WriteString(p.Literal)
			continue
		}
		v, ok := lookupPath(ctx, p.path)
		switch {
		case ok && v != nil && v != "":
			b.WriteString(stringify(v))
		case p.HasDefault:
			b.WriteString(p.Default)
		case ok:
			// present but null or empty: renders empty
		default:
			return "", &MissingFieldError{Field: p.Field}
		}
	}
	return b.String(), nil
}

// stringify renders a context value in text: strings as they are, other
// values as JSON.
func stringify(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case nil:
		return ""
	case bool:
		return strconv.FormatBool(x)
	case json.Number:
		return string(x)
	case float64:
		return strconv.FormatFloat(x, 'f', -1, 64)
	case int:
		return strconv.Itoa(x)
	case int64:
		return strconv.FormatInt(x, 10)
	}
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}
