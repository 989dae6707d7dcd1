package agent

import (
	"fmt"
	"path"
	"regexp"
	"strings"

	"github.com/bmatcuk/doublestar/v4"

	"github.com/llmtoolkit/llmtoolkit"
)

// Rule matches calls by tool name and, optionally, by one argument's
// value. Deny rules refuse the calls they match; allow rules let them run
// without asking the callback; a deny rule always wins over an allow rule.
//
// A rule with Glob or Regexp matches only calls whose Argument is a string
// that matches: a call without the argument, or with another type, does not
// match (it would fail the tool's schema anyway).
type Rule struct {
	// Tool is the tool's name or a glob of names ("*", "mcp_*"); empty
	// matches every tool.
	Tool string
	// Argument names the argument Glob and Regexp are matched against
	// ("command", "path"). Required with either.
	Argument string
	// Glob is a doublestar pattern ("src/**", "**/*.go") matched against
	// the argument's value cleaned as a slash-separated path (path.Clean,
	// backslashes turned to slashes), so "src/../etc/passwd" is matched as
	// "etc/passwd".
	Glob string
	// Regexp is an RE2 expression matched against the argument's raw value.
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

// matches reports whether the rule matches call.
func (r *rule) matches(call llmtoolkit.Call) bool {
	if r.src.Tool != "" && r.src.Tool != "*" && r.src.Tool != call.Name {
		if r.literalName {
			return false
		}
		if ok, _ := doublestar.Match(r.src.Tool, call.Name); !ok {
			return false
		}
	}
	if r.src.Argument == "" {
		return true
	}
	v, ok := call.Arguments[r.src.Argument].(string)
	if !ok {
		return false
	}
	if r.src.Glob != "" {
		p := path.Clean(strings.ReplaceAll(v, `\`, "/"))
		if ok, _ := doublestar.Match(r.src.Glob, p); !ok {
			return false
		}
	}
	return r.re == nil || r.re.MatchString(v)
}

// firstMatch returns the first rule of rules that matches call, or nil.
func firstMatch(rules []rule, call llmtoolkit.Call) *rule {
	for i := range rules {
		if rules[i].matches(call) {
			return &rules[i]
		}
	}
	return nil
}
