package temporal

import (
	"context"
	"fmt"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/llmtoolkit/llmtoolkit/agentloop"
	"github.com/stretchr/testify/require"
	commonpb "go.temporal.io/api/common/v1"
	enumspb "go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"
	taskqueuepb "go.temporal.io/api/taskqueue/v1"
	"go.temporal.io/api/temporalproto"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/interceptor"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"
	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/timestamppb"
)

// historyRecorder records what a workflow did in the test environment
// (which keeps no history of its own) and builds the Temporal history a
// server would have written for it: the workflow tasks, the activities
// each task scheduled (from a workflow interceptor, in the order the
// workflow scheduled them) and each activity's completion (from the
// environment's listener), each completion followed by a workflow task.
// The replayer then checks the workflow against it exactly as a worker
// that picks a run up after a crash replays the server's history.
type historyRecorder struct {
	interceptor.WorkerInterceptorBase
	mu  sync.Mutex
	log []recorded
	err error
}

type recorded struct {
	scheduled bool // else completed
	id        string
	typ       string
	opts      workflow.ActivityOptions
	payloads  *commonpb.Payloads // the input, or the result
}

func (r *historyRecorder) InterceptWorkflow(ctx workflow.Context, next interceptor.WorkflowInboundInterceptor) interceptor.WorkflowInboundInterceptor {
	return &recordingInbound{WorkflowInboundInterceptorBase: interceptor.WorkflowInboundInterceptorBase{Next: next}, r: r}
}

type recordingInbound struct {
	interceptor.WorkflowInboundInterceptorBase
	r *historyRecorder
}

func (i *recordingInbound) Init(outbound interceptor.WorkflowOutboundInterceptor) error {
	return i.Next.Init(&recordingOutbound{WorkflowOutboundInterceptorBase: interceptor.WorkflowOutboundInterceptorBase{Next: outbound}, r: i.r})
}

type recordingOutbound struct {
	interceptor.WorkflowOutboundInterceptorBase
	r *historyRecorder
}

func (o *recordingOutbound) ExecuteActivity(ctx workflow.Context, activityType string, args ...any) workflow.Future {
	p, err := converter.GetDefaultDataConverter().ToPayloads(args...)
	o.r.mu.Lock()
	if err != nil && o.r.err == nil {
		o.r.err = err
	}
	opts := workflow.GetActivityOptions(ctx)
	o.r.log = append(o.r.log, recorded{scheduled: true, id: opts.ActivityID, typ: activityType, opts: opts, payloads: p})
	o.r.mu.Unlock()
	return o.Next.ExecuteActivity(ctx, activityType, args...)
}

// attach installs the recorder on env.
func (r *historyRecorder) attach(env *testsuite.TestWorkflowEnvironment) {
	env.SetWorkerOptions(worker.Options{Interceptors: []interceptor.WorkerInterceptor{r}})
	env.SetOnActivityCompletedListener(func(info *activity.Info, result converter.EncodedValue, err error) {
		r.mu.Lock()
		defer r.mu.Unlock()
		if err != nil {
			if r.err == nil {
				r.err = fmt.Errorf("activity %s failed (%v): the recorder records runs whose activities complete", info.ActivityID, err)
			}
			return
		}
		var v any
		switch info.ActivityType.Name {
		case ModelActivityName:
			var o ModelResult
			err = result.Get(&o)
			v = o
		case ToolActivityName:
			var o agentloop.ToolOutcome
			err = result.Get(&o)
			v = o
		default:
			err = fmt.Errorf("unknown activity type %q", info.ActivityType.Name)
		}
		var p *commonpb.Payloads
		if err == nil {
			p, err = converter.GetDefaultDataConverter().ToPayloads(v)
		}
		if err != nil && r.err == nil {
			r.err = err
		}
		r.log = append(r.log, recorded{id: info.ActivityID, typ: info.ActivityType.Name, payloads: p})
	})
}

