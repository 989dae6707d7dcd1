package codetools

import (
	"path"
	"strings"
)

// ModelFamily is a family of models that were trained on their provider's
// own editing tools; [FamilyOf] tells it from a model's name.
type ModelFamily string

// The families [WithModelTools] knows.
const (
	// FamilyClaude: Anthropic's Claude models, trained on the text editor
	// (text_editor_20250728), bash (bash_20250124) and the memory tool.
	FamilyClaude ModelFamily = "claude"
	// FamilyGPT5: OpenAI's GPT-5 and Codex models, trained on V4A patches
	// (apply_patch) and the shell tool.
	FamilyGPT5 ModelFamily = "gpt-5"
	// FamilyOther: every other model; it gets the function tools alone.
	FamilyOther ModelFamily = ""
)

// FamilyOf tells the family of a model from its name, as a host or a
// provider spells it: "claude-sonnet-4-5", "anthropic/claude-opus-4-1",
// "us.anthropic.claude-3-7-sonnet-20250219-v1:0", "gpt-5", "gpt-5.1-codex",
// "openai/gpt-5-mini", "codex-mini-latest". Case is ignored; a name it does
// not know is FamilyOther.
func FamilyOf(model string) ModelFamily {
	m := strings.ToLower(path.Base(strings.TrimSpace(model)))
	switch {
	case strings.Contains(m, "claude"):
		return FamilyClaude
	case strings.HasPrefix(m, "gpt-5"), strings.Contains(m, "codex"):
		return FamilyGPT5
	default:
		return FamilyOther
	}
}

// WithModelTools adds the tools model was trained on to the function tools,
// the one way to get the best set for a model:
//
//   - Claude ([FamilyClaude]): the text editor, str_replace_based_edit_tool
//     ([WithTextEditor], view capped at read_file's byte limit), bash as
//     Anthropic's bash_20250124, a persistent session ([WithBashSession]),
//     and, when memoryFolder is not empty, the memory tool ([WithMemory])
//     over it;
//   - GPT-5 and Codex ([FamilyGPT5]): apply_patch ([WithApplyPatch]) and
//     shell ([WithShell]), marked [NativeApplyPatch] and [NativeShell] so
//     that package provider declares them to the Responses API as its own
//     {"type": "apply_patch"} and {"type": "shell"} (and as function tools
//     to the other formats);
//   - any other model: nothing; the 12 function tools serve it.
//
// The function tools stay in every set, the fallback a model may still
// call. Each tool keeps its one name whatever shape package provider
// writes it in (Anthropic's built-in declaration, or a function tool), so
// the audit trail, permissions, hooks and Display name the same tool
// whichever the model saw. The engines are the same as the function tools'
// (confinement, exact-unique edits, atomic writes).
func WithModelTools(model, memoryFolder string) Option {
	fam := FamilyOf(model)
	return func(c *config) {
		switch fam {
		case FamilyClaude:
			WithTextEditor(0)(c)
			WithBashSession()(c)
			if memoryFolder != "" {
				WithMemory(memoryFolder)(c)
			}
		case FamilyGPT5:
			WithApplyPatch()(c)
			WithShell()(c)
			c.nativeOpenAI = true
		}
	}
}
