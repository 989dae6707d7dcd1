package dbos

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"

	transact "github.com/dbos-inc/dbos-transact-golang/dbos"
)

// ErrOtherVersion is wrapped by the errors of [Engine.Start],
// [Engine.Run] and [Engine.Result] for a run that was interrupted under
// another application version ([Config.ApplicationVersion]): DBOS resumes
// a run only in a process of the version that started it, so this engine
// would wait for it forever. Resume it in a process of that version, or
// [Engine.Cancel] it.
var ErrOtherVersion = errors.New("durable/dbos: the run belongs to another application version")

// maxLoggedRuns caps the run IDs one log record of Launch names.
const maxLoggedRuns = 20

// otherVersion returns an error wrapping [ErrOtherVersion] when the run id
// is pending under an application version other than this engine's, and
// nil otherwise (no such run, a finished one, one of this version, or an
// error reading it: the caller's own call then says what is wrong).
func (e *Engine) otherVersion(id string) error {
	runs, err := transact.ListWorkflows(e.ctx, transact.WithFilterWorkflowIDs(id),
		transact.WithFilterStatus(transact.WorkflowStatusPending),
		transact.WithFilterLoadInput(false), transact.WithFilterLoadOutput(false))
	if err != nil || len(runs) == 0 {
		return nil
	}
	ours := transact.GetApplicationVersion(e.ctx)
	if v := runs[0].ApplicationVersion; v != ours {
		return fmt.Errorf("%w: run %q was interrupted under application version %q and only a process of that version resumes it; this engine is version %q (Config.ApplicationVersion): start a process with ApplicationVersion %q to finish it, or cancel it",
			ErrOtherVersion, id, v, ours, v)
	}
	return nil
}

// logOtherVersions logs, at Launch, the interrupted runs this engine
// leaves to other application versions, so that a rebuilt binary that
// resumes nothing says why.
func (e *Engine) logOtherVersions() {
	runs, err := transact.ListWorkflows(e.ctx, transact.WithFilterStatus(transact.WorkflowStatusPending),
		transact.WithFilterName(workflowName), transact.WithFilterLoadInput(false), transact.WithFilterLoadOutput(false))
	if err != nil {
		e.cfg.Logger.Warn("durable/dbos: could not list the interrupted runs of other application versions", slog.Any("error", err))
		return
	}
	ours := transact.GetApplicationVersion(e.ctx)
	byVersion := map[string][]string{}
	n := 0
	for _, r := range runs {
		if r.ApplicationVersion == ours {
			continue
		}
		n++
		if len(byVersion[r.ApplicationVersion]) < maxLoggedRuns {
			byVersion[r.ApplicationVersion] = append(byVersion[r.ApplicationVersion], r.ID)
		}
	}
	if n == 0 {
		return
	}
	for v, ids := range byVersion {
		e.cfg.Logger.Warn("durable/dbos: interrupted runs of another application version are not resumed by this engine; start a process with that Config.ApplicationVersion to finish them, or cancel them",
			slog.String("their_version", v), slog.String("this_version", ours), slog.String("runs", strings.Join(ids, ",")), slog.Int("total_other_versions", n))
	}
}

// MayResume reports whether the run id may still run or resume: it is
// pending (running, or interrupted and resumed by the next Launch or
// Recover), enqueued or delayed. A run that ended, was cancelled, gave
// up after its recovery attempts or does not exist may not. Give it to
// package agent's WorkspaceConfig.MayResume: the sub-agents' workspaces a
// crash left are then kept for the runs that resume and removed for the
// others.
//
// It reads the system database outside any run (on a run's context DBOS
// would record the read as a step of that run, which its next attempt
// would not replay in the same place), so it may be called from an
// AgentFunc; ctx is only checked for its end.
func (e *Engine) MayResume(ctx context.Context, id string) (bool, error) {
	if err := ctx.Err(); err != nil {
		return false, err
	}
	runs, err := transact.ListWorkflows(e.ctx, transact.WithFilterWorkflowIDs(id),
		transact.WithFilterLoadInput(false), transact.WithFilterLoadOutput(false))
	if err != nil {
		return false, fmt.Errorf("%w: the status of run %q: %w", ErrEngine, id, err)
	}
	for _, r := range runs {
		switch r.Status {
		case transact.WorkflowStatusPending, transact.WorkflowStatusEnqueued, transact.WorkflowStatusDelayed:
			return true, nil
		}
	}
	return false, nil
}
