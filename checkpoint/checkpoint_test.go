//go:build linux

package checkpoint_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gorm.io/driver/postgres"
	"gorm.io/gorm"
	"gorm.io/gorm/logger"

	"github.com/llmtoolkit/llmtoolkit"
	"github.com/llmtoolkit/llmtoolkit/checkpoint"
	"github.com/llmtoolkit/llmtoolkit/internal/testkit"
)

const postgresDSNVar = "LLMTOOLKIT_TEST_POSTGRES_DSN"

// forEachDB runs fn on a fresh SQLite file and, with
// LLMTOOLKIT_TEST_POSTGRES_DSN set, a fresh PostgreSQL schema.
func forEachDB(t *testing.T, fn func(t *testing.T, db *gorm.DB)) {
	t.Run("sqlite", func(t *testing.T) { fn(t, openSQLite(t)) })
	t.Run("postgres", func(t *testing.T) { fn(t, openPostgres(t)) })
}

func openSQLite(tb testing.TB) *gorm.DB {
	db, err := checkpoint.OpenSQLite(filepath.Join(tb.TempDir(), "checkpoints.db"))
	require.NoError(tb, err)
	tb.Cleanup(func() {
		if s, err := db.DB(); err == nil {
			_ = s.Close()
		}
	})
	return db
}

func openPostgres(tb testing.TB) *gorm.DB {
	dsn := os.Getenv(postgresDSNVar)
	if dsn == "" {
		if os.Getenv("CI") == "true" {
			tb.Fatal(postgresDSNVar + " is not set in CI")
		}
		tb.Skip(postgresDSNVar + ` is not set: skipping the PostgreSQL tests (start one with: eval "$(bash scripts/postgres.sh)")`)
	}
	cfg := &gorm.Config{Logger: logger.Discard}
	admin, err := gorm.Open(postgres.Open(dsn), cfg)
	require.NoError(tb, err)
	schema := "checkpoint_test_" + strings.ReplaceAll(uuid.NewString(), "-", "")
	require.NoError(tb, admin.Exec("CREATE SCHEMA "+schema).Error)
	db, err := gorm.Open(postgres.Open(dsn+" search_path="+schema), cfg)
	require.NoError(tb, err)
	tb.Cleanup(func() {
		if s, err := db.DB(); err == nil {
			_ = s.Close()
		}
		_ = admin.Exec("DROP SCHEMA " + schema + " CASCADE").Error
		if s, err := admin.DB(); err == nil {
			_ = s.Close()
		}
	})
	require.NoError(tb, checkpoint.Migrate(db))
	return db
}

// treeDigest is the independent walker (filepath.WalkDir, see
// testkit.TreeLines) the rewound trees are compared with.
func treeDigest(t testing.TB, root string) string { return testkit.TreeDigest(t, root) }

func writeFiles(t testing.TB, root string, files map[string]string) {
	testkit.WriteFiles(t, root, files)
}

