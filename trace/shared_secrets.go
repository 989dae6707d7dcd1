package trace

import (
	"context"
	"crypto/aes"
	"crypto/cipher"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/llmtoolkit/llmtoolkit/internal/redact"
)

// SecretsTable is the table where [WithSharedSecrets] keeps the secrets
// recorded in each conversation, sealed, in the schema of the traces table
// (created by [Migrate] when given WithSharedSecrets).
const SecretsTable = "tool_trace_secrets"

// SharedSecretsKeySize is the size of [WithSharedSecrets]' key.
const SharedSecretsKeySize = 32

// ErrSharedSecrets is wrapped by the errors of [WithSharedSecrets]: a key
// of the wrong size (every call is refused before it runs, as an
// unattributed one), a secret that could not be kept in [SecretsTable]
// (the call is refused before it runs), or the conversation's secrets that
// could not be read or opened (the row is not written: logged, counted as
// failed, given to [WithOnError]).
var ErrSharedSecrets = errors.New("trace: shared secrets")

// WithSharedSecrets makes the Recorders that share a database share the
// secrets they scrub: a secret recorded in one call (a sensitive
// argument, see [Record]) is scrubbed from the later rows of its
// conversation whichever Recorder writes them, a replica's or a restarted
// host's. Each Recorder keeps the secrets of a call in [SecretsTable]
// before the tool runs, and reads the conversation's most recent 64
// before it writes a row, so a job's output read through another replica
// after the call that gave the secret is scrubbed of it.
//
// A secret is never stored in clear: the table holds, per tenant,
// conversation and secret, its HMAC-SHA-256 digest (the key, for
// duplicates) and the secret sealed with AES-256-GCM (a random nonce,
// the tenant and conversation as additional data, so a sealed secret
// moved to another conversation does not open), both under keys derived
// from key. key is the hosts' own ([SharedSecretsKeySize] bytes, from a
// secret store, the same for every replica; not stored anywhere by the
// Recorder): whoever reads the database without it learns neither the
// secrets nor whether two conversations share one. A row that cannot be
// opened (another key) fails the row's write, never silently.
//
// The cost is one indexed read per row and one upsert per call that has
// secrets, on the caller's goroutine (with [WithAsync] too). The table is
// not insert-only: delete a conversation's rows with its traces. Call
// [Migrate] with the option first (it reads it only to create the table):
// without the table no row is written, each failure logged and counted.
func WithSharedSecrets(key []byte) Option {
	return func(c *config) {
		c.sharedKey = slices.Clone(key)
		c.sharedSecrets = true
	}
}

// sealer seals and opens a conversation's secrets (WithSharedSecrets).
type sealer struct {
	aead   cipher.AEAD
	macKey []byte
}

// newSealer derives the sealing and digest keys from key.
func newSealer(key []byte) (*sealer, error) {
	if len(key) != SharedSecretsKeySize {
		return nil, fmt.Errorf("%w: the key has %d bytes, not %d", ErrSharedSecrets, len(key), SharedSecretsKeySize)
	}
	derive := func(label string) []byte {
		m := hmac.New(sha256.New, key)
		m.Write([]byte("llmtoolkit/trace shared secrets: " + label))
		return m.Sum(nil)
	}
	block, err := aes.NewCipher(derive("seal"))
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrSharedSecrets, err)
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrSharedSecrets, err)
	}
	return &sealer{aead: aead, macKey: derive("digest")}, nil
}

// scope is the additional data of k's secrets: tenant and conversation.
func (k convKey) scope() []byte {
	return []byte(fmt.Sprintf("%d:%s%d:%s", len(k.tenant), k.tenant, len(k.conversation), k.conversation))
}

// digest names secret in k's conversation.
func (s *sealer) digest(k convKey, secret string) string {
	m := hmac.New(sha256.New, s.macKey)
	m.Write(k.scope())
	m.Write([]byte(secret))
	return hex.EncodeToString(m.Sum(nil))
}

// seal returns secret sealed for k's conversation.
func (s *sealer) seal(k convKey, secret string) (string, error) {
	nonce := make([]byte, s.aead.NonceSize())
	if _, err := rand.Read(nonce); err != nil {
		return "", err
	}
	return base64.StdEncoding.EncodeToString(s.aead.Seal(nonce, nonce, []byte(secret), k.scope())), nil
}

