package agentresolver

import (
	"encoding"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/llmtoolkit/llmtoolkit"
)

// The decoder checks arguments against the plan, which is the schema the
// tool publishes, and decodes them into the Go value in the same pass: no
// JSON round trip, no generic schema walk. It accepts exactly what the
// published schema accepts (see the differential tests), except that it also
// refuses what cannot be decoded: a date-time that is not RFC 3339, a number
// out of range for its Go type, invalid base64, or a value a type's own
// UnmarshalText/UnmarshalJSON refuses. Properties the schema does not name
// are ignored.

// state collects what went wrong during one decode, and the JSON pointer
// to the value being decoded, as a stack of steps that is only built into a
// string when something is wrong.
type state struct {
	violations []string
	notJSON    bool // met a Go value that is not a JSON type: normalise and retry
	path       []pathSeg
}

// pathSeg is one step of a JSON pointer.
type pathSeg struct {
	key   string
	index int // -1 for an object key
}

func (s *state) push(key string, index int) { s.path = append(s.path, pathSeg{key: key, index: index}) }
func (s *state) pop()                       { s.path = s.path[:len(s.path)-1] }

// pointer returns the JSON pointer of the value being decoded ("/" for the
// root).
func (s *state) pointer() string {
	if len(s.path) == 0 {
		return "/"
	}
	var b strings.Builder
	for _, seg := range s.path {
		b.WriteByte('/')
		if seg.index >= 0 {
			b.WriteString(strconv.Itoa(seg.index))
			continue
		}
		for _, r := range seg.key {
			switch r {
			case '~':
				b.WriteString("~0")
			case '/':
				b.WriteString("~1")
			default:
				b.WriteRune(r)
			}
		}
	}
	return b.String()
}

func (s *state) fail(msg string) {
	s.violations = append(s.violations, s.pointer()+": "+msg)
}

// typeError reports v where a value of JSON type want was expected.
func (s *state) typeError(want string, v any) {
	got := jsonType(v)
	if got == "" {
		s.notJSON = true
		return
	}
	s.fail("expected " + want + ", but got " + got)
}

// jsonType names the JSON type of v, or "" when v is not a decoded JSON
// value.
func jsonType(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case bool:
		return "boolean"
	case string:
		return "string"
	case float64, json.Number, int, int64:
		return "number"
	case []any:
		return "array"
	case map[string]any:
		return "object"
	}
	return ""
}

// decodeArgs checks args against the plan of the arguments type (n) and
// decodes them into dst. The error is an *llmtoolkit.ArgumentsError listing
// every violation.
func (n *node) decodeArgs(tool string, args map[string]any, dst reflect.Value) error {
	var buf [8]pathSeg
	s := state{path: buf[:0]}
	n.decodeRoot(args, dst, &s)
	if s.notJSON {
		// Arguments built in Go ([]string, int32, structs, ...): bring them
		// to their JSON form, as ValidateArguments does, and start again.
		norm, err := normalize(args)
		if err != nil {
			return fmt.Errorf("%w for tool %q: arguments cannot be encoded as JSON: %w", llmtoolkit.ErrInvalidArguments, tool, err)
		}
		dst.SetZero()
		s = state{path: buf[:0]}
		n.decodeRoot(norm, dst, &s)
	}
	if len(s.violations) > 0 {
		slices.Sort(s.violations)
		return &llmtoolkit.ArgumentsError{Tool: tool, Violations: slices.Compact(s.violations)}
	}
	return nil
}

func (n *node) decodeRoot(args map[string]any, dst reflect.Value, s *state) {
	if n.kind == kindPointer {
		v := reflect.New(n.elem.typ)
		n.elem.decodeFields(args, v.Elem(), s)
		dst.Set(v)
		return
	}
	n.decodeFields(args, dst, s)
}

// normalize returns args after a JSON round trip.
func normalize(args map[string]any) (map[string]any, error) {
	data, err := json.Marshal(args)
	if err != nil {
		return nil, err
	}
	var m map[string]any
	if err := json.Unmarshal(data, &m); err != nil {
		return nil, err
	}
	return m, nil
}

// decodeFields decodes object m into struct dst.
func (n *node) decodeFields(m map[string]any, dst reflect.Value, s *state) {
	for i := range n.fields {
		f := &n.fields[i]
		val, ok := m[f.name]
		if !ok {
			if f.required {
				s.push(f.name, -1)
				s.fail("missing required property (add it)")
				s.pop()
			}
			continue
		}
		var fv reflect.Value
		if len(f.index) == 1 {
			fv = dst.Field(f.index[0])
		} else {
			fv = dst.FieldByIndex(f.index)
		}
		s.push(f.name, -1)
		f.node.decode(val, fv, s)
		s.pop()
		if s.notJSON {
			return
		}
	}
}

