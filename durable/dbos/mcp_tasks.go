package dbos

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"time"

	transact "github.com/dbos-inc/dbos-transact-golang/dbos"
	_ "github.com/jackc/pgx/v5/stdlib" // database/sql's "pgx" driver, for the task table on PostgreSQL

	"github.com/llmtoolkit/llmtoolkit/mcp"
)

// taskWorkflowName is the name a task round's workflow is registered
// under: recorded workflows name it, so it must not change.
const taskWorkflowName = "llmtoolkit.mcp.Task"

// taskTable is the table of the tasks, in the system database.
const taskTable = "llmtoolkit_mcp_tasks"

// maxUpdateAttempts bounds the retries of an Update whose task another
// replica changed between its read and its write.
const maxUpdateAttempts = 50

// ErrTaskConflict is wrapped by the error of [TaskStore.Update] when the
// task kept changing under it (other replicas writing it) for
// maxUpdateAttempts attempts.
var ErrTaskConflict = errors.New("durable/dbos: the task kept changing during the update")

// TaskStoreConfig configures a [TaskStore].
type TaskStoreConfig struct {
	// DatabaseURL is the DBOS system database, as [Config.DatabaseURL]:
	// "sqlite:PATH" or a PostgreSQL URL or key=value DSN. Every replica
	// of the MCP server names the same one. Required.
	DatabaseURL string
	// AppName names the application in the system database. Empty means
	// "llmtoolkit".
	AppName string
	// ExecutorID is this process's identity, as [Config.ExecutorID]: at
	// [TaskStore.Launch] it resumes the interrupted task rounds of this
	// executor ID. Give every replica its own, and one distinct from an
	// [Engine]'s in the same process.
	ExecutorID string
	// ApplicationVersion is the version of the code, as
	// [Config.ApplicationVersion].
	ApplicationVersion string
	// Logger receives DBOS's records. Nil means slog.Default().
	Logger *slog.Logger
}

// TaskStore is an [mcp.TaskStore] on DBOS Transact: the MCP tasks of
// every replica of a server ([mcp.Handler] with [mcp.WithTaskStore]) live
// in one database, so any replica answers for any task (its status, its
// result, its cancellation and its input), and a task outlives the
// process that runs it.
//
// A task is a row of the table llmtoolkit_mcp_tasks in the system
// database (its JSON, a version for optimistic updates, its expiry); each
// round of its tool is a DBOS workflow (ID "mcp-task/TASKID/ROUND"). When
// the process running a round dies, the next [TaskStore.Launch] with the
// same ExecutorID runs the round again (at least once: the tool runs from
// its start, so a tool with side effects must be idempotent), and its
// outcome is written to the task for every replica to read. A task
// cancelled on one replica stops on the replica that runs it within a
// second (the run reads its task). Rows past their TTL are deleted as new
// tasks are created. A row holds what the task needs to run again: the
// call's arguments (sensitive values included), the client's answers, the
// caller's identity, the result: the database needs the access control
// those need.
type TaskStore struct {
	cfg  TaskStoreConfig
	ctx  transact.Context
	db   *sql.DB
	pg   bool
	lock executorLock

	mu  sync.Mutex
	run mcp.TaskRunFunc
}

// taskRound is the input of a round's workflow.
type taskRound struct {
	ID    string `json:"id"`
	Round int    `json:"round"`
}

