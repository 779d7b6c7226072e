package text

import "reflect"

// JSONKind names, in a user's words, the JSON a Go type is decoded from
// ("a number", "a list", ...), for errors about a config or catalog file:
// json.UnmarshalTypeError names the Go type ("[]json.RawMessage").
func JSONKind(t reflect.Type) string {
	switch t.Kind() {
	case reflect.Float32, reflect.Float64, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "a number"
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "true or false"
	case reflect.Slice, reflect.Array:
		return "a list"
	}
	return "an object"
}
