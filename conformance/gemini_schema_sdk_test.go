package conformance_test

import (
	"bytes"
	"encoding/json"
	"fmt"

	"google.golang.org/genai"
)

// geminiSchemaProblems decodes a converted schema into the official SDK's
// genai.Schema (unknown keywords refused) and lists what Gemini would
// refuse: an ARRAY without items, properties on a schema that is not an
// OBJECT, keywords of another type in a typed schema (a STRING branch with
// items), a type spelled otherwise than the SDK's enum.
func geminiSchemaProblems(out map[string]any) []string {
	data, err := json.Marshal(out)
	if err != nil {
		return []string{"does not encode: " + err.Error()}
	}
	var s genai.Schema
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&s); err != nil {
		return []string{fmt.Sprintf("genai.Schema does not take %s: %v", data, err)}
	}
	var problems []string
	var walk func(path string, s *genai.Schema)
	walk = func(path string, s *genai.Schema) {
		if s == nil {
			problems = append(problems, path+": null schema")
			return
		}
		switch s.Type {
		case "", genai.TypeString, genai.TypeNumber, genai.TypeInteger, genai.TypeBoolean, genai.TypeArray, genai.TypeObject:
		default:
			problems = append(problems, fmt.Sprintf("%s: type %q is not one of the SDK's", path, s.Type))
		}
		if s.Type == genai.TypeArray && s.Items == nil {
			problems = append(problems, path+": ARRAY without items")
		}
		if s.Type != "" && s.Type != genai.TypeArray && s.Items != nil {
			problems = append(problems, fmt.Sprintf("%s: %s with items", path, s.Type))
		}
		if len(s.Properties) > 0 && s.Type != genai.TypeObject {
			problems = append(problems, fmt.Sprintf("%s: properties on type %q", path, s.Type))
		}
		if s.Type != "" && s.Type != genai.TypeObject && (len(s.Required) > 0 || s.MinProperties != nil || s.MaxProperties != nil) {
			problems = append(problems, fmt.Sprintf("%s: object keywords on %s", path, s.Type))
		}
		if s.Type != "" && s.Type != genai.TypeString && (s.MinLength != nil || s.MaxLength != nil || s.Pattern != "") {
			problems = append(problems, fmt.Sprintf("%s: string keywords on %s", path, s.Type))
		}
		if s.Type != "" && s.Type != genai.TypeArray && (s.MinItems != nil || s.MaxItems != nil) {
			problems = append(problems, fmt.Sprintf("%s: array keywords on %s", path, s.Type))
		}
		if s.Items != nil {
			walk(path+".items", s.Items)
		}
		for name, p := range s.Properties {
			walk(path+".properties."+name, p)
		}
		for i, b := range s.AnyOf {
			walk(fmt.Sprintf("%s.anyOf[%d]", path, i), b)
		}
	}
	walk("$", &s)
	return problems
}
