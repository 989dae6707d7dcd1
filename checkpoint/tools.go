package checkpoint

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/llmtoolkit/llmtoolkit"
)

// DisplayCheckpoint is the Display kind of a diff between two
// checkpoints; its payload is a [DiffPayload].
const DisplayCheckpoint = "checkpoint"

// DiffPayload is what a host shows of a turn's (or a rewind's) changes.
type DiffPayload struct {
	// From and To are the checkpoint ids compared.
	From string `json:"from"`
	To   string `json:"to"`
	// Changes are the paths that differ, a folder before what it holds.
	Changes []Change `json:"changes"`
	// Truncated: more than [MaxDiffChanges] changed; the list stops there.
	Truncated bool `json:"truncated"`
	// Skipped, for a rewind, names what it could not restore.
	Skipped []Skipped `json:"skipped"`
}

// Display returns the diff from checkpoint from to checkpoint to as a
// Display payload (kind [DisplayCheckpoint]), to show a user what a turn
// changed.
func (c *Checkpointer) Display(ctx context.Context, from, to string) (llmtoolkit.Display, error) {
	changes, truncated, err := c.Diff(ctx, from, to)
	if err != nil {
		return llmtoolkit.Display{}, err
	}
	if changes == nil {
		changes = []Change{}
	}
	return llmtoolkit.Display{Kind: DisplayCheckpoint, Payload: DiffPayload{From: from, To: to, Changes: changes, Truncated: truncated, Skipped: []Skipped{}}}, nil
}

// Tools returns two tools over c, for a host that lets a (remote) agent
// see and rewind its checkpoints, over MCP say: checkpoint_list and
// checkpoint_rewind. No server offers them unless the host composes them
// in (they are off by default). A call sees only the checkpoints of its
// own tenant and conversation when its context names them
// ([AttributionFrom]); a rewind is checked by c's [WithAllow] as any
// rewind is, shows its changes (kind [DisplayCheckpoint]) and is itself
// undoable.
func Tools(c *Checkpointer) llmtoolkit.Resolver {
	list, _ := llmtoolkit.NewToolFrom(llmtoolkit.Tool{
		Name:        "checkpoint_list",
		Description: "List the checkpoints of the working folder, newest first: one per turn of this conversation, with its id, kind, iteration and time. Rewind to one with checkpoint_rewind.",
		Parameters: map[string]any{"type": "object", "additionalProperties": false, "properties": map[string]any{
			"limit": map[string]any{"type": "integer", "minimum": 1, "maximum": 200, "description": "How many to list (default 20)."},
		}},
		Annotations: &llmtoolkit.Annotations{ReadOnly: true, Idempotent: true},
	})
	rewind, _ := llmtoolkit.NewToolFrom(llmtoolkit.Tool{
		Name:        "checkpoint_rewind",
		Description: "Put the working folder back as it was at a checkpoint (from checkpoint_list): contents, modes, links; files made since are removed, files deleted since restored. dryRun lists the changes without making them. The state replaced is itself checkpointed: rewind to the 'before' id of the answer to undo.",
		Parameters: map[string]any{"type": "object", "additionalProperties": false, "required": []any{"id"}, "properties": map[string]any{
			"id":     map[string]any{"type": "string", "minLength": 1, "maxLength": 64, "description": "The checkpoint's id."},
			"dryRun": map[string]any{"type": "boolean", "description": "List the changes only."},
		}},
		Annotations: &llmtoolkit.Annotations{Destructive: true},
	})
	return &toolsResolver{c: c, tools: []llmtoolkit.Tool{list, rewind}}
}

type toolsResolver struct {
	c     *Checkpointer
	tools []llmtoolkit.Tool
}

func (t *toolsResolver) Tools() []llmtoolkit.Tool { return t.tools }

// errForeign refuses a checkpoint of another tenant or conversation.
var errForeign = errors.New("checkpoint: that checkpoint belongs to another conversation")

func (t *toolsResolver) owns(ctx context.Context, cp Checkpoint) bool {
	a := AttributionFrom(ctx)
	return (a.TenantID == "" || a.TenantID == cp.TenantID) && (a.ConversationID == "" || a.ConversationID == cp.ConversationID)
}

func (t *toolsResolver) Resolve(ctx context.Context, call llmtoolkit.Call) (string, error) {
	switch call.Name {
	case "checkpoint_list":
		limit := 20
		if n, ok := call.Arguments["limit"].(float64); ok && n >= 1 && n <= 200 {
			limit = int(n)
		} else if n, ok := call.Arguments["limit"].(int); ok && n >= 1 && n <= 200 {
			limit = n
		}
		a := AttributionFrom(ctx)
		list, err := t.c.List(ctx, Filter{ConversationID: a.ConversationID, Limit: 1000})
		if err != nil {
			return "", err
		}
		var b strings.Builder
		n := 0
		for _, cp := range list {
			if !t.owns(ctx, cp) {
				continue
			}
			if n == limit {
				break
			}
			n++
			fmt.Fprintf(&b, "%s %s iteration %d at %s (%d entries)\n", cp.ID, cp.Kind, cp.Iteration, cp.CreatedAt.Format("2006-01-02T15:04:05Z"), cp.Entries)
		}
		if n == 0 {
			return "No checkpoints yet.", nil
		}
		return b.String(), nil
	case "checkpoint_rewind":
		id, _ := call.Arguments["id"].(string)
		dry, _ := call.Arguments["dryRun"].(bool)
		cp, err := t.c.Get(ctx, id)
		if err != nil {
			return "", err
		}
		if !t.owns(ctx, cp) {
			return "", fmt.Errorf("%w: %q", errForeign, id)
		}
		r, err := t.c.Rewind(ctx, id, RewindOptions{DryRun: dry})
		if err != nil {
			return "", err
		}
		changes := r.Changes
		if changes == nil {
			changes = []Change{}
		}
		skipped := r.Skipped
		if skipped == nil {
			skipped = []Skipped{}
		}
		llmtoolkit.Show(ctx, llmtoolkit.Display{Kind: DisplayCheckpoint, Payload: DiffPayload{From: r.Before.ID, To: id, Changes: changes, Skipped: skipped}})
		out := map[string]any{"changes": len(changes), "dryRun": dry, "exact": r.Exact, "before": r.Before.ID, "skipped": skipped}
		data, _ := json.Marshal(out)
		return string(data), nil
	}
	return "", fmt.Errorf("%w: %q", llmtoolkit.ErrUnknownTool, call.Name)
}
