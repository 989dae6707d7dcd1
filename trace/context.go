package trace

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"strconv"

	"github.com/llmtoolkit/llmtoolkit"
)

type conversationKey struct{}

type conversation struct {
	tenantID, conversationID string
	iteration                int
}

// WithConversation returns a context that names the tenant, the
// conversation (both UUIDs) and the agent loop's iteration of the calls made
// with it: the IDs a [Recorder] writes on each trace.
func WithConversation(ctx context.Context, tenantID, conversationID string, iteration int) context.Context {
	return context.WithValue(ctx, conversationKey{}, conversation{tenantID, conversationID, iteration})
}

// Session map keys read by a [Recorder] when the context has no
// [WithConversation].
const (
	SessionTenantID       = "tenant_id"
	SessionConversationID = "conversation_id"
	SessionIteration      = "iteration"
)

// conversationFrom finds the IDs of a call: from [WithConversation], else
// from the session map ([llmtoolkit.Scope].Session). A field it cannot read
// is reported as a FieldError.
func conversationFrom(ctx context.Context) (conversation, []FieldError) {
	if c, ok := ctx.Value(conversationKey{}).(conversation); ok {
		return c, nil
	}
	var c conversation
	var fe []FieldError
	s := llmtoolkit.ScopeFrom(ctx).Session
	if s == nil {
		return c, nil // New reports the missing IDs
	}
	for _, f := range []struct {
		key string
		dst *string
	}{{SessionTenantID, &c.tenantID}, {SessionConversationID, &c.conversationID}} {
		switch v := s[f.key].(type) {
		case nil:
		case string:
			*f.dst = v
		case fmt.Stringer: // uuid.UUID and the like
			*f.dst = v.String()
		default:
			fe = append(fe, FieldError{f.key, fmt.Sprintf("must be a UUID string in the session, got %T", v)})
		}
	}
	if v, ok := s[SessionIteration]; ok && v != nil {
		n, ok := toInt(v)
		if !ok {
			fe = append(fe, FieldError{SessionIteration, fmt.Sprintf("must be a non-negative integer in the session, got %v (%T)", v, v)})
		}
		c.iteration = n
	}
	return c, fe
}

// toInt reads an integer of any of the types a session map may hold.
func toInt(v any) (int, bool) {
	switch x := v.(type) {
	case int:
		return x, true
	case int8:
		return int(x), true
	case int16:
		return int(x), true
	case int32:
		return int(x), true
	case int64:
		return int(x), x >= math.MinInt && x <= math.MaxInt
	case uint:
		return int(x), x <= math.MaxInt
	case uint8:
		return int(x), true
	case uint16:
		return int(x), true
	case uint32:
		return int(x), uint64(x) <= math.MaxInt
	case uint64:
		return int(x), x <= math.MaxInt
	case float64:
		return int(x), x == math.Trunc(x) && math.Abs(x) < 1<<53
	case float32:
		return int(x), float64(x) == math.Trunc(float64(x)) && math.Abs(float64(x)) < 1<<24
	case json.Number:
		n, err := strconv.Atoi(string(x))
		return n, err == nil
	case string:
		n, err := strconv.Atoi(x)
		return n, err == nil
	}
	return 0, false
}

// CheckSession reports session values the Recorder cannot attribute calls
// with: a tenant_id or conversation_id that is missing while the other is
// given, or that is not a UUID, or an iteration that is not a non-negative
// integer. A map with neither ID is fine here: [WithConversation] or
// [WithDefaultConversation] may name them at call time. [llmtoolkit.PrepareSession]
// calls it for the tools the Recorder observes, and [llmtoolkit.Session.Err]
// returns its error. It implements [llmtoolkit.SessionChecker].
func (rec *Recorder) CheckSession(values map[string]any) error {
	_, hasTenant := values[SessionTenantID]
	_, hasConversation := values[SessionConversationID]
	_, hasIteration := values[SessionIteration]
	if !hasTenant && !hasConversation && !hasIteration {
		return nil
	}
	c, fe := conversationFrom(llmtoolkit.WithScope(context.Background(), func(sc *llmtoolkit.Scope) { sc.Session = values }))
	if !hasTenant && !hasConversation && len(fe) == 0 {
		return nil
	}
	if err := checkConversation(c, fe); err != nil {
		return fmt.Errorf("%w: the session map given to llmtoolkit.PrepareSession: %w (the audit trail needs UUIDs: uuid.NewString() makes one; keep the same conversation_id for every turn of a conversation)", ErrUnattributed, err)
	}
	return nil
}
