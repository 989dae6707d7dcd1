package trace_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gorm.io/gorm"

	"github.com/llmtoolkit/llmtoolkit/trace"
)

const (
	tenant  = "0b6d3c1e-3f4a-4c2b-9f1e-1a2b3c4d5e6f"
	convA   = "5f0c2a9e-8d7b-4e6f-a1b2-c3d4e5f60718"
	convB   = "9a8b7c6d-5e4f-4a3b-8c2d-1e0f9a8b7c6d"
	tenant2 = "11111111-2222-4333-8444-555555555555"
)

func validAttrs() trace.Attrs {
	return trace.Attrs{
		TenantID: tenant, ConversationID: convA, ToolName: "read_file",
		Arguments:  map[string]any{"path": "a.go"},
		Result:     map[string]any{"content": "package a"},
		ResultType: trace.ResultOK, DurationMS: 3, Iteration: 1,
	}
}

func TestNew(t *testing.T) {
	tests := []struct {
		name   string
		edit   func(*trace.Attrs)
		fields []string // invalid fields, in order; nil means valid
	}{
		{"valid", func(*trace.Attrs) {}, nil},
		{"error result", func(a *trace.Attrs) { a.ResultType = trace.ResultError }, nil},
		{"nil json", func(a *trace.Attrs) { a.Arguments, a.Result = nil, nil }, nil},
		{"upper-case uuid accepted", func(a *trace.Attrs) { a.TenantID = strings.ToUpper(tenant) }, nil},
		{"missing everything", func(a *trace.Attrs) { *a = trace.Attrs{} },
			[]string{"tenant_id", "conversation_id", "tool_name", "result_type"}},
		{"bad uuids", func(a *trace.Attrs) { a.ID, a.TenantID, a.ConversationID = "x", "not-a-uuid", "1234" },
			[]string{"id", "tenant_id", "conversation_id"}},
		{"bad result type", func(a *trace.Attrs) { a.ResultType = "success" }, []string{"result_type"}},
		{"negative numbers", func(a *trace.Attrs) { a.DurationMS, a.Iteration = -1, -2 },
			[]string{"duration_ms", "iteration"}},
		{"unencodable arguments", func(a *trace.Attrs) { a.Arguments = map[string]any{"ch": make(chan int)} },
			[]string{"arguments"}},
		{"blank tool name", func(a *trace.Attrs) { a.ToolName = "  " }, []string{"tool_name"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := validAttrs()
			tt.edit(&a)
			tr, err := trace.New(a)
			if tt.fields == nil {
				require.NoError(t, err)
				assert.Len(t, tr.ID, 36)
				assert.Equal(t, tenant, tr.TenantID, "UUIDs are canonical (lower case)")
				assert.Equal(t, time.UTC, tr.InsertedAt.Location())
				assert.Equal(t, tr.InsertedAt, tr.InsertedAt.Truncate(time.Microsecond))
				assert.NotNil(t, tr.Arguments)
				assert.NotNil(t, tr.Result)
				return
			}
			require.Error(t, err)
			assert.Nil(t, tr)
			assert.ErrorIs(t, err, trace.ErrInvalid)
			var ve *trace.ValidationError
			require.True(t, errors.As(err, &ve))
			var got []string
			for _, f := range ve.Fields {
				got = append(got, f.Field)
				assert.Contains(t, err.Error(), f.Field+" "+f.Message)
			}
			assert.Equal(t, tt.fields, got)
		})
	}
}

func TestNewCopiesArgumentsInJSONForm(t *testing.T) {
	args := map[string]any{"n": 3, "list": []string{"a", "b"}, "nul": "a\x00b"}
	tr, err := trace.New(trace.Attrs{TenantID: tenant, ConversationID: convA, ToolName: "t",
		ResultType: trace.ResultOK, Arguments: args})
	require.NoError(t, err)
	assert.Equal(t, trace.JSON{"n": float64(3), "list": []any{"a", "b"}, "nul": "a\uFFFDb"}, tr.Arguments)
	tr.Arguments["n"] = 4
	assert.Equal(t, 3, args["n"], "the caller's map is not shared")
}

func TestRoundTrip(t *testing.T) {
	forEachDB(t, func(t *testing.T, db *gorm.DB) {
		a := validAttrs()
		a.Arguments = map[string]any{
			"path": "dir/ü.go", "n": 42, "f": 1.5, "big": 1e300, "ok": true, "none": nil,
			"nested": map[string]any{"list": []any{1, "two", map[string]any{"three": 3.25}}, "empty": map[string]any{}},
			"nul":    "x\x00y", "quote": `"\'` + "\n\t", "emoji": "🦫",
		}
		a.Result = map[string]any{"content": strings.Repeat("line\n", 100)}
		a.InsertedAt = time.Date(2025, 3, 4, 5, 6, 7, 123456789, time.FixedZone("X", 3600))
		want, err := trace.New(a)
		require.NoError(t, err)
		require.NoError(t, db.Create(want).Error)

		got, err := trace.List(t.Context(), db, trace.Filter{})
		require.NoError(t, err)
		require.Len(t, got, 1)
		assert.Equal(t, *want, got[0])
		assert.Equal(t, time.Date(2025, 3, 4, 4, 6, 7, 123456000, time.UTC), got[0].InsertedAt)

		var byID trace.Trace
		require.NoError(t, db.First(&byID, "id = ?", want.ID).Error)
		assert.Equal(t, *want, byID)
	})
}

func TestCreateValidatesHandBuiltTraces(t *testing.T) {
	forEachDB(t, func(t *testing.T, db *gorm.DB) {
		err := db.Create(&trace.Trace{TenantID: "nope", ToolName: "x", ResultType: "ok"}).Error
		require.ErrorIs(t, err, trace.ErrInvalid)
		assert.ErrorContains(t, err, "tenant_id")
		assert.ErrorContains(t, err, "conversation_id")

		hand := &trace.Trace{TenantID: tenant, ConversationID: convA, ToolName: "x", ResultType: "ok",
			Arguments: trace.JSON{"s": "a\x00b"}}
		require.NoError(t, db.Create(hand).Error)
		assert.Len(t, hand.ID, 36, "an ID is generated")
		assert.False(t, hand.InsertedAt.IsZero())
		got, err := trace.List(t.Context(), db, trace.Filter{})
		require.NoError(t, err)
		require.Len(t, got, 1)
		assert.Equal(t, trace.JSON{"s": "a\uFFFDb"}, got[0].Arguments)
		assert.Equal(t, trace.JSON{}, got[0].Result)
	})
}
