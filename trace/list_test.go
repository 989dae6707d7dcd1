package trace_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gorm.io/gorm"

	"github.com/llmtoolkit/llmtoolkit/trace"
)

func TestList(t *testing.T) {
	forEachDB(t, func(t *testing.T, db *gorm.DB) {
		base := time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)
		rows := []struct {
			tenant, conv, tool string
			at                 time.Duration // after base
		}{
			{tenant, convA, "read_file", 0},                         // 0: a whole second
			{tenant, convA, "grep", 500 * time.Millisecond},         // 1
			{tenant, convA, "read_file", 450 * time.Millisecond},    // 2
			{tenant, convA, "read_file", 1*time.Second + 1},         // 3: 1 ns is cut to 0 µs
			{tenant, convB, "read_file", 1*time.Second + 5000},      // 4: 5 µs
			{tenant2, convA, "read_file", 10 * time.Second},         // 5
			{tenant, convA, "bash", -90 * time.Minute},              // 6
			{tenant, convA, "read_file", 999999 * time.Microsecond}, // 7
		}
		ids := make([]string, len(rows))
		for i, r := range rows {
			tr, err := trace.New(trace.Attrs{TenantID: r.tenant, ConversationID: r.conv, ToolName: r.tool,
				ResultType: trace.ResultOK, InsertedAt: base.Add(r.at)})
			require.NoError(t, err)
			require.NoError(t, db.Create(tr).Error)
			ids[i] = tr.ID
		}
		pick := func(is ...int) []string {
			out := make([]string, len(is))
			for j, i := range is {
				out[j] = ids[i]
			}
			return out
		}
		tests := []struct {
			name string
			f    trace.Filter
			want []string
		}{
			{"all, newest first", trace.Filter{}, pick(5, 4, 3, 7, 1, 2, 0, 6)},
			{"tenant", trace.Filter{TenantID: tenant2}, pick(5)},
			{"conversation", trace.Filter{TenantID: tenant, ConversationID: convA}, pick(3, 7, 1, 2, 0, 6)},
			{"tool", trace.Filter{ToolName: "read_file", ConversationID: convA}, pick(5, 3, 7, 2, 0)},
			{"since is inclusive", trace.Filter{Since: base.Add(500 * time.Millisecond)}, pick(5, 4, 3, 7, 1)},
			{"until is exclusive", trace.Filter{Until: base.Add(500 * time.Millisecond)}, pick(2, 0, 6)},
			{"since and until, any zone", trace.Filter{
				Since: base.Add(time.Second).In(time.FixedZone("Y", -5*3600)),
				Until: base.Add(2 * time.Second).In(time.FixedZone("Z", 9*3600))}, pick(4, 3)},
			{"limit", trace.Filter{Limit: 2}, pick(5, 4)},
			{"nothing", trace.Filter{ToolName: "nope"}, []string{}},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				got, err := trace.List(t.Context(), db, tt.f)
				require.NoError(t, err)
				gotIDs := make([]string, len(got))
				for i, g := range got {
					gotIDs[i] = g.ID
				}
				assert.Equal(t, tt.want, gotIDs)
			})
		}
	})
}

func TestListRejectsBadFilters(t *testing.T) {
	db := openSQLite(t)
	now := time.Now()
	tests := []struct {
		f     trace.Filter
		field string
	}{
		{trace.Filter{TenantID: "x"}, "tenant_id"},
		{trace.Filter{ConversationID: "y"}, "conversation_id"},
		{trace.Filter{Limit: -1}, "limit"},
		{trace.Filter{Since: now, Until: now}, "until"},
	}
	for _, tt := range tests {
		_, err := trace.List(t.Context(), db, tt.f)
		require.ErrorIs(t, err, trace.ErrInvalid)
		assert.ErrorContains(t, err, tt.field)
	}
	_, err := trace.List(t.Context(), nil, trace.Filter{})
	assert.Error(t, err)
}

func TestOpenSQLite(t *testing.T) {
	_, err := trace.OpenSQLite("")
	assert.Error(t, err)
	_, err = trace.OpenSQLite("a.db?mode=ro")
	assert.ErrorContains(t, err, "'?'")

	db := openSQLite(t)
	var mode string
	require.NoError(t, db.Raw("PRAGMA journal_mode").Scan(&mode).Error)
	assert.Equal(t, "wal", mode)
	var timeout int
	require.NoError(t, db.Raw("PRAGMA busy_timeout").Scan(&timeout).Error)
	assert.Equal(t, 10000, timeout)

	mem, err := trace.OpenSQLite(":memory:")
	require.NoError(t, err)
	require.NoError(t, trace.Migrate(mem))
	tr, err := trace.New(validAttrs())
	require.NoError(t, err)
	require.NoError(t, mem.Create(tr).Error)
	assert.EqualValues(t, 1, count(t, mem), "one shared in-memory database")
}
