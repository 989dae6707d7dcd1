// Package temporal runs agentloop.Run as a Temporal workflow (Temporal's Go
// SDK, go.temporal.io/sdk), so that an agent run survives a crash, a
// restart and a long wait. See the package documentation below [Workflow].
package temporal