// enumString checks that v is a string allowed by n's enum (when it has
// one), recording the failure in s otherwise.
func (n *node) enumString(v any, s *state) (string, bool) {
	str, ok := v.(string)
	if !ok {
		s.typeError("string", v)
		return "", false
	}
	if n.enum != nil && !n.enumHasString(str) {
		s.fail("value must be one of " + n.enumText)
		return "", false
	}
	return str, true
}

// decode checks v against n and stores it in dst (addressable).
func (n *node) decode(v any, dst reflect.Value, s *state) {
	switch n.kind {
	case kindString:
		str, ok := n.enumString(v, s)
		if !ok {
			return
		}
		dst.SetString(str)
	case kindBool:
		b, ok := v.(bool)
		if !ok {
			s.typeError("boolean", v)
			return
		}
		dst.SetBool(b)
	case kindInt:
		i, ok := n.integer(v, s)
		if ok {
			dst.SetInt(i)
		}
	case kindUint:
		u, ok := n.unsigned(v, s)
		if ok {
			dst.SetUint(u)
		}
	case kindFloat:
		f, ok := n.number(v, s)
		if !ok {
			return
		}
		if dst.OverflowFloat(f) {
			s.fail(fmt.Sprintf("%v is out of range for %s", f, n.typ))
			return
		}
		dst.SetFloat(f)
	case kindStruct:
		m, ok := v.(map[string]any)
		if !ok {
			s.typeError("object", v)
			return
		}
		n.decodeFields(m, dst, s)
	case kindPointer:
		pv := reflect.New(n.elem.typ)
		n.elem.decode(v, pv.Elem(), s)
		dst.Set(pv)
	case kindSlice:
		a, ok := v.([]any)
		if !ok {
			s.typeError("array", v)
			return
		}
		if n.direct && n.elem.kind == kindAny {
			*(dst.Addr().Interface().(*[]any)) = a
			return
		}
		sv := reflect.MakeSlice(n.typ, len(a), len(a))
		for i, e := range a {
			s.push("", i)
			n.elem.decode(e, sv.Index(i), s)
			s.pop()
			if s.notJSON {
				return
			}
		}
		dst.Set(sv)
	case kindArray:
		a, ok := v.([]any)
		if !ok {
			s.typeError("array", v)
			return
		}
		if want := n.typ.Len(); len(a) != want {
			s.fail(fmt.Sprintf("exactly %d items required, but found %d items", want, len(a)))
			return
		}
		for i, e := range a {
			s.push("", i)
			n.elem.decode(e, dst.Index(i), s)
			s.pop()
			if s.notJSON {
				return
			}
		}
	case kindMap:
		m, ok := v.(map[string]any)
		if !ok {
			s.typeError("object", v)
			return
		}
		if n.direct {
			*(dst.Addr().Interface().(*map[string]any)) = m
			return
		}
		mv := reflect.MakeMapWithSize(n.typ, len(m))
		keyType := n.typ.Key()
		for k, e := range m {
			ev := reflect.New(n.elem.typ).Elem()
			s.push(k, -1)
			n.elem.decode(e, ev, s)
			s.pop()
			if s.notJSON {
				return
			}
			mv.SetMapIndex(reflect.ValueOf(k).Convert(keyType), ev)
		}
		dst.Set(mv)
	case kindAny:
		if v != nil {
			dst.Set(reflect.ValueOf(v))
		}
	case kindTime:
		str, ok := v.(string)
		if !ok {
			s.typeError("string", v)
			return
		}
		t, err := time.Parse(time.RFC3339Nano, str)
		if err != nil {
			s.fail(fmt.Sprintf("expected a date-time in RFC 3339 form such as 2006-01-02T15:04:05Z, but got %q", str))
			return
		}
		*(dst.Addr().Interface().(*time.Time)) = t
	case kindBytes:
		str, ok := v.(string)
		if !ok {
			s.typeError("string", v)
			return
		}
		b, err := base64.StdEncoding.DecodeString(str)
		if err != nil {
			s.fail("expected base64-encoded data: " + err.Error())
			return
		}
		dst.SetBytes(b)
	case kindText:
		str, ok := n.enumString(v, s)
		if !ok {
			return
		}
		if err := dst.Addr().Interface().(encoding.TextUnmarshaler).UnmarshalText([]byte(str)); err != nil {
			s.fail(fmt.Sprintf("invalid %s: %v", n.typ, err))
		}
	case kindJSON:
		if jsonType(v) == "" {
			s.notJSON = true
			return
		}
		data, err := json.Marshal(v)
		if err == nil {
			err = dst.Addr().Interface().(json.Unmarshaler).UnmarshalJSON(data)
		}
		if err != nil {
			s.fail(fmt.Sprintf("invalid %s: %v", n.typ, err))
		}
	}
}

