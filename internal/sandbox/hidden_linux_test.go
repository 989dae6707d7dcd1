//go:build linux

package sandbox

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestPolicyHidden: the files and folders of Policy.Hidden are seen empty
// by the command under every backend and mode, by their names, through a
// link to them and by a recursive grep; the rest of the root stays readable.
func TestPolicyHidden(t *testing.T) {
	for name, b := range backends(t) {
		if strings.HasSuffix(name, "/session") {
			continue // a session refuses Hidden (TestSessionRefusesHidden)
		}
		for _, mode := range []Mode{ReadOnly, WorkspaceWrite} {
			t.Run(name+"/"+mode.String(), func(t *testing.T) {
				root, tmp := t.TempDir(), t.TempDir()
				require.NoError(t, os.MkdirAll(filepath.Join(root, "secret", "deep"), 0o755))
				require.NoError(t, os.WriteFile(filepath.Join(root, "secret", "deep", "key.txt"), []byte("TOPSECRET-DIR"), 0o644))
				require.NoError(t, os.WriteFile(filepath.Join(root, ".env"), []byte("TOPSECRET-FILE"), 0o644))
				require.NoError(t, os.WriteFile(filepath.Join(root, "open.txt"), []byte("visible"), 0o644))
				require.NoError(t, os.Symlink(".env", filepath.Join(root, "env-link")))
				p := Policy{Mode: mode, Root: root, Tmp: tmp,
					Hidden: []string{filepath.Join(root, "secret"), filepath.Join(root, "env-link"), filepath.Join(root, "missing")}}
				out, err := run(t, b, p, `cat open.txt; echo; cat .env env-link secret/deep/key.txt 2>&1; echo "[$(ls -A secret)]"; grep -r TOPSECRET . 2>&1; echo x > secret/new 2>&1 || echo refused`)
				require.NoError(t, err, out)
				assert.Contains(t, out, "visible")
				assert.NotContains(t, out, "TOPSECRET", "a hidden file's contents reached the command")
				assert.Contains(t, out, "\n[]\n", "a hidden folder's entries were listed")
				assert.Contains(t, out, "refused", "a hidden folder took a write")
				_, err = os.Stat(filepath.Join(root, "secret", "new"))
				assert.True(t, os.IsNotExist(err))
			})
		}
	}
}

func TestSessionRefusesHidden(t *testing.T) {
	b, err := NewLandlock()
	if err != nil {
		t.Skip(err)
	}
	_, err = NewSession(b, Policy{Mode: ReadOnly, Root: t.TempDir(), Tmp: t.TempDir(), Hidden: []string{"/etc"}})
	require.ErrorIs(t, err, ErrBadPolicy)
}
