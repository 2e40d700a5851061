package schema

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"reflect"
	"strconv"
	"strings"
	"time"

	"github.com/invopop/jsonschema"
)

// Duration is a length of time as the file writes it: a Go duration
// ("30s", "1m30s", "500ms") or a number of seconds (30, 0.5).
type Duration time.Duration

// durationPattern matches a Go duration or a decimal number of seconds.
const durationPattern = `^\s*[-+]?(([0-9]+(\.[0-9]*)?|\.[0-9]+)(ns|us|µs|μs|ms|s|m|h))+\s*$|^\s*[-+]?([0-9]+(\.[0-9]*)?|\.[0-9]+)\s*$`

// JSONSchema describes a duration: a duration string or a number.
func (Duration) JSONSchema() *jsonschema.Schema {
	return &jsonschema.Schema{
		Title:       "duration",
		Description: "A duration such as 30s, 1m30s or 500ms, or a number of seconds.",
		AnyOf: []*jsonschema.Schema{
			{Type: "string", Pattern: durationPattern},
			{Type: "number"},
		},
	}
}

// UnmarshalJSON reads a duration string or a number of seconds.
func (d *Duration) UnmarshalJSON(b []byte) error {
	if isNull(b) {
		return nil
	}
	v, err := ParseDuration(rawValue(b))
	*d = Duration(v)
	return err
}

// Std returns the duration as a time.Duration.
func (d Duration) Std() time.Duration { return time.Duration(d) }

// ParseDuration reads a duration as the file writes it: a Go duration
// string or a number of seconds, given as a string or a json.Number (or
// float64).
func ParseDuration(v any) (time.Duration, error) {
	var s string
	switch x := v.(type) {
	case string:
		s = strings.TrimSpace(x)
		if d, err := time.ParseDuration(s); err == nil {
			return d, nil
		}
	case json.Number:
		s = x.String()
	case float64:
		s = strconv.FormatFloat(x, 'g', -1, 64)
	default:
		return 0, fmt.Errorf("a duration is a string or a number, not %T", v)
	}
	secs, err := strconv.ParseFloat(strings.ReplaceAll(s, "_", ""), 64)
	if err != nil || math.IsNaN(secs) || math.IsInf(secs, 0) {
		return 0, fmt.Errorf("invalid duration %q", s)
	}
	if math.Abs(secs) > float64(math.MaxInt64/int64(time.Second)) {
		return 0, fmt.Errorf("duration %s is too large", s)
	}
	return time.Duration(secs * float64(time.Second)), nil
}

// FormatDuration renders a duration the way the file writes it (and a
// person does): 30s, 5m, 1h, 1m30s.
func FormatDuration(d time.Duration) string {
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = s[:len(s)-2]
	}
	if strings.HasSuffix(s, "h0m") {
		s = s[:len(s)-2]
	}
	return s
}

// Size is a number of bytes as the file writes it: a whole number, or a
// number with a unit ("512KiB", "1 MiB", "2GB").
type Size int64

// sizePattern matches a whole number with an optional unit.
const sizePattern = `^\s*[0-9]+\s*([kKmMgG][iI]?)?[bB]?\s*$`

// JSONSchema describes a size: a whole number or a size string.
func (Size) JSONSchema() *jsonschema.Schema {
	return &jsonschema.Schema{
		Title:       "size",
		Description: "A number of bytes, or a size such as 512KiB or 1MiB (units " + SizeUnits + ").",
		AnyOf: []*jsonschema.Schema{
			{Type: "string", Pattern: sizePattern},
			{Type: "integer"},
		},
	}
}

// UnmarshalJSON reads a whole number or a size string.
func (s *Size) UnmarshalJSON(b []byte) error {
	if isNull(b) {
		return nil
	}
	v, err := ParseSize(rawValue(b))
	*s = Size(v)
	return err
}

// SizeUnits names the units ParseSize accepts, for messages.
const SizeUnits = "B, KB, KiB, MB, MiB, GB or GiB"

// sizeUnits are the units ParseSize accepts, by lower-case name: decimal
// (KB = 1000 bytes) and binary (KiB = 1024 bytes).
var sizeUnits = map[string]int64{
	"b":  1,
	"kb": 1000, "kib": 1 << 10,
	"mb": 1000 * 1000, "mib": 1 << 20,
	"gb": 1000 * 1000 * 1000, "gib": 1 << 30,
}

