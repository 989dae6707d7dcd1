package dbos_test

import (
	"context"
	"log"
	"net/http"
	"os"

	"github.com/llmtoolkit/llmtoolkit/codetools"
	durable "github.com/llmtoolkit/llmtoolkit/durable/dbos"
	"github.com/llmtoolkit/llmtoolkit/mcp"
)

// One replica of an MCP server whose bash calls run as tasks that every
// replica reads from one PostgreSQL database and that survive the death
// of the replica running them: each replica has its own executor ID (here
// from its host name), the same database, and goes behind any load
// balancer. The order matters: the store, the handler (which binds the
// store), then Launch (which runs again the interrupted tasks of this
// executor).
func ExampleTaskStore() {
	ctx := context.Background()
	host, _ := os.Hostname()
	store, err := durable.NewTaskStore(ctx, durable.TaskStoreConfig{
		DatabaseURL: os.Getenv("DATABASE_URL"), // postgres://... shared by the replicas
		ExecutorID:  "mcp-" + host,
	})
	if err != nil {
		log.Fatal(err)
	}
	code, err := codetools.New("/srv/work")
	if err != nil {
		log.Fatal(err)
	}
	h := mcp.Handler(code, mcp.WithTaskStore(store),
		mcp.WithTaskTools(map[string]mcp.TaskSupport{"bash": mcp.TaskOptional}))
	if err := store.Launch(); err != nil {
		log.Fatal(err)
	}
	log.Fatal(http.ListenAndServe(":8080", h))
}
