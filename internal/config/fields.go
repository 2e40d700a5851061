package config

import (
	"reflect"
	"slices"
	"strings"
	"time"

	"github.com/switchboard-mcp/switchboard/internal/config/schema"
)

// The resolved blocks and the file's blocks (package schema) name a key's
// field alike (LLM.Timeout, schema.LLM.Timeout), so the plain values pass
// between them by name: a key added to a block with a field of the same
// name on both sides is read and written back by config show with no code
// of its own. What differs by more than its type (a renamed field, a
// value that expands variables, refers to other entries or has a default
// that depends on others) is read and written by hand beside these.

var (
	durationType     = reflect.TypeFor[time.Duration]()
	fileDurationType = reflect.TypeFor[schema.Duration]()
)

// isFileDuration reports whether t is a duration as the file writes it.
func isFileDuration(t reflect.Type) bool {
	return t == fileDurationType || t == reflect.TypeFor[schema.BackoffStep]()
}

// readFields sets each field of dst (a pointer to a resolved struct) from
// the field of the same name in src (a pointer to a struct of package
// schema) where the file sets it to a number, a boolean, a duration or a
// size: values the schema has checked whole, with nothing to expand.
// Strings and lists are read by hand (they expand variables or name other
// entries), and so are blocks.
func readFields(dst, src any) {
	d, s := reflect.ValueOf(dst).Elem(), reflect.ValueOf(src).Elem()
	for i := range s.NumField() {
		sf := s.Field(i)
		if sf.Kind() != reflect.Pointer || sf.IsNil() {
			continue
		}
		df := d.FieldByName(s.Type().Field(i).Name)
		if !df.IsValid() {
			continue
		}
		if df.Type() == sf.Type() { // optional on both sides (nil: left to the environment)
			p := reflect.New(sf.Type().Elem())
			p.Elem().Set(sf.Elem())
			df.Set(p)
			continue
		}
		v := sf.Elem()
		switch k := v.Kind(); {
		case df.Type() == durationType && isFileDuration(v.Type()),
			df.Type() != durationType && !isFileDuration(v.Type()) && k == df.Kind() && (k == reflect.Bool || k == reflect.Int || k == reflect.Int64 || k == reflect.Float64):
			df.Set(v.Convert(df.Type()))
		}
	}
}

var (
	stringPtrType = reflect.TypeFor[*string]()
	stringsType   = reflect.TypeFor[[]string]()
)

// readBlock reads the block at path of a native file into dst (a pointer
// to a resolved struct) from f (a pointer to its struct of package
// schema): the numbers, booleans, durations and sizes (readFields), then
// each string and list of strings whose resolved field has the same name,
// its variables expanded (a value that does not expand is left out, its
// problem recorded). The keys named in byHand are left to the caller,
// which reads them with the checks only it can make (a URL, a path, a
// name that refers to other entries). A string key added to a block is
// thus read with no code of its own, as writeFields writes it back.
func (r *resolver) readBlock(dst, f any, path []any, byHand ...string) {
	readFields(dst, f)
	d, s := reflect.ValueOf(dst).Elem(), reflect.ValueOf(f).Elem()
	for i := range s.NumField() {
		sf := s.Type().Field(i)
		key, _, _ := strings.Cut(sf.Tag.Get("json"), ",")
		df := d.FieldByName(sf.Name)
		if !df.IsValid() || slices.Contains(byHand, key) {
			continue
		}
		at := append(path[:len(path):len(path)], key)
		switch {
		case sf.Type == stringPtrType && df.Kind() == reflect.String:
			if v, ok := r.textAt(at...); ok {
				df.SetString(v)
			}
		case sf.Type == stringsType && df.Type() == stringsType:
			var out []string
			for _, it := range r.itemsAt(at...) {
				if v, ok := r.expandNode(it.n, it.field); ok {
					out = append(out, v)
				}
			}
			if out != nil {
				df.Set(reflect.ValueOf(out))
			}
		}
	}
}
