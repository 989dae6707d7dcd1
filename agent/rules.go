package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path"
	"regexp"
	"strconv"
	"strings"

	"github.com/bmatcuk/doublestar/v4"

	"github.com/llmtoolkit/llmtoolkit"
)

// Rule matches calls by tool name and, optionally, by one argument's
// value. Deny rules refuse the calls they match; allow rules let them run
// without asking the callback; a deny rule always wins over an allow rule.
//
// A rule with Glob or Regexp matches only calls that have Argument. A string
// is matched as it is; a number, a boolean, null or an object by its JSON
// text (the number 0 as "0"); an array element by element (a deny rule
// matches when one element does, an allow rule only when all do).
//
// When the tool declares Argument as a path ([llmtoolkit.Tool.Paths], as
// codetools' tools do), Glob is matched against the path the tool will
// open: relative to its root, cleaned, symbolic links inside the root
// followed; a path the tool would refuse (outside its root) is refused by
// the guard before any rule. A tool argument that names several paths
// (llmtoolkit.PathArguments.Lists: apply_patch's patch) is matched path by
// path, under its own name and under "path", so one rule on "path" covers
// every file a patch touches: a deny rule matches when one path does (a
// move is its old and its new path), an allow rule only when all do.
// Deny rules with a Glob on a path are also
// handed to the tool's walks as exclusions (grep, glob, tree and
// list_directory leave those paths out and say so).
type Rule struct {
	// Tool is the tool's name or a glob of names ("*", "mcp_*"); empty
	// matches every tool.
	Tool string
	// Argument names the argument Glob and Regexp are matched against
	// ("command", "path"). Required with either.
	Argument string
	// Glob is a doublestar pattern ("src/**", "**/*.go") matched against
	// the canonical path of an argument the tool declares as a path, and
	// for other tools against the argument's value cleaned as a
	// slash-separated path (path.Clean, backslashes turned to slashes), so
	// "src/../etc/passwd" is matched as "etc/passwd". "dir/**" matches the
	// folder dir itself too.
	Glob string
	// Regexp is an RE2 expression matched against the argument's raw value
	// (and, for a declared path, its canonical path too).
	// It is not anchored: write ^ and $ to match a whole command, and keep
	// shell separators (; & | newline) out of what an allow rule accepts.
	Regexp string
}

// String describes the rule for messages: tool(argument glob "..." regexp "...").
func (r Rule) String() string {
	name := r.Tool
	if name == "" {
		name = "*"
	}
	if r.Argument == "" {
		return name
	}
	var parts []string
	if r.Glob != "" {
		parts = append(parts, fmt.Sprintf("glob %q", r.Glob))
	}
	if r.Regexp != "" {
		parts = append(parts, fmt.Sprintf("regexp %q", r.Regexp))
	}
	return fmt.Sprintf("%s(%s %s)", name, r.Argument, strings.Join(parts, " "))
}

// rule is a compiled Rule.
type rule struct {
	src         Rule
	re          *regexp.Regexp
	desc        string
	literalName bool // src.Tool has no glob syntax: compared as a string
}

// compileRules checks and compiles rules; kind names the list in errors.
func compileRules(kind string, rules []Rule) ([]rule, error) {
	out := make([]rule, 0, len(rules))
	for i, r := range rules {
		if r.Tool != "" && !doublestar.ValidatePattern(r.Tool) {
			return nil, fmt.Errorf("%w: %s rule %d: invalid tool pattern %q", ErrInvalidConfig, kind, i, r.Tool)
		}
		hasPattern := r.Glob != "" || r.Regexp != ""
		if hasPattern != (r.Argument != "") {
			return nil, fmt.Errorf("%w: %s rule %d (%s): Argument goes with Glob or Regexp, and each needs the other", ErrInvalidConfig, kind, i, r)
		}
		if r.Glob != "" && !doublestar.ValidatePattern(r.Glob) {
			return nil, fmt.Errorf("%w: %s rule %d: invalid glob %q", ErrInvalidConfig, kind, i, r.Glob)
		}
		c := rule{src: r, desc: r.String(), literalName: !strings.ContainsAny(r.Tool, `*?[{\\`)}
		if r.Regexp != "" {
			re, err := regexp.Compile(r.Regexp)
			if err != nil {
				return nil, fmt.Errorf("%w: %s rule %d: %w", ErrInvalidConfig, kind, i, err)
			}
			c.re = re
		}
		out = append(out, c)
	}
	return out, nil
}

// nameMatches reports whether the rule is for tool name.
func (r *rule) nameMatches(name string) bool {
	if r.src.Tool == "" || r.src.Tool == "*" || r.src.Tool == name {
		return true
	}
	if r.literalName {
		return false
	}
	ok, _ := doublestar.Match(r.src.Tool, name)
	return ok
}

// target is what the rules see of one call: its name and arguments, and
// the canonical paths of the arguments its tool declares as paths
// ([llmtoolkit.Tool.Paths]), as the tool will open them.
type target struct {
	call  llmtoolkit.Call
	paths []canonicalPath
}

type canonicalPath struct {
	name, path string
	list       bool // from an argument of PathArguments.Lists
}

