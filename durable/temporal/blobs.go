package temporal

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strings"

	"github.com/llmtoolkit/llmtoolkit"
	"github.com/llmtoolkit/llmtoolkit/agentloop"
)

// BlobScheme starts the URL of a part whose bytes were kept out of the
// run's payloads ([Activities].Blobs): "llmtoolkit-blob:sha256-HEX". The
// part keeps its kind, media type and name; the model activity puts the
// bytes back before it calls the model, and [ResolveParts] does for a
// host that reads [RunOutput].History.
const BlobScheme = "llmtoolkit-blob:"

// MaxBlobBytes caps what [DirBlobs] reads back for one blob.
const MaxBlobBytes = 64 << 20

// ErrBlobNotFound is wrapped by the error of [BlobStore].Get for a key
// the store does not hold.
var ErrBlobNotFound = errors.New("llmtoolkit: no blob with this key")

// BlobStore keeps the bytes of big parts (images, documents) out of
// Temporal's payloads: the tool activity puts them there and records a
// reference ([BlobScheme]) in the history instead; the model activity
// gets them back. Keys are content addresses ("sha256-" and the hex
// SHA-256 of the bytes), so a retried or replayed Put writes the same
// blob. Every worker of a task queue must reach the same store (a shared
// folder, an object store). Put and Get may be called concurrently.
type BlobStore interface {
	// Put stores data under key.
	Put(ctx context.Context, key string, data []byte) error
	// Get returns the bytes stored under key; an error wrapping
	// [ErrBlobNotFound] when there are none.
	Get(ctx context.Context, key string) ([]byte, error)
}

// DirBlobs returns a [BlobStore] that keeps each blob in a file of dir
// (created if missing, mode 0700; files 0600), named after its key. The
// files are opened through an [os.Root] on dir, so no key or link leads
// out of it; a blob is written to a temporary file and renamed, so a
// reader never sees half of one; Get reads at most [MaxBlobBytes]. The
// host removes the files when the runs that refer to them are over
// (blobs are shared by the runs that attached the same bytes).
func DirBlobs(dir string) BlobStore { return dirBlobs(dir) }

type dirBlobs string

// blobKey returns the key of data.
func blobKey(data []byte) string {
	sum := sha256.Sum256(data)
	return "sha256-" + hex.EncodeToString(sum[:])
}

// checkKey accepts the keys blobKey makes, and nothing else.
func checkKey(key string) error {
	h, ok := strings.CutPrefix(key, "sha256-")
	if ok && len(h) == 2*sha256.Size {
		if _, err := hex.DecodeString(h); err == nil && strings.ToLower(h) == h {
			return nil
		}
	}
	return fmt.Errorf("llmtoolkit: %q is not a blob key (sha256- and 64 lowercase hex digits)", key)
}

func (d dirBlobs) root() (*os.Root, error) {
	if err := os.MkdirAll(string(d), 0o700); err != nil {
		return nil, fmt.Errorf("llmtoolkit: the blob folder: %w", err)
	}
	return os.OpenRoot(string(d))
}

func (d dirBlobs) Put(ctx context.Context, key string, data []byte) (err error) {
	if err := checkKey(key); err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	r, err := d.root()
	if err != nil {
		return err
	}
	defer r.Close()
	if fi, err := r.Lstat(key); err == nil && fi.Mode().IsRegular() && fi.Size() == int64(len(data)) {
		return nil // content-addressed: the same bytes are there
	}
	tmp := key + ".tmp-" + strings.ToLower(rand.Text()[:12])
	f, err := r.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return fmt.Errorf("llmtoolkit: writing blob %s: %w", key, err)
	}
	defer func() {
		if err != nil {
			_ = r.Remove(tmp)
		}
	}()
	_, werr := f.Write(data)
	serr := f.Sync()
	if err := errors.Join(werr, serr, f.Close()); err != nil {
		return fmt.Errorf("llmtoolkit: writing blob %s: %w", key, err)
	}
	if err := r.Rename(tmp, key); err != nil {
		return fmt.Errorf("llmtoolkit: writing blob %s: %w", key, err)
	}
	return nil
}

func (d dirBlobs) Get(ctx context.Context, key string) ([]byte, error) {
	if err := checkKey(key); err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	r, err := d.root()
	if err != nil {
		return nil, err
	}
	defer r.Close()
	f, err := r.Open(key)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("%w: %s in %s", ErrBlobNotFound, key, string(d))
	}
	if err != nil {
		return nil, fmt.Errorf("llmtoolkit: reading blob %s: %w", key, err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, MaxBlobBytes+1))
	if err != nil {
		return nil, fmt.Errorf("llmtoolkit: reading blob %s: %w", key, err)
	}
	if len(data) > MaxBlobBytes {
		return nil, fmt.Errorf("llmtoolkit: blob %s is larger than %d bytes (MaxBlobBytes)", key, MaxBlobBytes)
	}
	if blobKey(data) != key {
		return nil, fmt.Errorf("llmtoolkit: blob %s does not hold the bytes its key names (changed or truncated)", key)
	}
	return data, nil
}

// blobRef returns the key a part's URL refers to, if it is a reference.
func blobRef(p llmtoolkit.Part) (string, bool) {
	if len(p.Data) > 0 {
		return "", false
	}
	return strings.CutPrefix(p.URL, BlobScheme)
}

// ResolveParts returns msgs with the bytes of each part that refers to a
// blob ([BlobScheme]) read back from store: what the model activity sends
// the model, and what a host that reads [RunOutput].History with
// references needs before handing it to another model or run. msgs is
// not changed; the messages without references are shared. A reference
// with no store, or whose blob is missing, is an error.
func ResolveParts(ctx context.Context, store BlobStore, msgs []agentloop.Message) ([]agentloop.Message, error) {
	var out []agentloop.Message
	for i := range msgs {
		var parts []llmtoolkit.Part
		for j, p := range msgs[i].Parts {
			key, ok := blobRef(p)
			if !ok {
				continue
			}
			if store == nil {
				return nil, fmt.Errorf("llmtoolkit: message %d refers to blob %s, and no BlobStore is set (Activities.Blobs)", i, key)
			}
			data, err := store.Get(ctx, key)
			if err != nil {
				return nil, fmt.Errorf("llmtoolkit: message %d: %w", i, err)
			}
			if parts == nil {
				parts = append([]llmtoolkit.Part(nil), msgs[i].Parts...)
			}
			p.URL, p.Data = "", data
			parts[j] = p
		}
		if parts == nil {
			continue
		}
		if out == nil {
			out = append([]agentloop.Message(nil), msgs...)
		}
		out[i].Parts = parts
	}
	if out == nil {
		return msgs, nil
	}
	return out, nil
}
