package schema

import (
	"reflect"
	"strings"
	"testing"
)

// TestSetDefaults checks that every default a tag of the file's types
// gives reads as the file would read it written there: the resolved
// configuration's defaults are these.
func TestSetDefaults(t *testing.T) {
	t.Parallel()
	seen := map[reflect.Type]bool{}
	var walk func(reflect.Type)
	walk = func(typ reflect.Type) {
		for typ.Kind() == reflect.Pointer || typ.Kind() == reflect.Slice || typ.Kind() == reflect.Map {
			typ = typ.Elem()
		}
		if typ.Kind() != reflect.Struct || typ.PkgPath() != reflect.TypeFor[File]().PkgPath() || seen[typ] || reflect.PointerTo(typ).Implements(unmarshalerType) {
			return // not a block: a value with its own reading (a queue wait, a condition) has no keys
		}
		seen[typ] = true
		v := reflect.New(typ)
		if err := SetDefaults(v.Interface()); err != nil {
			t.Errorf("%s: %v", typ.Name(), err)
		}
		for i := range typ.NumField() {
			f := typ.Field(i)
			if strings.Contains(","+f.Tag.Get("jsonschema")+","+f.Tag.Get("jsonschema_extras"), ",default=") && v.Elem().Field(i).IsNil() {
				t.Errorf("%s.%s: its default is not set", typ.Name(), f.Name)
			}
			walk(f.Type)
		}
	}
	walk(reflect.TypeFor[File]())
	if len(seen) < 20 {
		t.Errorf("walked %d types of the file, want the 20 or more it has", len(seen))
	}

	var d Defaults
	if err := SetDefaults(&d); err != nil {
		t.Fatal(err)
	}
	if *d.MaxRetries != 2 || *d.RequestTimeout != Duration(30e9) || d.Health != nil {
		t.Errorf("got max_retries %d, request_timeout %v, health %v; want 2, 30s and none", *d.MaxRetries, d.RequestTimeout, d.Health)
	}
}
