package config

import "reflect"

// ChangedBlocks names the top-level blocks other than servers whose values
// differ between old and cur, as the file spells them (gateway, limits,
// hooks, ...), in file order: what a reload changed besides its servers.
// Positions are not values: a block that only moved is not changed.
func ChangedBlocks(old, cur *Config) []string {
	blocks := []struct {
		key  string
		a, b any
	}{
		{"defaults", old.Defaults, cur.Defaults},
		{"limits", old.Limits, cur.Limits},
		{"history", old.History, cur.History},
		{"security", old.AllowedCommands, cur.AllowedCommands},
		{"gateway", old.Gateway, cur.Gateway},
		{"hooks", old.Hooks.List, cur.Hooks.List},
		{"hook_settings", old.Hooks.Settings, cur.Hooks.Settings},
		{"notebook", old.Notebook, cur.Notebook},
		{"llm", old.LLM, cur.LLM},
		{"agent", old.Agent, cur.Agent},
		{"telemetry", old.Telemetry, cur.Telemetry},
		{"audit", old.Audit, cur.Audit},
	}
	var out []string
	for _, b := range blocks {
		if !sameValues(reflect.ValueOf(b.a), reflect.ValueOf(b.b)) {
			out = append(out, b.key)
		}
	}
	return out
}

// sameValues is reflect.DeepEqual with every Pos field ignored and an
// empty list or mapping the same as none.
func sameValues(a, b reflect.Value) bool {
	if a.IsValid() != b.IsValid() {
		return false
	}
	if !a.IsValid() {
		return true
	}
	if a.Type() != b.Type() {
		return false
	}
	switch a.Kind() {
	case reflect.Pointer, reflect.Interface:
		if a.IsNil() || b.IsNil() {
			return a.IsNil() == b.IsNil()
		}
		return sameValues(a.Elem(), b.Elem())
	case reflect.Struct:
		if a.Type() == reflect.TypeOf(Pos{}) {
			return true
		}
		for i := range a.NumField() {
			if !sameValues(a.Field(i), b.Field(i)) {
				return false
			}
		}
		return true
	case reflect.Slice, reflect.Array:
		if a.Len() != b.Len() {
			return false
		}
		for i := range a.Len() {
			if !sameValues(a.Index(i), b.Index(i)) {
				return false
			}
		}
		return true
	case reflect.Map:
		if a.Len() != b.Len() {
			return false
		}
		keys := a.MapKeys()
		for _, k := range keys {
			bv := b.MapIndex(k)
			if !bv.IsValid() || !sameValues(a.MapIndex(k), bv) {
				return false
			}
		}
		return true
	default:
		return reflect.DeepEqual(a.Interface(), b.Interface())
	}
}
