package otelkit_test

import (
	"context"
	"fmt"
	"slices"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/llmtoolkit/llmtoolkit"
	"github.com/llmtoolkit/llmtoolkit/agentloop"
	lt "github.com/llmtoolkit/llmtoolkit/llmtoolkittest"
	"github.com/llmtoolkit/llmtoolkit/otelkit"
)

// A host traces an agent with one wrapper (the tools) and one option (the
// run). Here the spans go to an in-memory exporter; a real host sets up an
// OTLP exporter and usually the global provider instead.
func Example() {
	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	defer func() { _ = tp.Shutdown(context.Background()) }()

	tools := lt.NewFake(map[string]string{"read_file": "hello", "grep": "a.txt:1: hello"})
	model := lt.NewScriptedModel(nil,
		lt.CallTools(lt.Call("read_file", nil), lt.Call("grep", nil)),
		lt.Reply("The file says hello."))
	_, _, err := agentloop.Run(context.Background(), []agentloop.Message{agentloop.UserMessage("What does a.txt say?")}, model.Send,
		agentloop.Options{
			Resolver: otelkit.Instrument(tools, otelkit.WithTracerProvider(tp)),
			Tracer:   otelkit.Agent("reader", otelkit.WithTracerProvider(tp), otelkit.WithModel("gpt-4.1")),
		})
	if err != nil {
		fmt.Println(err)
		return
	}
	var lines []string
	for _, s := range exp.GetSpans() {
		lines = append(lines, fmt.Sprintf("%s (%s)", s.Name, s.SpanKind))
	}
	slices.Sort(lines)
	for _, l := range lines {
		fmt.Println(l)
	}
	// Output:
	// chat gpt-4.1 (client)
	// chat gpt-4.1 (client)
	// execute_tool grep (internal)
	// execute_tool read_file (internal)
	// invoke_agent reader (internal)
}

// A tool call's arguments and result are recorded only on request,
// redacted like the audit trail's.
func ExampleWithCaptureContent() {
	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	defer func() { _ = tp.Shutdown(context.Background()) }()

	login := llmtoolkit.MustTool("login", "Logs in.", map[string]any{"type": "object"})
	login.SensitiveFields = []string{"password"}
	tools := (&lt.Fake{}).Add(login, func(context.Context, llmtoolkit.Call) (string, error) { return "welcome", nil })
	r := otelkit.Instrument(tools, otelkit.WithTracerProvider(tp), otelkit.WithCaptureContent())
	llmtoolkit.Execute(context.Background(), r, llmtoolkit.Call{Name: "login", Arguments: map[string]any{"user": "ada", "password": "hunter22"}})

	for _, kv := range exp.GetSpans()[0].Attributes {
		if kv.Key == "gen_ai.tool.call.arguments" || kv.Key == "gen_ai.tool.call.result" {
			fmt.Println(kv.Key, kv.Value.AsString())
		}
	}
	// Output:
	// gen_ai.tool.call.arguments {"password":"[REDACTED]","user":"ada"}
	// gen_ai.tool.call.result welcome
}