func TestSaveListDiffRewind(t *testing.T) {
	forEachDB(t, func(t *testing.T, db *gorm.DB) {
		ctx := context.Background()
		root := t.TempDir()
		writeFiles(t, root, map[string]string{"a.txt": "one", "src/main.go": "package main\n"})
		store, err := checkpoint.NewStore(db)
		require.NoError(t, err)
		c, err := checkpoint.New(store, root)
		require.NoError(t, err)
		tenant, conv := uuid.NewString(), uuid.NewString()
		actx := llmtoolkit.WithScope(llmtoolkit.WithScope(ctx, func(sc *llmtoolkit.Scope) { sc.Session = map[string]any{"tenant_id": tenant, "conversation_id": conv} }), func(sc *llmtoolkit.Scope) { sc.StartTurn(3) })
		actx = llmtoolkit.WithScope(actx, func(sc *llmtoolkit.Scope) { sc.AgentID = "sub-1" })
		first, err := c.Save(actx, checkpoint.KindTurn, "turn-3")
		require.NoError(t, err)
		assert.Equal(t, tenant, first.TenantID)
		assert.Equal(t, conv, first.ConversationID)
		assert.Equal(t, 3, first.Iteration)
		assert.Equal(t, "sub-1", first.AgentID)
		want := treeDigest(t, root)

		again, err := c.Save(actx, checkpoint.KindTurn, "turn-3")
		require.NoError(t, err)
		assert.Equal(t, first.ID, again.ID, "one checkpoint per key")

		writeFiles(t, root, map[string]string{"a.txt": "two", "new/file": "x"})
		require.NoError(t, os.Remove(filepath.Join(root, "src/main.go")))
		second, err := c.Save(actx, checkpoint.KindTurn, "")
		require.NoError(t, err)
		end := treeDigest(t, root)

		changes, truncated, err := c.Diff(ctx, first.ID, second.ID)
		require.NoError(t, err)
		assert.False(t, truncated)
		var got []string
		for _, ch := range changes {
			got = append(got, ch.Op+" "+ch.Path)
		}
		assert.Equal(t, []string{"modified a.txt", "added new", "added new/file", "removed src/main.go"}, got)

		list, err := c.List(ctx, checkpoint.Filter{ConversationID: conv})
		require.NoError(t, err)
		require.Len(t, list, 2)
		assert.Equal(t, second.ID, list[0].ID, "newest first")

		dry, err := c.Rewind(ctx, first.ID, checkpoint.RewindOptions{DryRun: true})
		require.NoError(t, err)
		assert.Len(t, dry.Changes, 4)
		assert.Equal(t, end, treeDigest(t, root))

		r, err := c.Rewind(ctx, first.ID, checkpoint.RewindOptions{})
		require.NoError(t, err)
		assert.True(t, r.Exact)
		assert.Equal(t, want, treeDigest(t, root))
		assert.Equal(t, second.Tree, r.Before.Tree)

		undo, err := c.Rewind(ctx, r.Before.ID, checkpoint.RewindOptions{})
		require.NoError(t, err)
		assert.True(t, undo.Exact)
		assert.Equal(t, end, treeDigest(t, root), "a rewind is undone by rewinding to its before-rewind checkpoint")

		_, err = c.Rewind(ctx, uuid.NewString(), checkpoint.RewindOptions{})
		require.ErrorIs(t, err, checkpoint.ErrNotFound)
	})
}

func TestRewindHonoursDenyRules(t *testing.T) {
	ctx := context.Background()
	root := t.TempDir()
	writeFiles(t, root, map[string]string{"ok": "1", ".env": "SECRET=1"})
	store, err := checkpoint.NewStore(openSQLite(t))
	require.NoError(t, err)
	c, err := checkpoint.New(store, root, checkpoint.WithAllow(func(_ context.Context, p string) error {
		if p == ".env" {
			return fmt.Errorf("denied by the rule Write(.env)")
		}
		return nil
	}))
	require.NoError(t, err)
	cp, err := c.Save(ctx, checkpoint.KindManual, "")
	require.NoError(t, err)
	writeFiles(t, root, map[string]string{"ok": "2", ".env": "SECRET=2"})
	before := treeDigest(t, root)
	_, err = c.Rewind(ctx, cp.ID, checkpoint.RewindOptions{})
	require.ErrorIs(t, err, checkpoint.ErrDenied)
	assert.Contains(t, err.Error(), "Write(.env)")
	assert.Equal(t, before, treeDigest(t, root), "nothing written")
}

func TestBoundsAndCollect(t *testing.T) {
	forEachDB(t, func(t *testing.T, db *gorm.DB) {
		ctx := context.Background()
		root := t.TempDir()
		store, err := checkpoint.NewStore(db, checkpoint.WithMaxPerConversation(3), checkpoint.WithCollectGrace(0))
		require.NoError(t, err)
		c, err := checkpoint.New(store, root)
		require.NoError(t, err)
		var ids []string
		for i := range 6 {
			writeFiles(t, root, map[string]string{"f": strings.Repeat(fmt.Sprint(i), 1000+i)})
			cp, err := c.Save(ctx, checkpoint.KindTurn, "")
			require.NoError(t, err)
			ids = append(ids, cp.ID)
		}
		list, err := c.List(ctx, checkpoint.Filter{})
		require.NoError(t, err)
		require.Len(t, list, 3)
		assert.Equal(t, ids[5], list[0].ID)
		_, err = c.Get(ctx, ids[0])
		require.ErrorIs(t, err, checkpoint.ErrNotFound)
		got, err := store.Collect(ctx)
		require.NoError(t, err)
		assert.Equal(t, 6, got.Blobs, "three old files and their three listings")
		got, err = store.Collect(ctx)
		require.NoError(t, err)
		assert.Zero(t, got.Blobs)
		r, err := c.Rewind(ctx, ids[3], checkpoint.RewindOptions{})
		require.NoError(t, err)
		assert.True(t, r.Exact, "what is left still rewinds")
	})
}