// targetOf reads call for the rules. Each string argument tool declares as
// a path is turned into the path the tool opens with the tool's own
// function; a path the tool would refuse is an error, which refuses the
// call.
func targetOf(ctx context.Context, call llmtoolkit.Call, tool llmtoolkit.Tool) (target, error) {
	t := target{call: call}
	if tool.Paths == nil {
		return t, nil
	}
	paths, err := tool.Paths.Resolve(ctx, call.Arguments)
	if err != nil {
		var pe *llmtoolkit.PathArgumentError
		if errors.As(err, &pe) {
			return t, llmtoolkit.Deny(call.Name, fmt.Sprintf("the tool would refuse argument %s: %v", pe.Argument, pe.Err))
		}
		return t, llmtoolkit.Deny(call.Name, fmt.Sprintf("the tool would refuse its paths: %v", err))
	}
	for _, p := range paths {
		t.paths = append(t.paths, canonicalPath{name: p.Argument, path: p.Path, list: p.Listed})
	}
	return t, nil
}

// canonical returns the canonical paths of argument name (several for an
// argument that names several, [llmtoolkit.PathArguments.Lists]), and
// whether the tool declares it as a path.
//
// A rule on the argument "path" also sees the paths of every argument the
// tool declares in Lists (a patch's files): one rule on "path" covers
// the file tools and apply_patch alike.
func (t *target) canonical(name string) ([]string, bool) {
	var out []string
	found := false
	for _, p := range t.paths {
		if p.name == name || name == pathArgument && p.list {
			out = append(out, p.path)
			found = true
		}
	}
	return out, found
}

// pathArgument is the argument name under which rules also see the paths
// of list arguments.
const pathArgument = "path"

// matches reports whether the rule matches the call t; deny says which
// list the rule is in. An argument that is not a string is matched by its
// JSON text (0, true, null, an object), an array element by element: a
// deny rule matches when one element does, an allow rule only when every
// element does (and there is one). A path argument the tool declares is
// matched by Glob on its canonical path only, by Regexp on both its
// canonical path and its raw value (a deny rule matches either, an allow
// rule needs both).
func (r *rule) matches(t *target, deny bool) bool {
	call := t.call
	if !r.nameMatches(call.Name) {
		return false
	}
	if r.src.Argument == "" {
		return true
	}
	v, ok := call.Arguments[r.src.Argument]
	canon, isPath := t.canonical(r.src.Argument)
	if !ok && !isPath {
		return false
	}
	if r.src.Glob != "" {
		glob := func(s string) bool {
			ok, _ := doublestar.Match(r.src.Glob, path.Clean(strings.ReplaceAll(s, `\`, "/")))
			return ok
		}
		if isPath {
			if !quantifyPaths(canon, deny, func(p string) bool { ok, _ := doublestar.Match(r.src.Glob, p); return ok }) {
				return false
			}
		} else if !quantify(v, deny, glob) {
			return false
		}
	}
	if r.re == nil {
		return true
	}
	if !ok { // the paths of a list argument, seen under "path"
		return quantifyPaths(canon, deny, r.re.MatchString)
	}
	ok = quantify(v, deny, r.re.MatchString)
	if isPath {
		if deny {
			ok = ok || quantifyPaths(canon, true, r.re.MatchString)
		} else {
			ok = ok && quantifyPaths(canon, false, r.re.MatchString)
		}
	}
	return ok
}

// quantifyPaths applies match to the canonical paths of one argument: a
// deny rule matches when one path does, an allow rule only when every path
// does (and there is one), so a patch that touches a denied file is
// denied, and an allowed one runs without asking only when every file it
// touches is allowed.
func quantifyPaths(paths []string, deny bool, match func(string) bool) bool {
	if len(paths) == 0 {
		return false
	}
	for _, p := range paths {
		if match(p) == deny {
			return deny
		}
	}
	return !deny
}

// quantify applies match to the text of v: a string as it is, an array
// element by element (any element for a deny rule, every element of a
// non-empty array for an allow rule), anything else by its JSON text.
func quantify(v any, deny bool, match func(string) bool) bool {
	switch x := v.(type) {
	case string:
		return match(x)
	case bool:
		return match(strconv.FormatBool(x))
	case []any:
		if len(x) == 0 {
			return false
		}
		for _, e := range x {
			if quantify(e, deny, match) == deny {
				return deny
			}
		}
		return !deny
	}
	data, err := json.Marshal(v)
	if err != nil {
		return deny // a value without a JSON text: a deny rule holds, an allow rule does not
	}
	return match(string(data))
}

// firstMatch returns the first rule of rules that matches t, or nil; deny
// says which list rules is.
func firstMatch(rules []rule, t *target, deny bool) *rule {
	for i := range rules {
		if rules[i].matches(t, deny) {
			return &rules[i]
		}
	}
	return nil
}

// excludedPaths returns the globs of the deny rules that cover the paths of
// tool, for the tool's walks to leave out (llmtoolkit.Scope.ExcludedPaths):
// the rules for name, with a Glob on an argument tool declares as a path.
func excludedPaths(rules []rule, name string, tool llmtoolkit.Tool) []string {
	if tool.Paths == nil {
		return nil
	}
	var globs []string
	for i := range rules {
		r := &rules[i]
		if r.src.Glob == "" || !tool.Paths.Declares(r.src.Argument) {
			continue
		}
		if r.nameMatches(name) {
			globs = append(globs, r.src.Glob)
		}
	}
	return globs
}
