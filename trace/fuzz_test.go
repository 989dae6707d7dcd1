package trace

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/llmtoolkit/llmtoolkit"
	"github.com/llmtoolkit/llmtoolkit/internal/redact"
)

// FuzzRedact checks that no value of a sensitive field survives in the
// stored arguments, whatever the shape of the arguments, and that the
// caller's arguments are untouched.
func FuzzRedact(f *testing.F) {
	f.Add(`{"password":"x"}`, "password")
	f.Add(`{"a":[{"Token":{"deep":"t"}},["x",{"token":1}]]}`, "TOKEN")
	f.Add(`{"k":{"k":{"k":"v"}}}`, "k")
	f.Add(`{"":"empty"}`, "")
	f.Add(`{"pin":918273,"note":"pin is 918273"}`, "pin")
	f.Fuzz(func(t *testing.T, doc, field string) {
		var args map[string]any
		if json.Unmarshal([]byte(doc), &args) != nil || strings.Contains(field, ".") {
			return
		}
		rec := Record(nil, nil, WithRedactFields(field))
		before, _ := json.Marshal(args)
		stored, secrets := rec.arguments(llmtoolkit.Call{Name: "t", Arguments: args}, llmtoolkit.Tool{})
		after, _ := json.Marshal(args)
		if string(before) != string(after) {
			t.Fatalf("redaction changed the caller's arguments")
		}
		var check func(v any)
		leaks := func(text string) {
			for _, s := range secrets {
				if len(s) >= redact.MinSecretLen && !strings.ContainsAny(s, "[]") && strings.Contains(text, s) {
					t.Fatalf("secret %q survives in %q", s, text)
				}
			}
		}
		check = func(v any) {
			switch x := v.(type) {
			case string:
				leaks(x)
			case map[string]any:
				for k, e := range x {
					leaks(k)
					if field != "" && strings.EqualFold(k, strings.TrimSpace(field)) && e != Redacted {
						t.Fatalf("field %q kept its value %v", k, e)
					}
					check(e)
				}
			case JSON:
				check(map[string]any(x))
			case []any:
				for _, e := range x {
					check(e)
				}
			}
		}
		check(stored)
	})
}

// FuzzCut checks that a cut result is a prefix of at most max bytes that
// never splits a character.
func FuzzCut(f *testing.F) {
	f.Add("héllo wörld", 3)
	f.Add("🦫🦫", 5)
	f.Add("", 0)
	f.Fuzz(func(t *testing.T, s string, max int) {
		if max < 0 {
			max = -max
		}
		got, cutOff := cut(s, max)
		if !strings.HasPrefix(s, got) || len(got) > max && cutOff {
			t.Fatalf("cut(%q, %d) = %q", s, max, got)
		}
		if cutOff != (len(s) > max) {
			t.Fatalf("cut(%q, %d) reported cut=%v", s, max, cutOff)
		}
		if utf8.ValidString(s) && !utf8.ValidString(got) {
			t.Fatalf("cut(%q, %d) = %q splits a character", s, max, got)
		}
	})
}