// history builds the history of the run whose input was in and whose
// result was out.
func (r *historyRecorder) history(in RunInput, out RunOutput) (*historypb.History, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.err != nil {
		return nil, r.err
	}
	dc := converter.GetDefaultDataConverter()
	input, err := dc.ToPayloads(in)
	if err != nil {
		return nil, err
	}
	result, err := dc.ToPayloads(out)
	if err != nil {
		return nil, err
	}
	const queue = "llmtoolkit-replay"
	tq := &taskqueuepb.TaskQueue{Name: queue, Kind: enumspb.TASK_QUEUE_KIND_NORMAL}
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	h := &historypb.History{}
	add := func(typ enumspb.EventType, attrs func(e *historypb.HistoryEvent)) int64 {
		id := int64(len(h.Events) + 1)
		e := &historypb.HistoryEvent{EventId: id, EventType: typ, EventTime: timestamppb.New(t0.Add(time.Duration(id) * time.Millisecond))}
		attrs(e)
		h.Events = append(h.Events, e)
		return id
	}
	add(enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_STARTED, func(e *historypb.HistoryEvent) {
		e.Attributes = &historypb.HistoryEvent_WorkflowExecutionStartedEventAttributes{WorkflowExecutionStartedEventAttributes: &historypb.WorkflowExecutionStartedEventAttributes{
			WorkflowType: &commonpb.WorkflowType{Name: WorkflowName}, TaskQueue: tq, Input: input,
			WorkflowTaskTimeout: durationpb.New(10 * time.Second), Attempt: 1, OriginalExecutionRunId: "recorded-run", FirstExecutionRunId: "recorded-run",
		}}
	})
	var completed int64 // the last WorkflowTaskCompleted
	workflowTask := func() {
		s := add(enumspb.EVENT_TYPE_WORKFLOW_TASK_SCHEDULED, func(e *historypb.HistoryEvent) {
			e.Attributes = &historypb.HistoryEvent_WorkflowTaskScheduledEventAttributes{WorkflowTaskScheduledEventAttributes: &historypb.WorkflowTaskScheduledEventAttributes{
				TaskQueue: tq, StartToCloseTimeout: durationpb.New(10 * time.Second), Attempt: 1,
			}}
		})
		st := add(enumspb.EVENT_TYPE_WORKFLOW_TASK_STARTED, func(e *historypb.HistoryEvent) {
			e.Attributes = &historypb.HistoryEvent_WorkflowTaskStartedEventAttributes{WorkflowTaskStartedEventAttributes: &historypb.WorkflowTaskStartedEventAttributes{
				ScheduledEventId: s, Identity: "recorder", RequestId: fmt.Sprint("wft-", s),
			}}
		})
		completed = add(enumspb.EVENT_TYPE_WORKFLOW_TASK_COMPLETED, func(e *historypb.HistoryEvent) {
			e.Attributes = &historypb.HistoryEvent_WorkflowTaskCompletedEventAttributes{WorkflowTaskCompletedEventAttributes: &historypb.WorkflowTaskCompletedEventAttributes{
				ScheduledEventId: s, StartedEventId: st, Identity: "recorder",
			}}
		})
	}
	workflowTask()
	scheduledAt := map[string]int64{}
	for _, rec := range r.log {
		if rec.scheduled {
			o := rec.opts
			scheduledAt[rec.id] = add(enumspb.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED, func(e *historypb.HistoryEvent) {
				e.Attributes = &historypb.HistoryEvent_ActivityTaskScheduledEventAttributes{ActivityTaskScheduledEventAttributes: &historypb.ActivityTaskScheduledEventAttributes{
					ActivityId: rec.id, ActivityType: &commonpb.ActivityType{Name: rec.typ}, TaskQueue: tq, Input: rec.payloads,
					StartToCloseTimeout: durationpb.New(o.StartToCloseTimeout), HeartbeatTimeout: durationpb.New(o.HeartbeatTimeout),
					WorkflowTaskCompletedEventId: completed,
				}}
			})
			continue
		}
		sched, ok := scheduledAt[rec.id]
		if !ok {
			return nil, fmt.Errorf("activity %s completed but was never scheduled", rec.id)
		}
		started := add(enumspb.EVENT_TYPE_ACTIVITY_TASK_STARTED, func(e *historypb.HistoryEvent) {
			e.Attributes = &historypb.HistoryEvent_ActivityTaskStartedEventAttributes{ActivityTaskStartedEventAttributes: &historypb.ActivityTaskStartedEventAttributes{
				ScheduledEventId: sched, Identity: "recorder", RequestId: "act-" + rec.id, Attempt: 1,
			}}
		})
		add(enumspb.EVENT_TYPE_ACTIVITY_TASK_COMPLETED, func(e *historypb.HistoryEvent) {
			e.Attributes = &historypb.HistoryEvent_ActivityTaskCompletedEventAttributes{ActivityTaskCompletedEventAttributes: &historypb.ActivityTaskCompletedEventAttributes{
				Result: rec.payloads, ScheduledEventId: sched, StartedEventId: started, Identity: "recorder",
			}}
		})
		workflowTask()
	}
	add(enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_COMPLETED, func(e *historypb.HistoryEvent) {
		e.Attributes = &historypb.HistoryEvent_WorkflowExecutionCompletedEventAttributes{WorkflowExecutionCompletedEventAttributes: &historypb.WorkflowExecutionCompletedEventAttributes{
			Result: result, WorkflowTaskCompletedEventId: completed,
		}}
	})
	return h, nil
}

// recordRun runs the workflow in the test environment with acts and in,
// and returns its output and its history.
func recordRun(t *testing.T, acts *Activities, in RunInput) (RunOutput, *historypb.History) {
	t.Helper()
	env := newEnv(t, acts)
	rec := &historyRecorder{}
	rec.attach(env)
	env.ExecuteWorkflow(WorkflowName, in)
	out := runOutput(t, env)
	h, err := rec.history(in, out)
	require.NoError(t, err)
	return out, h
}

func writeHistory(path string, h *historypb.History) error {
	b, err := temporalproto.CustomJSONMarshalOptions{Indent: "  "}.Marshal(h)
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(b, '\n'), 0o644)
}

var _ = context.Background