// open returns the secret sealed for k's conversation.
func (s *sealer) open(k convKey, sealed string) (string, error) {
	b, err := base64.StdEncoding.DecodeString(sealed)
	if err != nil || len(b) < s.aead.NonceSize() {
		return "", fmt.Errorf("%w: a sealed secret of the conversation is malformed", ErrSharedSecrets)
	}
	n := s.aead.NonceSize()
	plain, err := s.aead.Open(nil, b[:n], b[n:], k.scope())
	if err != nil {
		return "", fmt.Errorf("%w: a secret of the conversation does not open with this key (do the replicas share one?)", ErrSharedSecrets)
	}
	return string(plain), nil
}

// secretsTable is the table of t's schema holding the shared secrets.
func (rec *Recorder) secretsTable(t table) string {
	q := quoter{rec.db}
	return q.in(t, SecretsTable)
}

// keepable returns the secrets a conversation keeps (as convSecrets.note).
func keepable(secrets []string) []string {
	var keep []string
	for _, s := range withTrimmed(secrets) {
		if len(s) >= redact.MinSecretLen && len(s) <= maxConvSecretBytes && !slices.Contains(keep, s) {
			keep = append(keep, s)
		}
	}
	return keep
}

// share keeps p's secrets not kept yet in the shared table.
func (rec *Recorder) share(ctx context.Context, p *pending) error {
	if rec.sealer == nil || rec.db == nil || p.table == nil || p.unwritable != nil {
		return nil
	}
	k := convKey{p.conv.tenantID, p.conv.conversationID}
	var fresh []string
	for _, s := range keepable(p.secrets) {
		if !slices.Contains(p.shared, s) {
			fresh = append(fresh, s)
		}
	}
	if len(fresh) == 0 {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), rec.cfg.writeTimeout)
	defer cancel()
	now := time.Now().UnixNano()
	stmt := `INSERT INTO ` + rec.secretsTable(*p.table) + ` (tenant_id, conversation_id, digest, sealed, noted_at) VALUES (?, ?, ?, ?, ?)` +
		` ON CONFLICT (tenant_id, conversation_id, digest) DO UPDATE SET noted_at = excluded.noted_at`
	for _, s := range fresh {
		sealed, err := rec.sealer.seal(k, s)
		if err != nil {
			return fmt.Errorf("%w: sealing a secret: %w", ErrSharedSecrets, err)
		}
		if err := rec.db.WithContext(ctx).Exec(stmt, k.tenant, k.conversation, rec.sealer.digest(k, s), sealed, now).Error; err != nil {
			return fmt.Errorf("%w: keeping a secret of the call in %s: %w", ErrSharedSecrets, SecretsTable, err)
		}
		p.shared = append(p.shared, s)
	}
	return nil
}

// sharedSeen returns the most recent secrets of p's conversation that the
// Recorders sharing the database kept.
func (rec *Recorder) sharedSeen(ctx context.Context, p *pending) ([]string, error) {
	if rec.sealer == nil || rec.db == nil || p.table == nil {
		return nil, nil
	}
	k := convKey{p.conv.tenantID, p.conv.conversationID}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), rec.cfg.writeTimeout)
	defer cancel()
	var sealed []string
	err := rec.db.WithContext(ctx).Raw(`SELECT sealed FROM `+rec.secretsTable(*p.table)+
		` WHERE tenant_id = ? AND conversation_id = ? ORDER BY noted_at DESC LIMIT ?`, k.tenant, k.conversation, maxConvSecrets).
		Scan(&sealed).Error
	if err != nil {
		return nil, fmt.Errorf("%w: reading the conversation's secrets from %s: %w", ErrSharedSecrets, SecretsTable, err)
	}
	out := make([]string, 0, len(sealed))
	for _, s := range sealed {
		plain, err := rec.sealer.open(k, s)
		if err != nil {
			return nil, err
		}
		out = append(out, plain)
	}
	return out, nil
}

// secretsSchema returns the statement that creates the shared secrets'
// table in t's schema.
func secretsSchema(q quoter, t table, dialect string) string {
	at := "integer"
	if dialect == "postgres" {
		at = "bigint"
	}
	return `CREATE TABLE IF NOT EXISTS ` + q.in(t, SecretsTable) + ` (
  tenant_id       text NOT NULL,
  conversation_id text NOT NULL,
  digest          text NOT NULL,
  sealed          text NOT NULL,
  noted_at        ` + at + ` NOT NULL,
  PRIMARY KEY (tenant_id, conversation_id, digest)
)`
}
