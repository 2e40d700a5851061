package config

import "reflect"

// deepCopy returns a copy of v that shares no slice, map or pointer with
// it, whatever fields its type has: the resolved types are copied whole
// (Config.Redacted, OAuth.Options) with no line per field, so a field
// added to them is copied too. Values behind an interface are copied when
// they are lists or mappings (a hook's literal parameters); others (an
// error) are immutable and shared.
func deepCopy[T any](v T) T {
	var out T
	copyValue(reflect.ValueOf(&out).Elem(), reflect.ValueOf(v))
	return out
}

// copyValue sets dst to a deep copy of src.
func copyValue(dst, src reflect.Value) {
	switch src.Kind() {
	case reflect.Pointer:
		if !src.IsNil() {
			p := reflect.New(src.Type().Elem())
			copyValue(p.Elem(), src.Elem())
			dst.Set(p)
		}
	case reflect.Struct:
		dst.Set(src)
		for i := range src.NumField() {
			if dst.Field(i).CanSet() {
				copyValue(dst.Field(i), src.Field(i))
			}
		}
	case reflect.Slice:
		if !src.IsNil() {
			s := reflect.MakeSlice(src.Type(), src.Len(), src.Len())
			for i := range src.Len() {
				copyValue(s.Index(i), src.Index(i))
			}
			dst.Set(s)
		}
	case reflect.Map:
		if !src.IsNil() {
			m := reflect.MakeMapWithSize(src.Type(), src.Len())
			for it := src.MapRange(); it.Next(); {
				e := reflect.New(src.Type().Elem()).Elem()
				copyValue(e, it.Value())
				m.SetMapIndex(it.Key(), e)
			}
			dst.Set(m)
		}
	case reflect.Interface:
		if k := src.Elem().Kind(); k == reflect.Slice || k == reflect.Map {
			e := reflect.New(src.Elem().Type()).Elem()
			copyValue(e, src.Elem())
			dst.Set(e)
		} else {
			dst.Set(src)
		}
	default:
		dst.Set(src)
	}
}

// copyByName sets each field of dst (a pointer to a struct) to a deep copy
// of the field of the same name and type in src (a struct): a resolved
// block handed to the package that runs it (OAuth to tokenauth.Options)
// with no line per field.
func copyByName(dst any, src any) {
	d, s := reflect.ValueOf(dst).Elem(), reflect.ValueOf(src)
	for i := range d.NumField() {
		df := d.Field(i)
		sf := s.FieldByName(d.Type().Field(i).Name)
		if sf.IsValid() && sf.Type() == df.Type() && df.CanSet() {
			copyValue(df, sf)
		}
	}
}

// sameBlock reports whether two resolved blocks hold the same values,
// whatever fields their type has: their Pos aside, and an empty list or
// mapping the same as none. A field added to the block is compared too
// (config show leaves a block out when it holds only its defaults; a
// reload keeps what is the same).
func sameBlock[T any](a, b T) bool {
	x, y := reflect.ValueOf(&a).Elem(), reflect.ValueOf(&b).Elem()
	for _, v := range []reflect.Value{x, y} {
		for i := range v.NumField() {
			f := v.Field(i)
			switch {
			case v.Type().Field(i).Name == "Pos":
				f.SetZero()
			case (f.Kind() == reflect.Slice || f.Kind() == reflect.Map) && f.Len() == 0:
				f.SetZero()
			}
		}
	}
	return reflect.DeepEqual(a, b)
}
