package provider

import (
	"bufio"
	"encoding"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"reflect"
	"slices"
	"strings"
)

// MarshalRequest returns the JSON of a request body, byte for byte what
// json.Marshal(body) returns, in one buffer of its exact size: the bytes
// of the images and documents it holds (the parts of the messages this
// package builds) are base64 encoded straight into that buffer. With
// json.Marshal they are encoded into a buffer of their own, copied into
// the encoder's growing buffer (its earlier sizes garbage), and copied
// again into the slice it returns: 7.7× the bytes allocated for a 5 MiB
// image, where MarshalRequest allocates the base64 once (1.33×; see
// TestFiveMiBImageMemoryPerFormat).
//
// body is what a host passes to json.Marshal: a map[string]any (or a
// map, a slice, a pointer of one) holding this package's messages
// ([]AnthropicMessage, []GeminiContent, []OpenAIMessage,
// []OpenAIResponsesItem) beside the small members (model, tools, ...).
// A struct of the host's own is written by encoding/json as a whole:
// correct, but without the saving; put the messages in a map to have it.
// The small members are written into a scratch buffer first, then copied
// into the result beside the base64: for a body of text only, about twice
// the bytes json.Marshal allocates, in about the same time
// (BenchmarkHistory50); for a 5 MiB image, a tenth of its time
// (BenchmarkFiveMiBImageRequest: encoding/json validates its copy of the
// base64 byte by byte).
func MarshalRequest(body any) ([]byte, error) {
	return marshalStreamed(func(s *jsonStream) { s.value(body) })
}

// WriteRequest writes the JSON of a request body to w, byte for byte what
// json.Marshal(body) returns, through a buffer of 32 KiB: the bytes of the
// images and documents are base64 encoded in chunks straight into it, so
// that, with w the write end of an io.Pipe whose read end is an
// http.Request's Body, the body is never held whole. body is as for
// [MarshalRequest]. The error is the first of w's or of the encoding.
func WriteRequest(w io.Writer, body any) error {
	bw := bufio.NewWriterSize(w, 32<<10)
	s := &jsonStream{w: bw}
	s.value(body)
	if s.err != nil {
		return s.err
	}
	return bw.Flush()
}

// jsonStreamer is a value of this package whose JSON may hold bytes as
// base64: streamJSON writes it, byte for byte as its MarshalJSON (or
// encoding/json) does, the bytes encoded straight into s.
type jsonStreamer interface {
	streamJSON(s *jsonStream)
}

// jsonStream is where a value's JSON goes: written to w, or appended to
// buf with the base64 of each blob left for later (blobs says where):
// [marshalStreamed] then joins the two in one buffer of exact size. The
// first error sticks and ends the writing.
type jsonStream struct {
	buf   []byte
	blobs []blob
	n     int // the base64 length of the blobs
	w     *bufio.Writer
	err   error
	depth int // how deep value walks the host's maps, slices and pointers
}

// maxWalkDepth is how deep value walks a body's maps, slices and
// pointers: deeper, encoding/json writes the rest (the same bytes), and
// reports a cycle as json.Marshal does instead of value recursing
// without end.
const maxWalkDepth = 64

// blob is bytes whose base64 goes at offset at of a jsonStream's buf.
type blob struct {
	at   int
	data []byte
}

// marshalStreamed runs write once, the small JSON into a scratch buffer
// and the bytes aside, then joins them, the base64 encoded straight into
// one buffer of the exact size.
func marshalStreamed(write func(*jsonStream)) ([]byte, error) {
	s := &jsonStream{}
	write(s)
	if s.err != nil {
		return nil, s.err
	}
	out := make([]byte, 0, len(s.buf)+s.n)
	prev := 0
	for _, b := range s.blobs {
		out = append(out, s.buf[prev:b.at]...)
		out = base64.StdEncoding.AppendEncode(out, b.data)
		prev = b.at
	}
	return append(out, s.buf[prev:]...), nil
}

// raw writes JSON text as it is.
func (s *jsonStream) raw(b []byte) {
	switch {
	case s.err != nil:
	case s.w != nil:
		_, s.err = s.w.Write(b)
	default:
		s.buf = append(s.buf, b...)
	}
}

// str writes JSON text given as a string as it is.
func (s *jsonStream) str(text string) {
	switch {
	case s.err != nil:
	case s.w != nil:
		_, s.err = s.w.WriteString(text)
	default:
		s.buf = append(s.buf, text...)
	}
}

// base64Chunk is how many bytes WriteRequest encodes at a time (a
// multiple of 3: the chunks' encodings join into the whole's).
const base64Chunk = 3 << 12

