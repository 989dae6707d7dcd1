package agent

import (
	"encoding/json"
	"maps"
	"reflect"
)

// copyArguments returns a deep copy of a call's arguments: the maps and
// slices a hook or the callback receives (and those it returns) are never
// the ones the tool runs with, so a change made in place cannot bypass the
// checks. JSON values (maps, []any, strings, numbers, booleans, nil) are
// copied as such; any other map or slice is copied with reflection.
func copyArguments(args map[string]any) map[string]any {
	if args == nil {
		return nil
	}
	out := make(map[string]any, len(args))
	for k, v := range args {
		out[k] = copyValue(v)
	}
	return out
}

// copyValue returns a deep copy of one argument value.
func copyValue(v any) any {
	switch v := v.(type) {
	case nil, string, float64, bool, json.Number, int, int64:
		return v
	case map[string]any:
		return copyArguments(v)
	case []any:
		out := make([]any, len(v))
		for i, e := range v {
			out[i] = copyValue(e)
		}
		return out
	case []string:
		return append([]string(nil), v...)
	case map[string]string:
		return maps.Clone(v)
	}
	return copyReflect(reflect.ValueOf(v)).Interface()
}

// copyReflect deep-copies the maps, slices, arrays and pointers of a value
// of a type a JSON decoder does not produce (a host's own argument types).
func copyReflect(v reflect.Value) reflect.Value {
	switch v.Kind() {
	case reflect.Map:
		if v.IsNil() {
			return v
		}
		out := reflect.MakeMapWithSize(v.Type(), v.Len())
		for it := v.MapRange(); it.Next(); {
			out.SetMapIndex(it.Key(), copyElem(it.Value(), v.Type().Elem()))
		}
		return out
	case reflect.Slice:
		if v.IsNil() {
			return v
		}
		out := reflect.MakeSlice(v.Type(), v.Len(), v.Len())
		for i := range v.Len() {
			out.Index(i).Set(copyElem(v.Index(i), v.Type().Elem()))
		}
		return out
	case reflect.Array:
		out := reflect.New(v.Type()).Elem()
		for i := range v.Len() {
			out.Index(i).Set(copyElem(v.Index(i), v.Type().Elem()))
		}
		return out
	case reflect.Pointer:
		if v.IsNil() {
			return v
		}
		out := reflect.New(v.Type().Elem())
		out.Elem().Set(copyElem(v.Elem(), v.Type().Elem()))
		return out
	}
	return v // structs are copied by value; their reference fields stay shared
}

// copyElem deep-copies an element of static type t.
func copyElem(v reflect.Value, t reflect.Type) reflect.Value {
	if t.Kind() != reflect.Interface {
		return copyReflect(v)
	}
	if v.IsNil() {
		return v
	}
	out := reflect.New(t).Elem()
	out.Set(reflect.ValueOf(copyValue(v.Elem().Interface())))
	return out
}
