package skills

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"unicode/utf8"

	"go.yaml.in/yaml/v3"
)

// The specification's bounds (agentskills.io/specification).
const (
	// MaxNameLength bounds a skill's name, in characters.
	MaxNameLength = 64
	// MaxDescriptionLength bounds a skill's description, in characters.
	MaxDescriptionLength = 1024
	// MaxCompatibilityLength bounds a skill's compatibility, in characters.
	MaxCompatibilityLength = 500
)

// Bounds of this package on what a SKILL.md may hold, beyond the
// specification's: checked before the YAML parser sees a byte.
const (
	// DefaultMaxSkillBytes bounds a SKILL.md file (frontmatter and
	// instructions); [WithMaxSkillBytes] changes it.
	DefaultMaxSkillBytes = 256 << 10
	// MaxFrontmatterBytes bounds the YAML frontmatter. The specification's
	// fields fit in a few KiB; the cap keeps a hostile document small
	// before the parser runs.
	MaxFrontmatterBytes = 32 << 10
	// maxYAMLNodes bounds the nodes of a parsed frontmatter.
	maxYAMLNodes = 4096
	// maxYAMLDepth bounds the nesting of a parsed frontmatter: the
	// specification's deepest field is metadata's values (depth 3); one
	// more level lets a value given as a mapping be named as the fault.
	maxYAMLDepth = 4
)

// ErrInvalid is wrapped by every error that refuses a skill: a SKILL.md
// that breaks the specification or this package's bounds.
var ErrInvalid = errors.New("invalid skill")

// Fields the specification defines, in its order.
var specFields = []string{"name", "description", "license", "compatibility", "metadata", "allowed-tools"}

// ValidationError is one violation of the specification (or of this
// package's bounds) in one SKILL.md. It wraps [ErrInvalid].
type ValidationError struct {
	// File names the SKILL.md, as its source shows it.
	File string
	// Field is the frontmatter field at fault ("name", "metadata.version"),
	// or "" when the fault is the file's (its size, its frontmatter).
	Field string
	// Reason says what is wrong and what is allowed.
	Reason string
}

// Error returns "FILE: field FIELD: REASON" (or "FILE: REASON").
func (e *ValidationError) Error() string {
	if e.Field == "" {
		return e.File + ": " + e.Reason
	}
	return fmt.Sprintf("%s: field %q: %s", e.File, e.Field, e.Reason)
}

// Unwrap returns [ErrInvalid].
func (e *ValidationError) Unwrap() error { return ErrInvalid }

// checker collects the violations of one file.
type checker struct {
	file string
	errs []error
}

func (c *checker) fail(field, format string, args ...any) {
	c.errs = append(c.errs, &ValidationError{File: c.file, Field: field, Reason: fmt.Sprintf(format, args...)})
}

func (c *checker) err() error { return errors.Join(c.errs...) }

// Parse reads one SKILL.md: data is the file, folder the name of the
// folder holding it (the specification wants it equal to the name; ""
// skips that rule), file how errors name it. It returns the skill's
// fields and instructions (the Markdown after the frontmatter, trimmed),
// or every violation found, joined, each a [*ValidationError]. The file is
// refused whole, before it is parsed, when it is larger than
// [DefaultMaxSkillBytes], is not UTF-8 text, or has a frontmatter larger
// than [MaxFrontmatterBytes]; YAML anchors and aliases are refused (a
// skill's fields have no use for them, and they are how YAML bombs
// multiply).
func Parse(data []byte, folder, file string) (Skill, error) {
	return parse(data, folder, file, DefaultMaxSkillBytes)
}

