package otelkit

import (
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"
)

// DefaultMaxContentBytes is the default cap on each of the opted-in
// arguments, result and error texts put on a span (see [WithCaptureContent]).
const DefaultMaxContentBytes = 16 << 10

// Redacted replaces the value of every sensitive argument field, and every
// occurrence of such a value (or of a URL's password) in recorded text, as
// package trace does.
const Redacted = "[REDACTED]"

// Option configures [Instrument] and [Agent]. Options that concern only one
// of them are ignored by the other.
type Option func(*config)

type config struct {
	tp         trace.TracerProvider // nil: the global one
	mp         metric.MeterProvider // nil: the global one
	content    bool
	maxContent int
	fields     []string
	classes    []errorClass
	provider   string
	model      string
}

// errorClass classes the errors matching any of targets.
type errorClass struct {
	class   string
	targets []error
}

func newConfig(opts []Option) config {
	c := config{maxContent: DefaultMaxContentBytes}
	for _, o := range opts {
		if o != nil {
			o(&c)
		}
	}
	if c.maxContent <= 0 {
		c.maxContent = DefaultMaxContentBytes
	}
	return c
}

// WithTracerProvider sets where spans go. The default is the global
// provider (otel.GetTracerProvider), as it is when each span starts: until
// the host sets one, nothing is traced, at no cost.
func WithTracerProvider(tp trace.TracerProvider) Option {
	return func(c *config) { c.tp = tp }
}

// WithMeterProvider sets where the metrics go: gen_ai.execute_tool.duration
// ([Instrument]), gen_ai.client.operation.duration and
// gen_ai.client.token.usage ([Agent]). The default is the global provider
// (otel.GetMeterProvider): until the host sets one, nothing is measured, at
// no cost.
func WithMeterProvider(mp metric.MeterProvider) Option {
	return func(c *config) { c.mp = mp }
}

// WithCaptureContent puts each tool call's arguments (gen_ai.tool.call.arguments,
// as JSON) and, when it succeeds, its result (gen_ai.tool.call.result) on
// its span ([Instrument]). They may hold private data, so this is off by
// default. The arguments are redacted exactly as package trace redacts them:
// the fields named by the tool's [llmtoolkit.Tool.SensitiveFields] and by
// [WithRedactFields] become [Redacted], and their values, as well as every
// URL's password, are scrubbed from the arguments, the result and the error
// text. Each text is capped at [WithMaxContentBytes].
func WithCaptureContent() Option {
	return func(c *config) { c.content = true }
}

// WithMaxContentBytes caps each text put on a span: the arguments and the
// result (with [WithCaptureContent]), the error message (the span status) and
// the tool's description. A longer text is cut on a UTF-8 boundary and ends
// with "…[N bytes cut]". 0 or less means [DefaultMaxContentBytes].
func WithMaxContentBytes(n int) Option {
	return func(c *config) { c.maxContent = n }
}

// WithRedactFields names argument fields redacted for every tool, in addition
// to each tool's own [llmtoolkit.Tool.SensitiveFields], with the same rules
// as package trace's option of that name: a plain name matches that key at
// any depth, a dotted name that exact path (arrays passed through), both
// without regard to case.
func WithRedactFields(names ...string) Option {
	return func(c *config) { c.fields = append(c.fields, names...) }
}

// WithErrorClass sets the error.type of tool calls whose error matches any of
// targets (errors.Is) to class, before the built-in classes are tried (see
// [Instrument]). For example, a host using codetools classes its
// confinement refusals as denied:
//
//	otelkit.WithErrorClass(otelkit.ClassDenied, codetools.ErrOutsideRoot, codetools.ErrBlockedAddress)
//
// Keep classes few and fixed: they are a metric attribute.
func WithErrorClass(class string, targets ...error) Option {
	return func(c *config) {
		if class != "" && len(targets) > 0 {
			c.classes = append(c.classes, errorClass{class: class, targets: targets})
		}
	}
}

// WithProviderName sets gen_ai.provider.name on the agent's spans ([Agent]):
// the model provider as the GenAI conventions name it ("openai",
// "anthropic", "gcp.gemini", ...). The conventions require it; agentloop
// knows no provider, so the host says it. Unset, it is inferred from an
// answer's provider state when there is some (see [Agent]), else left out.
func WithProviderName(name string) Option {
	return func(c *config) { c.provider = name }
}

// WithModel sets gen_ai.request.model on the agent's spans and names its
// chat spans "chat MODEL" ([Agent]); unset, they are named "chat".
func WithModel(model string) Option {
	return func(c *config) { c.model = model }
}
