package config

import (
	"reflect"
	"slices"
	"strings"
	"time"

	"github.com/switchboard-mcp/switchboard/internal/config/schema"
)

// The resolved blocks and the file's blocks (package schema) name a key's
// field alike (LLM.Timeout, schema.LLM.Timeout), or the resolved field
// names its key in a key tag (MaxOutputBytes `key:"max_output"`), so the plain values pass
// between them by name: a key added to a block with a field of the same
// name on both sides is read and written back by config show with no code
// of its own. What differs by more than its type and name (a
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
// schema) where the file sets it to a value the schema has checked whole,
// with nothing to expand: a number, a boolean, a duration, a size, a list
// of durations, or a string the schema holds to an enum (into a string
// field of any named type). Other strings and lists are read by readBlock
// (they expand variables or name other entries), and so are blocks.
func readFields(dst, src any) {
	d, s := reflect.ValueOf(dst).Elem(), reflect.ValueOf(src).Elem()
	for i := range s.NumField() {
		sf, ft := s.Field(i), s.Type().Field(i)
		df := resolvedField(d, ft)
		if !df.IsValid() || sf.Kind() != reflect.Pointer && sf.Kind() != reflect.Slice || sf.IsNil() {
			continue
		}
		v := reflect.Indirect(sf)
		switch k := v.Kind(); {
		case df.Type() == sf.Type() && k != reflect.Slice: // optional on both sides (nil: left to the environment)
			p := reflect.New(v.Type())
			p.Elem().Set(v)
			df.Set(p)
		case k == reflect.Slice && isFileDuration(v.Type().Elem()) && df.Type() == reflect.TypeFor[[]time.Duration]():
			out := make([]time.Duration, v.Len())
			for i := range out {
				out[i] = time.Duration(v.Index(i).Int())
			}
			df.Set(reflect.ValueOf(out))
		case df.Type() == durationType && isFileDuration(v.Type()),
			df.Type() != durationType && !isFileDuration(v.Type()) && k == df.Kind() && (k == reflect.Bool || k == reflect.Int || k == reflect.Int64 || k == reflect.Float64),
			k == reflect.String && df.Kind() == reflect.String && isEnum(ft):
			df.Set(v.Convert(df.Type()))
		}
	}
}

// resolvedField is the field of s whose key tag names sf's key, else the
// one of sf's name (an invalid value when there is none).
func resolvedField(s reflect.Value, sf reflect.StructField) reflect.Value {
	key, _, _ := strings.Cut(sf.Tag.Get("json"), ",")
	for i := range s.NumField() {
		if s.Type().Field(i).Tag.Get("key") == key {
			return s.Field(i)
		}
	}
	return s.FieldByName(sf.Name)
}

// isEnum reports whether the schema holds a field to a list of values.
func isEnum(f reflect.StructField) bool { return strings.Contains(f.Tag.Get("jsonschema"), "enum=") }

var (
	stringPtrType = reflect.TypeFor[*string]()
	stringsType   = reflect.TypeFor[[]string]()
	posType       = reflect.TypeFor[Pos]()
)

// readBlock reads the block at path of a native file into dst (a pointer
// to a resolved struct) from f (a pointer to its struct of package
// schema): the values readFields takes; each other string and list of
// strings whose resolved field has the same name, its variables expanded
// (a value that does not expand is left out, its problem recorded); each
// block written (a pointer to a struct of package schema) into the
// resolved struct of the same name, alike; and Pos, where the block's
// key is (or, for an entry of a list, the entry). The keys named in
// byHand are left to the caller, which reads them with the checks only it
// can make (a URL, a path, a name that refers to other entries). A key
// added to a block is thus read with no code of its own, as writeFields
// writes it back.
func (r *resolver) readBlock(dst, f any, path []any, byHand ...string) {
	d, s := reflect.ValueOf(dst).Elem(), reflect.ValueOf(f).Elem()
	if p := d.FieldByName("Pos"); p.IsValid() && p.Type() == posType {
		if _, item := path[len(path)-1].(int); !item {
			p.Set(reflect.ValueOf(r.keyAt(path...)))
		} else if n := r.at(path...); n != nil {
			p.Set(reflect.ValueOf(n.pos))
		}
	}
	if s.Kind() != reflect.Struct {
		return // the block is not there
	}
	readFields(dst, f)
	for i := range s.NumField() {
		sf := s.Type().Field(i)
		key, _, _ := strings.Cut(sf.Tag.Get("json"), ",")
		df := resolvedField(d, sf)
		if !df.IsValid() || slices.Contains(byHand, key) {
			continue
		}
		at := append(path[:len(path):len(path)], key)
		switch sv := s.Field(i); {
		case sf.Type == stringPtrType && df.Kind() == reflect.String && !isEnum(sf):
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
		case sv.Kind() == reflect.Pointer && sv.Elem().Kind() == reflect.Struct && !sv.IsNil() && df.Kind() == reflect.Struct && df.Type() != posType:
			r.readBlock(df.Addr().Interface(), sv.Interface(), at)
		}
	}
}

// defaultBlock returns the resolved block T as a file that wrote every
// default of f's keys (f points to its empty struct of package schema)
// would be read: the defaults are the schema's, one place for each.
// What has none there, or is no number, boolean, duration, size or enum
// (gateway.listen), is the caller's.
func defaultBlock[T any](f any) T {
	if err := schema.SetDefaults(f); err != nil {
		panic(err) // a default tag that does not read, which TestSetDefaults finds
	}
	var t T
	readFields(&t, f)
	return t
}