// TestKilledMidSave kills a child process while it saves checkpoints of a
// tree being changed, many times over; the store stays readable, every
// checkpoint it lists rewinds exactly, and a collection removes what the
// killed saves left behind.
func TestKilledMidSave(t *testing.T) {
	if os.Getenv("CHECKPOINT_CHILD") == "1" {
		child()
		return
	}
	forEachDB(t, func(t *testing.T, db *gorm.DB) {
		ctx := context.Background()
		root := t.TempDir()
		dbArg := ""
		if db.Dialector.Name() == "sqlite" {
			dbArg = filepath.Join(t.TempDir(), "kill.db")
			d, err := checkpoint.OpenSQLite(dbArg)
			require.NoError(t, err)
			db = d
		} else {
			var schema string
			require.NoError(t, db.Raw("SELECT current_schema()").Scan(&schema).Error)
			dbArg = os.Getenv(postgresDSNVar) + " search_path=" + schema
		}
		for round := range 4 {
			cmd := exec.Command(os.Args[0], "-test.run", "^TestKilledMidSave$")
			cmd.Env = append(os.Environ(), "CHECKPOINT_CHILD=1", "CHECKPOINT_ROOT="+root, "CHECKPOINT_DB="+dbArg)
			cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
			out, err := cmd.StdoutPipe()
			require.NoError(t, err)
			require.NoError(t, cmd.Start())
			// The kill lands mid-save, after the first one: the child says
			// when it has saved (a loaded machine takes seconds to start it).
			saved := make(chan struct{})
			go func() {
				sc := bufio.NewScanner(out)
				for sc.Scan() {
					if sc.Text() == "saved" {
						close(saved)
						break
					}
				}
				_, _ = io.Copy(io.Discard, out)
			}()
			select {
			case <-saved:
			case <-time.After(60 * time.Second):
				t.Fatal("the child saved nothing within 60 s")
			}
			time.Sleep(time.Duration(50+100*round) * time.Millisecond)
			require.NoError(t, syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL))
			_ = cmd.Wait()
		}
		store, err := checkpoint.NewStore(db, checkpoint.WithMaxPerConversation(0), checkpoint.WithCollectGrace(0))
		require.NoError(t, err)
		c, err := checkpoint.New(store, root)
		require.NoError(t, err)
		list, err := c.List(ctx, checkpoint.Filter{})
		require.NoError(t, err)
		require.NotEmpty(t, list, "the child saved something before it was killed")
		_, err = store.Collect(ctx)
		require.NoError(t, err)
		for _, cp := range []checkpoint.Checkpoint{list[0], list[len(list)-1]} {
			r, err := c.Rewind(ctx, cp.ID, checkpoint.RewindOptions{})
			require.NoError(t, err)
			assert.True(t, r.Exact)
			again, err := c.Save(ctx, checkpoint.KindManual, "")
			require.NoError(t, err)
			assert.Equal(t, cp.Tree, again.Tree)
		}
	})
}

// child saves checkpoints of a changing tree until it is killed.
func child() {
	root, dsn := os.Getenv("CHECKPOINT_ROOT"), os.Getenv("CHECKPOINT_DB")
	var db *gorm.DB
	var err error
	if strings.HasSuffix(dsn, ".db") {
		db, err = checkpoint.OpenSQLite(dsn)
	} else {
		db, err = gorm.Open(postgres.Open(dsn), &gorm.Config{Logger: logger.Discard})
	}
	if err != nil {
		panic(err)
	}
	store, _ := checkpoint.NewStore(db, checkpoint.WithMaxPerConversation(0))
	c, err := checkpoint.New(store, root)
	if err != nil {
		panic(err)
	}
	for i := 0; ; i++ {
		for j := range 20 {
			p := filepath.Join(root, fmt.Sprintf("d%d", j%4), fmt.Sprintf("f%d", (i+j)%30))
			_ = os.MkdirAll(filepath.Dir(p), 0o755)
			_ = os.WriteFile(p, []byte(strings.Repeat(fmt.Sprint(i, j), 200)), 0o644)
		}
		if _, err := c.Save(context.Background(), checkpoint.KindTurn, ""); err != nil {
			panic(err)
		}
		if i == 0 {
			fmt.Println("saved")
		}
	}
}