// NewTaskStore opens the system database (creating DBOS's tables and the
// task table) and registers the rounds' workflow. Build the server with
// it ([mcp.WithTaskStore]), then call [TaskStore.Launch].
func NewTaskStore(ctx context.Context, cfg TaskStoreConfig) (*TaskStore, error) {
	if cfg.DatabaseURL == "" {
		return nil, fmt.Errorf("%w: TaskStoreConfig.DatabaseURL is empty; give \"sqlite:PATH\" or a PostgreSQL URL", ErrInvalidConfig)
	}
	if cfg.AppName == "" {
		cfg.AppName = "llmtoolkit"
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if err := prepareStoreFile(cfg.DatabaseURL, cfg.Logger); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrEngine, err)
	}
	dctx, err := transact.NewContext(ctx, transact.Config{
		AppName: cfg.AppName, DatabaseURL: cfg.DatabaseURL, ExecutorID: cfg.ExecutorID,
		ApplicationVersion: cfg.ApplicationVersion, Logger: cfg.Logger,
	})
	if err != nil {
		return nil, fmt.Errorf("%w: opening the system database: %w", ErrEngine, err)
	}
	s := &TaskStore{cfg: cfg, ctx: dctx}
	if path, ok := sqlitePath(cfg.DatabaseURL); ok {
		s.db, err = sql.Open("sqlite", "file:"+path+"?_pragma=busy_timeout(5000)&_pragma=journal_mode(WAL)")
	} else {
		s.pg = true
		s.db, err = sql.Open("pgx", cfg.DatabaseURL)
	}
	if err == nil {
		_, err = s.db.ExecContext(ctx, "CREATE TABLE IF NOT EXISTS "+taskTable+
			" (id TEXT PRIMARY KEY, version BIGINT NOT NULL, expires_at BIGINT NOT NULL, body TEXT NOT NULL)")
	}
	if err != nil {
		if s.db != nil {
			s.db.Close()
		}
		transact.Shutdown(dctx, time.Second)
		return nil, fmt.Errorf("%w: opening the task table: %w", ErrEngine, err)
	}
	transact.RegisterWorkflow(dctx, s.workflow, transact.WithWorkflowName(taskWorkflowName))
	return s, nil
}

// Launch starts the store: it runs again every task round of this
// executor that was interrupted, and starts serving. Call it after the
// server is built (which binds the store). It fails with
// [ErrExecutorInUse] when another live process runs with the same
// executor ID on the same database.
func (s *TaskStore) Launch() error {
	lock, err := lockExecutor(s.ctx, s.cfg.DatabaseURL, s.cfg.AppName, transact.GetExecutorID(s.ctx))
	if err != nil {
		return err
	}
	if err := transact.Launch(s.ctx); err != nil {
		if lock != nil {
			lock.release()
		}
		return fmt.Errorf("%w: launching: %w", ErrEngine, err)
	}
	s.lock = lock
	return nil
}

// Shutdown stops the store, waiting up to timeout for the rounds in
// progress, and closes the database.
func (s *TaskStore) Shutdown(timeout time.Duration) error {
	err := transact.Shutdown(s.ctx, timeout)
	if s.lock != nil {
		err = errors.Join(err, s.lock.release())
		s.lock = nil
	}
	err = errors.Join(err, s.db.Close())
	if err != nil {
		return fmt.Errorf("%w: shutting down: %w", ErrEngine, err)
	}
	return nil
}

// Bind sets the function that runs a task's round.
func (s *TaskStore) Bind(run mcp.TaskRunFunc) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.run = run
}