// base64 writes data in standard base64, without the quotes.
func (s *jsonStream) base64(data []byte) {
	switch {
	case s.err != nil:
	case s.w != nil:
		var chunk [base64Chunk / 3 * 4]byte
		for len(data) > 0 && s.err == nil {
			n := min(len(data), base64Chunk)
			base64.StdEncoding.Encode(chunk[:], data[:n])
			_, s.err = s.w.Write(chunk[:base64.StdEncoding.EncodedLen(n)])
			data = data[n:]
		}
	case len(data) > 0:
		s.blobs = append(s.blobs, blob{len(s.buf), data})
		s.n += base64.StdEncoding.EncodedLen(len(data))
	}
}

// marshal writes v as json.Marshal encodes it (a small value: its
// encoding is built whole).
func (s *jsonStream) marshal(v any) {
	if s.err != nil {
		return
	}
	j, err := json.Marshal(v)
	if err != nil {
		s.err = err
		return
	}
	s.raw(j)
}

// quoted writes text as a JSON string, as json.Marshal writes it.
func (s *jsonStream) quoted(text string) { s.marshal(text) }

// key writes a member's name and its colon, after a comma unless first.
func (s *jsonStream) key(name string, first bool) {
	if !first {
		s.str(",")
	}
	s.quoted(name)
	s.str(":")
}

var (
	streamerType      = reflect.TypeFor[jsonStreamer]()
	marshalerType     = reflect.TypeFor[json.Marshaler]()
	textMarshalerType = reflect.TypeFor[encoding.TextMarshaler]()
)

// value writes v as json.Marshal does; the values of this package that
// hold bytes, and the maps, slices, pointers and interfaces that may hold
// them, are walked, everything else is encoded by encoding/json.
func (s *jsonStream) value(v any) {
	if s.err != nil {
		return
	}
	if v == nil {
		s.str("null")
		return
	}
	rv := reflect.ValueOf(v)
	if st, ok := v.(jsonStreamer); ok {
		if rv.Kind() == reflect.Pointer && rv.IsNil() {
			s.str("null")
			return
		}
		st.streamJSON(s)
		return
	}
	if s.depth >= maxWalkDepth || !mayStream(rv.Type(), nil) {
		s.marshal(v)
		return
	}
	s.depth++
	defer func() { s.depth-- }()
	switch rv.Kind() {
	case reflect.Pointer, reflect.Interface:
		if rv.IsNil() {
			s.str("null")
			return
		}
		s.value(rv.Elem().Interface())
	case reflect.Map:
		if rv.IsNil() {
			s.str("null")
			return
		}
		keys := rv.MapKeys()
		names := make([]string, len(keys))
		for i, k := range keys {
			names[i] = k.String()
		}
		order := make([]int, len(keys))
		for i := range order {
			order[i] = i
		}
		slices.SortFunc(order, func(a, b int) int { return strings.Compare(names[a], names[b]) })
		s.str("{")
		for i, j := range order {
			s.key(names[j], i == 0)
			s.value(rv.MapIndex(keys[j]).Interface())
		}
		s.str("}")
	case reflect.Slice:
		if rv.IsNil() {
			s.str("null")
			return
		}
		s.str("[")
		for i := range rv.Len() {
			if i > 0 {
				s.str(",")
			}
			s.value(rv.Index(i).Interface())
		}
		s.str("]")
	default:
		s.err = fmt.Errorf("provider: cannot write a %s", rv.Type()) // mayStream says no other kind
	}
}

// mayStream reports whether a value of type t may hold a jsonStreamer
// that value would walk to: t is one, or a map with string keys, a slice,
// a pointer or an interface that may hold one. A type encoding/json
// encodes through a method of its own (or its pointer's, which it calls
// on a slice's elements) is left to encoding/json, as are arrays and
// structs (their fields' names and options are encoding/json's to read).
func mayStream(t reflect.Type, seen map[reflect.Type]bool) bool {
	if t.Implements(streamerType) {
		return true
	}
	if t.Implements(marshalerType) || t.Implements(textMarshalerType) ||
		reflect.PointerTo(t).Implements(marshalerType) || reflect.PointerTo(t).Implements(textMarshalerType) {
		return false
	}
	if seen[t] {
		return false
	}
	switch t.Kind() {
	case reflect.Interface:
		return true
	case reflect.Pointer, reflect.Slice, reflect.Map:
		if t.Kind() == reflect.Map && t.Key().Kind() != reflect.String {
			return false
		}
		if seen == nil {
			seen = map[reflect.Type]bool{}
		}
		seen[t] = true
		return mayStream(t.Elem(), seen)
	}
	return false
}

// streamSlice writes items as a JSON array (null when nil, as
// encoding/json writes a nil slice).
func streamSlice[T jsonStreamer](s *jsonStream, items []T) {
	if items == nil {
		s.str("null")
		return
	}
	s.str("[")
	for i, it := range items {
		if i > 0 {
			s.str(",")
		}
		it.streamJSON(s)
	}
	s.str("]")
}
