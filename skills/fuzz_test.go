package skills_test

import (
	"errors"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/require"

	"github.com/llmtoolkit/llmtoolkit/skills"
)

// FuzzParse: Parse never panics; what it refuses is a list of
// ValidationErrors naming the file; what it accepts follows every rule.
func FuzzParse(f *testing.F) {
	f.Add([]byte(skillText("a", "d")), "a")
	f.Add([]byte(billionLaughs), "bomb")
	f.Add([]byte("---\nname: x\ndescription: y\nmetadata: {a: [b]}\n---\nbody"), "x")
	f.Add([]byte("---\r\nname: x\r\ndescription: |\n  y\n---"), "x")
	f.Fuzz(func(t *testing.T, data []byte, folder string) {
		sk, err := skills.Parse(data, folder, "f/SKILL.md")
		if err != nil {
			require.ErrorIs(t, err, skills.ErrInvalid)
			var ve *skills.ValidationError
			require.True(t, errors.As(err, &ve))
			require.True(t, strings.HasPrefix(err.Error(), "f/SKILL.md: "), err.Error())
			return
		}
		require.True(t, skills.ValidName(sk.Name), sk.Name)
		if folder != "" {
			require.Equal(t, folder, sk.Name)
		}
		require.NotEmpty(t, strings.TrimSpace(sk.Description))
		require.LessOrEqual(t, utf8.RuneCountInString(sk.Description), skills.MaxDescriptionLength)
		require.LessOrEqual(t, utf8.RuneCountInString(sk.Compatibility), skills.MaxCompatibilityLength)
		require.True(t, utf8.ValidString(sk.Instructions))
	})
}