// ParseSize reads a size in bytes: a whole number (a string, a
// json.Number or a float64 without fraction), optionally followed by a
// unit — B, KB, MB, GB (powers of 1000) or KiB, MiB, GiB (powers of
// 1024) — in any case, with or without a space: "1048576", "512KiB",
// "1 MiB", "2gb". Signs, fractions and other units are errors.
func ParseSize(v any) (int64, error) {
	var s string
	switch x := v.(type) {
	case string:
		s = x
	case json.Number:
		s = x.String()
	case float64:
		s = strconv.FormatFloat(x, 'f', -1, 64)
	default:
		return 0, fmt.Errorf("a size is a string or a number, not %T", v)
	}
	t := strings.TrimSpace(s)
	if t == "" {
		return 0, errors.New("size is empty")
	}
	i := 0
	for i < len(t) && t[i] >= '0' && t[i] <= '9' {
		i++
	}
	if i == 0 {
		return 0, fmt.Errorf("invalid size %q: want a whole number of bytes, optionally followed by %s", s, SizeUnits)
	}
	n, err := strconv.ParseInt(t[:i], 10, 64)
	if err != nil {
		return 0, fmt.Errorf("size %q is too large", s)
	}
	unit := strings.TrimLeft(t[i:], " ")
	mult := int64(1)
	if unit != "" {
		m, ok := sizeUnits[strings.ToLower(unit)]
		if !ok {
			return 0, fmt.Errorf("invalid size %q: unknown unit %q; use %s", s, unit, SizeUnits)
		}
		mult = m
	}
	if n > 0 && mult > 1 && n > (1<<63-1)/mult {
		return 0, fmt.Errorf("size %q is too large", s)
	}
	return n * mult, nil
}

// FormatSize renders a size the way a person writes it, in a form that
// ParseSize reads back: 1MiB, 512KiB, 1500B.
func FormatSize(n int64) string {
	for _, u := range []struct {
		name string
		size int64
	}{{"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10}} {
		if n != 0 && n%u.size == 0 {
			return strconv.FormatInt(n/u.size, 10) + u.name
		}
	}
	return strconv.FormatInt(n, 10) + "B"
}

// QueueWaitTimeout is how limits.queue_wait is written for "as long as
// the call's timeout allows".
const QueueWaitTimeout = "timeout"

// QueueWait is limits.queue_wait: the word "timeout" or a duration.
type QueueWait struct {
	// CallTimeout is true for "timeout".
	CallTimeout bool
	// Duration is the wait otherwise.
	Duration time.Duration
}

// JSONSchema describes the word "timeout" or a duration.
func (QueueWait) JSONSchema() *jsonschema.Schema {
	return &jsonschema.Schema{
		Title: "queue wait",
		AnyOf: []*jsonschema.Schema{
			{Const: QueueWaitTimeout},
			{Ref: "#/$defs/Duration"},
		},
	}
}

// UnmarshalJSON reads "timeout" or a duration.
func (q *QueueWait) UnmarshalJSON(b []byte) error {
	if isNull(b) {
		return nil
	}
	v := rawValue(b)
	if s, ok := v.(string); ok && strings.TrimSpace(s) == QueueWaitTimeout {
		*q = QueueWait{CallTimeout: true}
		return nil
	}
	d, err := ParseDuration(v)
	*q = QueueWait{Duration: d}
	return err
}

// Text is a string value that may also be written as a number or a
// boolean, taken as written (PORT: 8080 is "8080"): environment
// variables, headers and arguments.
type Text string

// JSONSchema describes a string, number or boolean.
func (Text) JSONSchema() *jsonschema.Schema {
	return &jsonschema.Schema{
		Title: "text",
		AnyOf: []*jsonschema.Schema{{Type: "string"}, {Type: "number"}, {Type: "boolean"}},
	}
}

// UnmarshalJSON reads a string, or a number or boolean as written.
func (t *Text) UnmarshalJSON(b []byte) error {
	if isNull(b) {
		return nil
	}
	switch v := rawValue(b).(type) {
	case string:
		*t = Text(v)
	case json.Number:
		*t = Text(v.String())
	case bool:
		*t = Text(strconv.FormatBool(v))
	default:
		return fmt.Errorf("want a string, not %T", v)
	}
	return nil
}

// Texts converts a list of Text to strings.
func Texts(in []Text) []string {
	if in == nil {
		return nil
	}
	out := make([]string, len(in))
	for i, t := range in {
		out[i] = string(t)
	}
	return out
}

// isNull reports whether b is JSON null, which leaves a value as it is.
func isNull(b []byte) bool { return strings.TrimSpace(string(b)) == "null" }

// rawValue decodes one JSON value keeping numbers as json.Number.
func rawValue(b []byte) any {
	d := json.NewDecoder(strings.NewReader(string(b)))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		return nil
	}
	return v
}

// SetDefaults sets each field of v (a pointer to an empty struct of this
// package) that its tags give a default, as the file would be read with
// the default written in it.
func SetDefaults(v any) error {
	doc := map[string]json.RawMessage{}
	t := reflect.TypeOf(v).Elem()
	for i := range t.NumField() {
		f := t.Field(i)
		key, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		for _, kv := range strings.Split(f.Tag.Get("jsonschema")+","+f.Tag.Get("jsonschema_extras"), ",") {
			if d, ok := strings.CutPrefix(kv, "default="); ok {
				doc[key] = json.RawMessage(d) // a number or a boolean
				if e := f.Type.Elem(); e.Kind() == reflect.String || reflect.PointerTo(e).Implements(unmarshalerType) {
					doc[key], _ = json.Marshal(d) // a string, or a duration, size or queue wait as written
				}
			}
		}
	}
	b, err := json.Marshal(doc)
	if err != nil {
		return fmt.Errorf("the defaults of %s: %w", t.Name(), err)
	}
	return json.Unmarshal(b, v)
}

var unmarshalerType = reflect.TypeFor[json.Unmarshaler]()