func parse(data []byte, folder, file string, maxBytes int) (Skill, error) {
	c := &checker{file: file}
	if len(data) > maxBytes {
		c.fail("", "the file has %d bytes, more than the %d allowed", len(data), maxBytes)
		return Skill{}, c.err()
	}
	if i := bytes.IndexByte(data, 0); i >= 0 {
		c.fail("", "the file is binary (a NUL byte at offset %d), not Markdown", i)
		return Skill{}, c.err()
	}
	if !utf8.Valid(data) {
		c.fail("", "the file is not valid UTF-8 text")
		return Skill{}, c.err()
	}
	front, body, ok := splitFrontmatter(data)
	if !ok {
		c.fail("", "the file must start with YAML frontmatter between two lines of \"---\"")
		return Skill{}, c.err()
	}
	if len(front) > MaxFrontmatterBytes {
		c.fail("", "the frontmatter has %d bytes, more than the %d allowed", len(front), MaxFrontmatterBytes)
		return Skill{}, c.err()
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(front, &doc); err != nil {
		hint := ""
		if strings.Contains(err.Error(), "mapping values are not allowed") {
			hint = ` (a value holding ": " must be quoted)`
		}
		c.fail("", "the frontmatter is not valid YAML: %v%s", err, hint)
		return Skill{}, c.err()
	}
	if err := checkNodes(&doc); err != "" {
		c.fail("", "the frontmatter is refused: %s", err)
		return Skill{}, c.err()
	}
	s := Skill{Instructions: string(bytes.TrimSpace(body))}
	var top *yaml.Node
	if doc.Kind == yaml.DocumentNode && len(doc.Content) == 1 {
		top = doc.Content[0]
	}
	if top == nil || (top.Kind == yaml.ScalarNode && top.Tag == "!!null") {
		c.fail("name", "is required")
		c.fail("description", "is required")
		return Skill{}, c.err()
	}
	if top.Kind != yaml.MappingNode {
		c.fail("", "the frontmatter must be a YAML mapping of fields, not a %s", kindName(top))
		return Skill{}, c.err()
	}
	seen := map[string]bool{}
	toolsText := false // allowed-tools was given as text
	for i := 0; i+1 < len(top.Content); i += 2 {
		k, v := top.Content[i], top.Content[i+1]
		if k.Kind != yaml.ScalarNode {
			c.fail("", "a field's name must be text, not a %s (line %d)", kindName(k), k.Line)
			continue
		}
		key := k.Value
		if seen[key] {
			c.fail(key, "is given twice (line %d)", k.Line)
			continue
		}
		seen[key] = true
		switch key {
		case "name":
			s.Name, _ = c.text(key, v)
		case "description":
			s.Description, _ = c.text(key, v)
		case "license":
			s.License, _ = c.text(key, v)
		case "compatibility":
			s.Compatibility, _ = c.text(key, v)
		case "metadata":
			s.Metadata = c.metadata(v)
		case "allowed-tools":
			var t string
			if t, toolsText = c.text(key, v); toolsText {
				s.AllowedTools = toolEntries(t)
			}
		default:
			c.fail(key, "is not a field of the specification (allowed: %s); put extra properties under metadata", strings.Join(specFields, ", "))
		}
	}
	c.checkName(s.Name, seen["name"], folder)
	c.checkDescription(s.Description, seen["description"])
	if seen["compatibility"] {
		c.checkLength("compatibility", s.Compatibility, MaxCompatibilityLength, true)
	}
	if seen["license"] && strings.TrimSpace(s.License) == "" {
		c.fail("license", "is empty; name a license or a bundled license file, or leave the field out")
	}
	if toolsText && len(s.AllowedTools) == 0 {
		c.fail("allowed-tools", "is empty; list tools separated by spaces, or leave the field out")
	}
	if err := c.err(); err != nil {
		return Skill{}, err
	}
	s.frontmatter = jsonValue(top).(map[string]any)
	return s, nil
}

// jsonValue turns a checked YAML node (no alias, no anchor, bounded) into
// the value a YAML 1.2 core-schema reader gives: mappings, lists, null,
// booleans, numbers, and text for every other scalar (a timestamp stays
// as written). A number JSON cannot hold (.inf, .nan, one out of range)
// stays as written too.
func jsonValue(n *yaml.Node) any {
	switch n.Kind {
	case yaml.MappingNode:
		m := make(map[string]any, len(n.Content)/2)
		for i := 0; i+1 < len(n.Content); i += 2 {
			m[n.Content[i].Value] = jsonValue(n.Content[i+1])
		}
		return m
	case yaml.SequenceNode:
		out := make([]any, 0, len(n.Content))
		for _, c := range n.Content {
			out = append(out, jsonValue(c))
		}
		return out
	}
	switch n.Tag {
	case "!!null":
		return nil
	case "!!bool":
		var b bool
		if n.Decode(&b) == nil {
			return b
		}
	case "!!int":
		var i int64
		if n.Decode(&i) == nil {
			return i
		}
	case "!!float":
		var f float64
		if n.Decode(&f) == nil && !math.IsInf(f, 0) && !math.IsNaN(f) {
			return f
		}
	}
	return n.Value
}

// splitFrontmatter splits data into the YAML between a first line "---"
// and the next line "---" (trailing spaces and CRLF allowed, a UTF-8 BOM
// skipped), and the rest.
func splitFrontmatter(data []byte) (front, body []byte, ok bool) {
	data = bytes.TrimPrefix(data, []byte("\xef\xbb\xbf"))
	line, rest, found := bytes.Cut(data, []byte("\n"))
	if !found || !isFence(line) {
		return nil, nil, false
	}
	start := len(data) - len(rest)
	for off := start; off < len(data); {
		end := bytes.IndexByte(data[off:], '\n')
		next := len(data)
		if end >= 0 {
			next = off + end + 1
		}
		if isFence(bytes.TrimSuffix(data[off:next], []byte("\n"))) {
			return data[start:off], data[next:], true
		}
		off = next
	}
	return nil, nil, false
}

func isFence(line []byte) bool {
	return string(bytes.TrimRight(line, " \t\r")) == "---"
}

// checkNodes refuses anchors, aliases, tags other than the core schema's,
// documents nested deeper than the fields need, and more nodes than
// [maxYAMLNodes]: what a YAML bomb needs. It returns "" or the reason.
func checkNodes(doc *yaml.Node) string {
	count := 0
	var walk func(n *yaml.Node, depth int) string
	walk = func(n *yaml.Node, depth int) string {
		count++
		switch {
		case count > maxYAMLNodes:
			return fmt.Sprintf("more than %d YAML nodes", maxYAMLNodes)
		case n.Kind == yaml.AliasNode:
			return fmt.Sprintf("a YAML alias (*%s, line %d): aliases are not allowed in a skill's frontmatter", n.Value, n.Line)
		case n.Anchor != "":
			return fmt.Sprintf("a YAML anchor (&%s, line %d): anchors are not allowed in a skill's frontmatter", n.Anchor, n.Line)
		case depth > maxYAMLDepth:
			return fmt.Sprintf("YAML nested more than %d levels deep (line %d)", maxYAMLDepth, n.Line)
		case n.Tag != "" && !slices.Contains([]string{"!!str", "!!int", "!!float", "!!bool", "!!null", "!!map", "!!seq", "!!timestamp"}, n.Tag):
			return fmt.Sprintf("the YAML tag %s (line %d) is not allowed", n.Tag, n.Line)
		}
		for _, ch := range n.Content {
			if r := walk(ch, depth+1); r != "" {
				return r
			}
		}
		return ""
	}
	// The document node is depth 0, the fields' mapping depth 1.
	return walk(doc, 0)
}

// text reads a field's value as text: a YAML scalar other than null (a
// number or a boolean is taken as it was written).
func (c *checker) text(field string, v *yaml.Node) (string, bool) {
	switch {
	case v.Kind != yaml.ScalarNode:
		c.fail(field, "must be text, not a %s (line %d)", kindName(v), v.Line)
		return "", false
	case v.Tag == "!!null":
		return "", true
	}
	return v.Value, true
}

// metadata reads the metadata field: a mapping of text keys to text values.
func (c *checker) metadata(v *yaml.Node) map[string]string {
	if v.Kind == yaml.ScalarNode && v.Tag == "!!null" {
		return nil
	}
	if v.Kind != yaml.MappingNode {
		c.fail("metadata", "must be a mapping of text keys to text values, not a %s (line %d)", kindName(v), v.Line)
		return nil
	}
	m := make(map[string]string, len(v.Content)/2)
	for i := 0; i+1 < len(v.Content); i += 2 {
		k, val := v.Content[i], v.Content[i+1]
		if k.Kind != yaml.ScalarNode || k.Tag == "!!null" {
			c.fail("metadata", "a key must be text, not a %s (line %d)", kindName(k), k.Line)
			continue
		}
		field := "metadata." + k.Value
		if _, dup := m[k.Value]; dup {
			c.fail(field, "is given twice (line %d)", k.Line)
			continue
		}
		if val.Kind != yaml.ScalarNode {
			c.fail(field, "must be text, not a %s (line %d); the specification's metadata maps text to text", kindName(val), val.Line)
			continue
		}
		if val.Tag == "!!null" {
			m[k.Value] = ""
			continue
		}
		m[k.Value] = val.Value
	}
	return m
}

// toolEntries splits allowed-tools at spaces, but not inside an entry's
// parentheses ("Bash(git status) Read" is two entries).
func toolEntries(text string) []string {
	var out []string
	for _, f := range strings.Fields(text) {
		if n := len(out); n > 0 && strings.Count(out[n-1], "(") > strings.Count(out[n-1], ")") {
			out[n-1] += " " + f
			continue
		}
		out = append(out, f)
	}
	return out
}

// nameRule says what is wrong with name, or "".
func nameRule(name string) string {
	switch {
	case name == "":
		return "is empty"
	case utf8.RuneCountInString(name) > MaxNameLength:
		return fmt.Sprintf("has %d characters, more than %d", utf8.RuneCountInString(name), MaxNameLength)
	case strings.HasPrefix(name, "-") || strings.HasSuffix(name, "-"):
		return fmt.Sprintf("%q starts or ends with a hyphen", name)
	case strings.Contains(name, "--"):
		return fmt.Sprintf("%q holds two hyphens in a row", name)
	}
	for _, r := range name {
		if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-') {
			return fmt.Sprintf("%q holds %q: only lowercase letters a-z, digits and hyphens are allowed", name, r)
		}
	}
	return ""
}

