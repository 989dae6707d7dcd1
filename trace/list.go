package trace

import (
	"context"
	"errors"
	"fmt"
	"time"

	"gorm.io/gorm"
)

// Filter selects traces for [List]. Zero fields select everything.
type Filter struct {
	// TenantID keeps the traces of one tenant (a UUID).
	TenantID string
	// ConversationID keeps the traces of one conversation (a UUID).
	ConversationID string
	// ToolName keeps the traces of one tool.
	ToolName string
	// ParentID keeps the steps of one recipe call (its trace's ID).
	ParentID string
	// CallID keeps the trace of one tool call, by the model's call id
	// ([llmtoolkit.Call.ID]); with ConversationID it uses the call_id index.
	CallID string
	// Since keeps traces inserted at or after this time.
	Since time.Time
	// Until keeps traces inserted before this time.
	Until time.Time
	// Limit caps the number of traces returned; 0 means no cap.
	Limit int
}

// List returns the traces that match f, newest first. Traces made in the
// same microsecond are ordered by ID, which for generated (version 7) IDs is
// the order in which they were made.
//
// It reads [DefaultTable], the table named by [WithTable], or the one that
// [WithTableFrom]'s function picks for ctx; the other options are ignored.
func List(ctx context.Context, db *gorm.DB, f Filter, opts ...Option) ([]Trace, error) {
	if db == nil {
		return nil, errors.New("trace: List needs a *gorm.DB, got nil")
	}
	var tbl table
	if len(opts) > 0 {
		c := newConfig(opts)
		static, err := c.staticTable()
		if tbl, err = c.chooseTable(ctx, static, err); err != nil {
			return nil, fmt.Errorf("trace: List: %w", err)
		}
	} else {
		tbl = defaultTable
	}
	var fe []FieldError
	if msg := uuidField(&f.TenantID, false); msg != "" {
		fe = append(fe, FieldError{"tenant_id", msg})
	}
	if msg := uuidField(&f.ConversationID, false); msg != "" {
		fe = append(fe, FieldError{"conversation_id", msg})
	}
	if msg := uuidField(&f.ParentID, false); msg != "" {
		fe = append(fe, FieldError{"parent_id", msg})
	}
	if f.Limit < 0 {
		fe = append(fe, FieldError{"limit", fmt.Sprintf("must not be negative (got %d; 0 means no limit)", f.Limit)})
	}
	if !f.Since.IsZero() && !f.Until.IsZero() && !f.Until.After(f.Since) {
		fe = append(fe, FieldError{"until", fmt.Sprintf("must be after since (%s), got %s", f.Since.Format(time.RFC3339Nano), f.Until.Format(time.RFC3339Nano))})
	}
	if fe != nil {
		return nil, fmt.Errorf("trace: List: bad filter: %w", &ValidationError{Fields: fe})
	}

	q := db.WithContext(ctx).Model(&Trace{})
	if tbl = tbl.on(db.Dialector.Name()); !tbl.isDefault() {
		q = q.Table(tbl.String()) // validated: gorm quotes each part
	}
	if f.TenantID != "" {
		q = q.Where("tenant_id = ?", f.TenantID)
	}
	if f.ConversationID != "" {
		q = q.Where("conversation_id = ?", f.ConversationID)
	}
	if f.ParentID != "" {
		q = q.Where("parent_id = ?", f.ParentID)
	}
	if f.ToolName != "" {
		q = q.Where("tool_name = ?", cleanText(f.ToolName)) // as it was stored
	}
	if f.CallID != "" {
		q = q.Where("call_id = ?", cleanText(f.CallID)) // as it was stored
	}
	// Times are compared in UTC at microsecond precision, as they are
	// stored (SQLite compares the stored text).
	if !f.Since.IsZero() {
		q = q.Where("inserted_at >= ?", f.Since.UTC().Truncate(time.Microsecond))
	}
	if !f.Until.IsZero() {
		q = q.Where("inserted_at < ?", f.Until.UTC().Truncate(time.Microsecond))
	}
	q = q.Order("inserted_at DESC").Order("id DESC")
	if f.Limit > 0 {
		q = q.Limit(f.Limit)
	}
	var out []Trace
	if err := q.Find(&out).Error; err != nil {
		return nil, fmt.Errorf("trace: listing traces in %s: %w", tbl, err)
	}
	return out, nil
}