func (n *node) enumHasString(str string) bool {
	for _, e := range n.enum {
		if e == str {
			return true
		}
	}
	return false
}

func (n *node) enumHasNumber(f float64) bool {
	for _, e := range n.enum {
		if e == f {
			return true
		}
	}
	return false
}

// checkNumber applies the bounds and the enum to f.
func (n *node) checkNumber(f float64, s *state) bool {
	if n.hasMin && f < n.min {
		s.fail(fmt.Sprintf("must be >= %v but found %v", n.min, f))
		return false
	}
	if n.hasMax && f > n.max {
		s.fail(fmt.Sprintf("must be <= %v but found %v", n.max, f))
		return false
	}
	if n.enum != nil && !n.enumHasNumber(f) {
		s.fail("value must be one of " + n.enumText)
		return false
	}
	return true
}

// 2^63 and 2^64 as float64, exactly.
const (
	two63 = 9223372036854775808.0
	two64 = 18446744073709551616.0
)

// integer reads v as a signed integer of n's type.
func (n *node) integer(v any, s *state) (int64, bool) {
	var i int64
	switch x := v.(type) {
	case float64:
		if x != math.Trunc(x) || math.IsInf(x, 0) {
			s.fail("expected integer, but got number")
			return 0, false
		}
		if x < -two63 || x >= two63 {
			s.fail(fmt.Sprintf("%v is out of range for %s", x, n.typ))
			return 0, false
		}
		i = int64(x)
	case int:
		i = int64(x)
	case int64:
		i = x
	case json.Number:
		var err error
		if i, err = strconv.ParseInt(string(x), 10, 64); err != nil {
			f, ferr := x.Float64()
			if ferr == nil && f == math.Trunc(f) && f >= -two63 && f < two63 {
				i = int64(f)
			} else if ferr == nil && f == math.Trunc(f) {
				s.fail(fmt.Sprintf("%s is out of range for %s", x, n.typ))
				return 0, false
			} else {
				s.fail("expected integer, but got number")
				return 0, false
			}
		}
	default:
		s.typeError("integer", v)
		return 0, false
	}
	return i, n.checkNumber(float64(i), s)
}

// unsigned reads v as an unsigned integer of n's type.
func (n *node) unsigned(v any, s *state) (uint64, bool) {
	var f float64 // the value, for the bounds and the enum
	var u uint64
	inRange := true
	switch x := v.(type) {
	case float64:
		if x != math.Trunc(x) || math.IsInf(x, 0) {
			s.fail("expected integer, but got number")
			return 0, false
		}
		f = x
		inRange = x < two64
		if x >= 0 && inRange {
			u = uint64(x)
		}
	case int:
		f = float64(x)
		if x >= 0 {
			u = uint64(x)
		}
	case int64:
		f = float64(x)
		if x >= 0 {
			u = uint64(x)
		}
	case json.Number:
		var err error
		if u, err = strconv.ParseUint(string(x), 10, 64); err == nil {
			f = float64(u)
			break
		}
		ff, ferr := x.Float64()
		if ferr != nil || ff != math.Trunc(ff) {
			if ferr == nil || strings.HasPrefix(string(x), "-") {
				s.fail("expected integer, but got number")
			} else {
				s.fail(fmt.Sprintf("%s is out of range for %s", x, n.typ))
			}
			return 0, false
		}
		f = ff
		inRange = ff < two64
		if ff >= 0 && inRange {
			u = uint64(ff)
		}
	default:
		s.typeError("integer", v)
		return 0, false
	}
	if !n.checkNumber(f, s) {
		return 0, false
	}
	if !inRange {
		s.fail(fmt.Sprintf("%v is out of range for %s", v, n.typ))
		return 0, false
	}
	return u, true
}

// number reads v as a number.
func (n *node) number(v any, s *state) (float64, bool) {
	var f float64
	switch x := v.(type) {
	case float64:
		f = x
	case int:
		f = float64(x)
	case int64:
		f = float64(x)
	case json.Number:
		var err error
		if f, err = x.Float64(); err != nil {
			s.fail(fmt.Sprintf("%s is out of range for %s", x, n.typ))
			return 0, false
		}
	default:
		s.typeError("number", v)
		return 0, false
	}
	return f, n.checkNumber(f, s)
}