// ValidName reports whether name follows the specification's rule for a
// skill's name: 1 to 64 characters of a-z, 0-9 and hyphens, neither first
// nor last, never two in a row.
func ValidName(name string) bool { return nameRule(name) == "" }

func (c *checker) checkName(name string, given bool, folder string) {
	if !given {
		c.fail("name", "is required")
		return
	}
	if r := nameRule(name); r != "" {
		c.fail("name", "%s", r)
		return
	}
	if folder != "" && folder != name {
		c.fail("name", "%q differs from its folder's name %q; the specification wants them equal", name, folder)
	}
}

func (c *checker) checkDescription(d string, given bool) {
	if !given {
		c.fail("description", "is required")
		return
	}
	c.checkLength("description", d, MaxDescriptionLength, true)
}

func (c *checker) checkLength(field, v string, max int, nonEmpty bool) {
	n := utf8.RuneCountInString(v)
	switch {
	case nonEmpty && strings.TrimSpace(v) == "":
		c.fail(field, "is empty")
	case n > max:
		c.fail(field, "has %d characters, more than %d", n, max)
	}
}

func kindName(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "mapping"
	case yaml.SequenceNode:
		return "list"
	case yaml.AliasNode:
		return "alias"
	case yaml.DocumentNode:
		return "document"
	}
	if n.Tag == "!!null" {
		return "null"
	}
	return "scalar"
}