// q rewrites the ? placeholders of query for PostgreSQL.
func (s *TaskStore) q(query string) string {
	if !s.pg {
		return query
	}
	var b strings.Builder
	n := 0
	for _, r := range query {
		if r == '?' {
			n++
			b.WriteString("$" + strconv.Itoa(n))
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

// Create records t, once deleting the tasks whose TTL has passed.
func (s *TaskStore) Create(ctx context.Context, t *mcp.Task) error {
	body, err := json.Marshal(t)
	if err != nil {
		return fmt.Errorf("durable/dbos: encoding task %s: %w", t.ID, err)
	}
	now := time.Now()
	if _, err := s.db.ExecContext(ctx, s.q("DELETE FROM "+taskTable+" WHERE expires_at < ?"), now.UnixMilli()); err != nil {
		s.cfg.Logger.WarnContext(ctx, "durable/dbos: expired tasks not deleted", "error", err.Error())
	}
	_, err = s.db.ExecContext(ctx, s.q("INSERT INTO "+taskTable+" (id, version, expires_at, body) VALUES (?, 1, ?, ?)"),
		t.ID, t.CreatedAt.Add(t.TTL).UnixMilli(), string(body))
	if err != nil {
		return fmt.Errorf("%w: recording task %s: %w", ErrEngine, t.ID, err)
	}
	return nil
}

// read returns the task id and its version.
func (s *TaskStore) read(ctx context.Context, id string) (*mcp.Task, int64, error) {
	var version, expires int64
	var body string
	err := s.db.QueryRowContext(ctx, s.q("SELECT version, expires_at, body FROM "+taskTable+" WHERE id = ?"), id).
		Scan(&version, &expires, &body)
	if errors.Is(err, sql.ErrNoRows) || (err == nil && expires < time.Now().UnixMilli()) {
		return nil, 0, fmt.Errorf("%w: %q", mcp.ErrTaskNotFound, id)
	}
	if err != nil {
		return nil, 0, fmt.Errorf("%w: reading task %s: %w", ErrEngine, id, err)
	}
	var t mcp.Task
	if err := json.Unmarshal([]byte(body), &t); err != nil {
		return nil, 0, fmt.Errorf("%w: decoding task %s: %w", ErrEngine, id, err)
	}
	return &t, version, nil
}

// Get returns the task id, from any replica's writes.
func (s *TaskStore) Get(ctx context.Context, id string) (*mcp.Task, error) {
	t, _, err := s.read(ctx, id)
	return t, err
}

// Update changes the task id with fn: it reads the task, applies fn and
// writes it only if no one wrote it meanwhile, trying again otherwise.
func (s *TaskStore) Update(ctx context.Context, id string, fn func(*mcp.Task) error) (*mcp.Task, error) {
	for range maxUpdateAttempts {
		t, version, err := s.read(ctx, id)
		if err != nil {
			return nil, err
		}
		if err := fn(t); err != nil {
			return nil, err
		}
		body, err := json.Marshal(t)
		if err != nil {
			return nil, fmt.Errorf("durable/dbos: encoding task %s: %w", id, err)
		}
		res, err := s.db.ExecContext(ctx, s.q("UPDATE "+taskTable+" SET body = ?, version = version + 1 WHERE id = ? AND version = ?"),
			string(body), id, version)
		if err != nil {
			return nil, fmt.Errorf("%w: writing task %s: %w", ErrEngine, id, err)
		}
		if n, err := res.RowsAffected(); err == nil && n == 1 {
			return t, nil
		}
		if err := ctx.Err(); err != nil {
			return nil, err
		}
	}
	return nil, fmt.Errorf("%w: task %s", ErrTaskConflict, id)
}

// Run starts round of the task id as a DBOS workflow, in this process; if
// the process dies first, the next Launch with its executor ID runs it
// again. Starting a round twice runs it once.
func (s *TaskStore) Run(_ context.Context, id string, round int) error {
	wid := fmt.Sprintf("mcp-task/%s/%d", id, round)
	if _, err := transact.RunWorkflow(s.ctx, s.workflow, taskRound{ID: id, Round: round}, transact.WithWorkflowID(wid)); err != nil {
		return fmt.Errorf("%w: starting round %d of task %s: %w", ErrEngine, round, id, err)
	}
	return nil
}

// workflow runs one round of a task with the bound function.
func (s *TaskStore) workflow(wf transact.Context, in taskRound) (_ string, err error) {
	defer func() {
		if v := recover(); v != nil {
			err = fmt.Errorf("durable/dbos: round %d of task %s panicked (%T)", in.Round, in.ID, v)
			s.cfg.Logger.Error("durable/dbos: a task round panicked", "task", in.ID, "panic_type", fmt.Sprintf("%T", v))
		}
	}()
	s.mu.Lock()
	run := s.run
	s.mu.Unlock()
	if run == nil {
		return "", fmt.Errorf("%w: the task store is bound to no MCP server: build the server before TaskStore.Launch", ErrInvalidConfig)
	}
	return "", run(wf, in.ID, in.Round)
}
