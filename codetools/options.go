package codetools

// Option configures [New].
type Option func(*config)

// config holds every limit and switch of the tools. Each tool's file adds
// the fields it needs, with their defaults in defaultConfig.
type config struct {
	readMaxLines int        // read_file: lines per call
	readMaxBytes int        // read_file: bytes per call
	maxEditBytes int64      // edit_file, multi_edit: largest file they load
	diffContext  int        // lines of context around each change in a diff
	diffMaxLines int        // lines of diff shown to the model
	listLimit    int        // list_directory: default entry limit
	treeDepth    int        // tree: default depth
	treeLimit    int        // tree: default entry limit
	treeMaxScan  int        // tree: entries walked to sum folder sizes
	grepMaxBytes int        // grep and glob: cap of their answers in bytes
	bash         bashConfig // bash and its sandbox: options_bash.go, options_sandbox.go
	http         httpConfig // http_get: options_http.go
	lsp          lspConfig  // language servers: options_lsp.go
	jobs         jobsConfig // background jobs and terminals: options_jobs.go

	applyPatch    bool   // WithApplyPatch: the 13th tool
	shell         bool   // WithShell: the Responses API's shell over bash's engine
	nativeOpenAI  bool   // WithModelTools for GPT-5: apply_patch and shell declared native
	textEditor    bool   // WithTextEditor: Anthropic's text editor
	textEditorMax int    // its view's cap in bytes
	memoryDir     string // WithMemory: the memory tool's folder, relative to the root

	mediaMaxBytes  int64 // read_file, http_get: largest image or PDF (read_file_media.go)
	mediaMaxPixels int64 // read_file, http_get: most pixels an image header may claim
}

func defaultConfig() config {
	return config{
		readMaxLines: 2000,
		readMaxBytes: 50 << 10,
		maxEditBytes: 64 << 20,
		diffContext:  3,
		diffMaxLines: 200,
		listLimit:    500,
		treeDepth:    3,
		treeLimit:    1000,
		treeMaxScan:  200_000,
		grepMaxBytes: 50 << 10,
		bash:         defaultBashConfig(),
		http:         defaultHTTPConfig(),

		mediaMaxBytes:  DefaultMediaMaxBytes,
		mediaMaxPixels: DefaultMediaMaxPixels,
	}
}

// WithReadLimits sets how much one read_file call returns: at most
// maxLines lines and maxBytes bytes, whichever comes first (defaults 2,000
// lines and 50 KiB). A value <= 0 keeps the default.
func WithReadLimits(maxLines, maxBytes int) Option {
	return func(c *config) {
		if maxLines > 0 {
			c.readMaxLines = maxLines
		}
		if maxBytes > 0 {
			c.readMaxBytes = maxBytes
		}
	}
}

// WithMaxEditSize sets the largest file edit_file and multi_edit load
// (default 64 MiB); larger files are refused with an error. A value <= 0
// keeps the default.
func WithMaxEditSize(n int64) Option {
	return func(c *config) {
		if n > 0 {
			c.maxEditBytes = n
		}
	}
}

// WithDiffLimits sets the diffs edit_file, multi_edit and write_file show:
// contextLines unchanged lines around each change (default 3, 0 allowed)
// and at most maxLines lines in all (default 200; <= 0 keeps it).
func WithDiffLimits(contextLines, maxLines int) Option {
	return func(c *config) {
		if contextLines >= 0 {
			c.diffContext = contextLines
		}
		if maxLines > 0 {
			c.diffMaxLines = maxLines
		}
	}
}

// WithListLimit sets list_directory's default entry limit (default 500),
// used when a call gives none. A value <= 0 keeps the default.
func WithListLimit(n int) Option {
	return func(c *config) {
		if n > 0 {
			c.listLimit = n
		}
	}
}

// WithTreeLimits sets tree's defaults, used when a call gives none: depth
// levels of folders (default 3) and at most limit entries (default 1,000).
// A value <= 0 keeps the default.
func WithTreeLimits(depth, limit int) Option {
	return func(c *config) {
		if depth > 0 {
			c.treeDepth = depth
		}
		if limit > 0 {
			c.treeLimit = limit
		}
	}
}

// WithTreeMaxScan bounds how many entries tree walks to sum the sizes of
// the folders it shows (default 200,000); past it, sizes are lower bounds
// and tree says so. A value <= 0 keeps the default.
func WithTreeMaxScan(n int) Option {
	return func(c *config) {
		if n > 0 {
			c.treeMaxScan = n
		}
	}
}

// WithGrepMaxBytes sets the largest answer grep and glob give, in bytes
// (50 KiB unless set). Hosts that post-process matches themselves may
// raise it.
func WithGrepMaxBytes(n int) Option {
	return func(c *config) {
		if n > 0 {
			c.grepMaxBytes = n
		}
	}
}
