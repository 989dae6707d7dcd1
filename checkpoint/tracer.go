package checkpoint

import "context"

// Tracer is told of every Save and Rewind of a [Checkpointer] (package
// otelkit's Checkpoints makes spans of them). StartCheckpoint is called
// as op ("save" or "rewind") begins, with the root's name; the function it
// returns is called once, when op ends.
type Tracer interface {
	StartCheckpoint(ctx context.Context, op, root string) (context.Context, func(Outcome))
}

// Outcome is how a Save or a Rewind ended.
type Outcome struct {
	// ID is the checkpoint saved (for a rewind: the one rewound to), Kind
	// its kind.
	ID   string
	Kind Kind
	// Entries counts the paths recorded; Hashed the files read because
	// they had moved; StoredBytes the bytes of the new blobs.
	Entries, Hashed int
	StoredBytes     int64
	// Changes and Skipped count a rewind's changes and what it could not
	// restore.
	Changes, Skipped int
	// DryRun marks a rewind that wrote nothing.
	DryRun bool
	// Err is the operation's error, or nil.
	Err error
}

// WithTracer tells t of every Save and Rewind.
func WithTracer(t Tracer) Option { return func(c *config) { c.tracer = t } }

func (c *Checkpointer) start(ctx context.Context, op string) (context.Context, func(Outcome)) {
	if c.tracer == nil {
		return ctx, func(Outcome) {}
	}
	return c.tracer.StartCheckpoint(ctx, op, c.name)
}
