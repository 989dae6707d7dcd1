package trace_test

import (
	"testing"

	"gorm.io/gorm"

	"github.com/llmtoolkit/llmtoolkit/trace"
)

// FuzzJSONRoundTrip checks that any string, as a key or a value, comes back
// from the database as New gave it.
func FuzzJSONRoundTrip(f *testing.F) {
	f.Add("plain")
	f.Add("nul\x00byte")
	f.Add("invalid \xff utf8")
	f.Add(`\u0000 "quoted" \\`)
	f.Add("🦫\n\t\r")
	dbs := []*gorm.DB{openSQLite(f)}
	if pg := postgresIfSet(f); pg != nil {
		dbs = append(dbs, pg)
	}
	f.Fuzz(func(t *testing.T, s string) {
		want, err := trace.New(trace.Attrs{TenantID: tenant, ConversationID: convA, ToolName: "t",
			ResultType: trace.ResultOK, Arguments: map[string]any{"s": s, s: []any{s}}, Result: map[string]any{"content": s}})
		if err != nil {
			t.Fatal(err)
		}
		for _, db := range dbs {
			if err := db.Create(want).Error; err != nil {
				t.Fatalf("%s: %v", db.Dialector.Name(), err)
			}
			var got trace.Trace
			if err := db.First(&got, "id = ?", want.ID).Error; err != nil {
				t.Fatal(err)
			}
			if !equalJSON(want.Arguments, got.Arguments) || !equalJSON(want.Result, got.Result) {
				t.Fatalf("%s: got %#v %#v, want %#v %#v", db.Dialector.Name(), got.Arguments, got.Result, want.Arguments, want.Result)
			}
		}
	})
}

func equalJSON(a, b trace.JSON) bool {
	x, _ := a.Value()
	y, _ := b.Value()
	return x == y
}

// postgresIfSet opens PostgreSQL when the suite has it, else returns nil.
func postgresIfSet(tb testing.TB) *gorm.DB {
	if !postgresEnabled() {
		return nil
	}
	return openPostgres(tb)
}