// TestRewindHardLinks: a checkpoint records which paths name one file; a
// rewind links them again and makes files linked since separate, on
// both databases, after a collection too (the groups' blob is kept); a
// checkpoint row of before the links column (links empty) rewinds with
// links left as they are.
func TestRewindHardLinks(t *testing.T) {
	forEachDB(t, func(t *testing.T, db *gorm.DB) {
		ctx := context.Background()
		root := t.TempDir()
		writeFiles(t, root, map[string]string{"a.txt": "shared\n", "x.txt": "x\n"})
		p := func(rel string) string { return filepath.Join(root, rel) }
		require.NoError(t, os.Link(p("a.txt"), p("b.txt")))
		ino := func(rel string) uint64 {
			info, err := os.Lstat(p(rel))
			require.NoError(t, err)
			return info.Sys().(*syscall.Stat_t).Ino
		}
		store, err := checkpoint.NewStore(db, checkpoint.WithCollectGrace(0))
		require.NoError(t, err)
		c, err := checkpoint.New(store, root)
		require.NoError(t, err)
		cp, err := c.Save(ctx, checkpoint.KindManual, "")
		require.NoError(t, err)
		require.NotEmpty(t, cp.Links)
		want := treeDigest(t, root)

		require.NoError(t, os.Remove(p("b.txt")))
		require.NoError(t, os.WriteFile(p("b.txt"), []byte("shared\n"), 0o644))
		require.NoError(t, os.Link(p("x.txt"), p("y.txt")))
		_, err = c.Save(ctx, checkpoint.KindManual, "")
		require.NoError(t, err)
		_, err = store.Collect(ctx)
		require.NoError(t, err)

		r, err := c.Rewind(ctx, cp.ID, checkpoint.RewindOptions{})
		require.NoError(t, err)
		assert.True(t, r.Exact, "skipped: %v", r.Skipped)
		assert.Equal(t, want, treeDigest(t, root))
		assert.Equal(t, ino("a.txt"), ino("b.txt"), "linked again")
		assert.NoFileExists(t, p("y.txt"))

		// A row saved before links were recorded.
		require.NoError(t, db.Model(&checkpoint.Checkpoint{}).Where("id = ?", cp.ID).Update("links", "").Error)
		require.NoError(t, os.Remove(p("b.txt")))
		require.NoError(t, os.WriteFile(p("b.txt"), []byte("shared\n"), 0o644))
		_, err = c.Rewind(ctx, cp.ID, checkpoint.RewindOptions{})
		require.NoError(t, err)
		assert.NotEqual(t, ino("a.txt"), ino("b.txt"), "left as they are")
	})
}

// TestMigrateAddsTheLinksColumn: a checkpoints table of before the links
// column gets it from Migrate, its rows keep rewinding, new ones record
// their links.
func TestMigrateAddsTheLinksColumn(t *testing.T) {
	forEachDB(t, func(t *testing.T, db *gorm.DB) {
		ctx := context.Background()
		root := t.TempDir()
		writeFiles(t, root, map[string]string{"a.txt": "a\n"})
		require.NoError(t, db.Migrator().DropColumn(&checkpoint.Checkpoint{}, "links"))
		require.False(t, db.Migrator().HasColumn(&checkpoint.Checkpoint{}, "links"))
		require.NoError(t, db.Exec("INSERT INTO checkpoints (id, root, key, kind, tree, entries, huge, iteration, created_at) VALUES ('old', 'r', 'old', 'manual', 'x', 0, 0, 0, ?)", time.Now().UTC()).Error)
		require.NoError(t, checkpoint.Migrate(db))
		require.True(t, db.Migrator().HasColumn(&checkpoint.Checkpoint{}, "links"))
		store, err := checkpoint.NewStore(db)
		require.NoError(t, err)
		c, err := checkpoint.New(store, root, checkpoint.WithRootName("r"))
		require.NoError(t, err)
		old, err := c.Get(ctx, "old")
		require.NoError(t, err)
		assert.Empty(t, old.Links)
		cp, err := c.Save(ctx, checkpoint.KindManual, "")
		require.NoError(t, err)
		assert.NotEmpty(t, cp.Links)
	})
}
