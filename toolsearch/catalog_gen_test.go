package toolsearch_test

import (
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/llmtoolkit/llmtoolkit"
	"github.com/llmtoolkit/llmtoolkit/codetools"
)

// updateCatalog writes testdata/catalog.json again from the sources below:
// go test ./toolsearch -run TestCatalogIsGenerated -update-catalog
var updateCatalog = flag.Bool("update-catalog", false, "write testdata/catalog.json again")

// catalogTool is one tool of the fixture catalog, as stored.
type catalogTool struct {
	Name        string         `json:"name"`
	Description string         `json:"description"`
	Parameters  map[string]any `json:"parameters"`
	Source      string         `json:"source"` // codetools, mcp:SERVER, lookalike:SERVICE
}

// mcpServers are the tools of the MCP reference servers (and of the
// archived ones that hosts still run), prefixed with the server's name as
// hosts that compose servers do. Args are "name: description" entries.
var mcpServers = []struct {
	server string
	tools  [][]string // name, description, args...
}{
	{"filesystem", [][]string{
		{"read_text_file", "Read the complete contents of a file from the file system as text. Handles various text encodings. Use head or tail to read only the first or last lines.", "path: Path of the file to read", "head: If provided, returns only the first N lines of the file", "tail: If provided, returns only the last N lines of the file"},
		{"read_media_file", "Read an image or audio file. Returns the base64 encoded data and MIME type.", "path: Path of the media file"},
		{"read_multiple_files", "Read the contents of multiple files simultaneously. More efficient than reading files one by one when you need to analyze or compare several files.", "paths: Paths of the files to read"},
		{"write_file", "Create a new file or completely overwrite an existing file with new content. Use with caution as it will overwrite existing files without warning.", "path: Path of the file to write", "content: The new content of the file"},
		{"edit_file", "Make line-based edits to a text file. Each edit replaces exact line sequences with new content. Returns a git-style diff showing the changes made.", "path: Path of the file to edit", "edits: List of edits, each with oldText and newText", "dryRun: Preview changes using git-style diff format"},
		{"create_directory", "Create a new directory or ensure a directory exists. Can create multiple nested directories in one operation.", "path: Path of the directory to create"},
		{"list_directory", "Get a detailed listing of all files and directories in a specified path. Results distinguish between files and directories with [FILE] and [DIR] prefixes.", "path: Path of the directory to list"},
		{"list_directory_with_sizes", "Get a detailed listing of all files and directories in a specified path, including sizes. Results can be sorted by name or size.", "path: Path of the directory to list", "sortBy: Sort entries by name or size"},
		{"directory_tree", "Get a recursive tree view of files and directories as a JSON structure, with name, type and children.", "path: Root of the tree", "excludePatterns: Glob patterns to leave out"},
		{"move_file", "Move or rename files and directories. Can move files between directories and rename them in a single operation. Fails if the destination exists.", "source: Path to move", "destination: New path"},
		{"search_files", "Recursively search for files and directories matching a pattern. Searches through all subdirectories from the starting path.", "path: Starting directory", "pattern: Glob pattern the names must match", "excludePatterns: Glob patterns to leave out"},
		{"get_file_info", "Retrieve detailed metadata about a file or directory: size, creation time, last modified time, permissions and type.", "path: Path of the file or directory"},
		{"list_allowed_directories", "Returns the list of directories that this server is allowed to access."},
	}},
	{"git", [][]string{
		{"git_status", "Shows the working tree status of a git repository.", "repo_path: Path to the Git repository"},
		{"git_diff_unstaged", "Shows changes in the working directory that are not yet staged.", "repo_path: Path to the Git repository", "context_lines: Number of context lines"},
		{"git_diff_staged", "Shows changes that are staged for commit.", "repo_path: Path to the Git repository", "context_lines: Number of context lines"},
		{"git_diff", "Shows differences between the current state and a branch or commit.", "repo_path: Path to the Git repository", "target: Branch or commit to compare with"},
		{"git_commit", "Records changes to the repository with a commit message.", "repo_path: Path to the Git repository", "message: Commit message"},
		{"git_add", "Adds file contents to the staging area.", "repo_path: Path to the Git repository", "files: Files to stage"},
		{"git_reset", "Unstages all staged changes.", "repo_path: Path to the Git repository"},
		{"git_log", "Shows the commit logs, optionally between two timestamps.", "repo_path: Path to the Git repository", "max_count: Maximum number of commits", "start_timestamp: Start of the range", "end_timestamp: End of the range"},
		{"git_create_branch", "Creates a new branch from an optional base branch.", "repo_path: Path to the Git repository", "branch_name: Name of the new branch", "base_branch: Branch to start from"},
		{"git_checkout", "Switches branches.", "repo_path: Path to the Git repository", "branch_name: Branch to switch to"},
		{"git_show", "Shows the contents of a commit.", "repo_path: Path to the Git repository", "revision: Commit to show"},
		{"git_branch", "Lists git branches, local, remote or all.", "repo_path: Path to the Git repository", "branch_type: local, remote or all", "contains: Only branches containing this commit"},
	}},
	{"github", [][]string{
		{"create_or_update_file", "Create or update a single file in a GitHub repository.", "owner: Repository owner", "repo: Repository name", "path: Path of the file", "content: Content of the file", "message: Commit message", "branch: Branch to commit to"},
		{"search_repositories", "Search for GitHub repositories.", "query: Search query", "page: Page number"},
		{"create_repository", "Create a new GitHub repository in your account.", "name: Repository name", "description: Repository description", "private: Whether the repository is private"},
		{"get_file_contents", "Get the contents of a file or directory from a GitHub repository.", "owner: Repository owner", "repo: Repository name", "path: Path of the file or directory", "branch: Branch to read"},
		{"push_files", "Push multiple files to a GitHub repository in a single commit.", "owner: Repository owner", "repo: Repository name", "branch: Branch to push to", "files: Files to push", "message: Commit message"},
		{"create_issue", "Create a new issue in a GitHub repository.", "owner: Repository owner", "repo: Repository name", "title: Issue title", "body: Issue body", "labels: Labels to add"},
		{"create_pull_request", "Create a new pull request in a GitHub repository.", "owner: Repository owner", "repo: Repository name", "title: Pull request title", "head: Branch with the changes", "base: Branch to merge into"},
		{"fork_repository", "Fork a GitHub repository to your account or a specified organization.", "owner: Repository owner", "repo: Repository name", "organization: Organization to fork to"},
		{"create_branch", "Create a new branch in a GitHub repository.", "owner: Repository owner", "repo: Repository name", "branch: Name of the new branch", "from_branch: Source branch"},
		{"list_commits", "Get a list of commits of a branch in a GitHub repository.", "owner: Repository owner", "repo: Repository name", "sha: Branch name or commit"},
		{"list_issues", "List issues in a GitHub repository with filtering options.", "owner: Repository owner", "repo: Repository name", "state: open, closed or all", "labels: Labels to filter by"},
		{"update_issue", "Update an existing issue in a GitHub repository.", "owner: Repository owner", "repo: Repository name", "issue_number: Issue number", "title: New title", "state: open or closed"},
		{"add_issue_comment", "Add a comment to an existing issue.", "owner: Repository owner", "repo: Repository name", "issue_number: Issue number", "body: Comment text"},
		{"search_code", "Search for code across GitHub repositories.", "q: Search query"},
		{"search_issues", "Search for issues and pull requests across GitHub repositories.", "q: Search query"},
		{"search_users", "Search for users on GitHub.", "q: Search query"},
		{"get_issue", "Get details of a specific issue in a GitHub repository.", "owner: Repository owner", "repo: Repository name", "issue_number: Issue number"},
		{"get_pull_request", "Get details of a specific pull request.", "owner: Repository owner", "repo: Repository name", "pull_number: Pull request number"},
		{"list_pull_requests", "List and filter repository pull requests.", "owner: Repository owner", "repo: Repository name", "state: open, closed or all"},
		{"create_pull_request_review", "Create a review on a pull request.", "owner: Repository owner", "repo: Repository name", "pull_number: Pull request number", "body: Review text", "event: APPROVE, REQUEST_CHANGES or COMMENT"},
		{"merge_pull_request", "Merge a pull request.", "owner: Repository owner", "repo: Repository name", "pull_number: Pull request number", "merge_method: merge, squash or rebase"},
		{"get_pull_request_files", "Get the list of files changed in a pull request.", "owner: Repository owner", "repo: Repository name", "pull_number: Pull request number"},
		{"get_pull_request_status", "Get the combined status of all status checks for a pull request.", "owner: Repository owner", "repo: Repository name", "pull_number: Pull request number"},
		{"update_pull_request_branch", "Update a pull request branch with the latest changes from the base branch.", "owner: Repository owner", "repo: Repository name", "pull_number: Pull request number"},
		{"get_pull_request_comments", "Get the review comments on a pull request.", "owner: Repository owner", "repo: Repository name", "pull_number: Pull request number"},
		{"get_pull_request_reviews", "Get the reviews on a pull request.", "owner: Repository owner", "repo: Repository name", "pull_number: Pull request number"},
	}},
	{"slack", [][]string{
		{"list_channels", "List public channels in the Slack workspace with pagination.", "limit: Maximum number of channels", "cursor: Pagination cursor"},
		{"post_message", "Post a new message to a Slack channel.", "channel_id: The ID of the channel to post to", "text: The message text to post"},
		{"reply_to_thread", "Reply to a specific message thread in Slack.", "channel_id: The ID of the channel", "thread_ts: The timestamp of the parent message", "text: The reply text"},
		{"add_reaction", "Add a reaction emoji to a Slack message.", "channel_id: The ID of the channel", "timestamp: The timestamp of the message", "reaction: The name of the emoji, without colons"},
		{"get_channel_history", "Get recent messages from a Slack channel.", "channel_id: The ID of the channel", "limit: Number of messages"},
		{"get_thread_replies", "Get all replies in a Slack message thread.", "channel_id: The ID of the channel", "thread_ts: The timestamp of the parent message"},
		{"get_users", "Get a list of all users in the Slack workspace with their basic profile information.", "limit: Maximum number of users", "cursor: Pagination cursor"},
		{"get_user_profile", "Get detailed profile information for a specific Slack user.", "user_id: The ID of the user"},
	}},
	{"postgres", [][]string{
		{"query", "Run a read-only SQL query against the connected PostgreSQL database.", "sql: The SQL query to run"},
	}},
	{"fetch", [][]string{
		{"fetch", "Fetches a URL from the internet and extracts its contents as markdown. Allows the model to access up-to-date information from the web.", "url: URL to fetch", "max_length: Maximum number of characters to return", "start_index: Start returning output at this character index", "raw: Get the actual HTML content without simplification"},
	}},
	{"memory", [][]string{
		{"create_entities", "Create multiple new entities in the knowledge graph.", "entities: Entities to create, each with a name, an entity type and observations"},
		{"create_relations", "Create multiple new relations between entities in the knowledge graph. Relations should be in active voice.", "relations: Relations to create, each with from, to and relationType"},
		{"add_observations", "Add new observations to existing entities in the knowledge graph.", "observations: Observations to add, each with an entity name and contents"},
		{"delete_entities", "Delete multiple entities and their associated relations from the knowledge graph.", "entityNames: Names of the entities to delete"},
		{"delete_observations", "Delete specific observations from entities in the knowledge graph.", "deletions: Observations to delete"},
		{"delete_relations", "Delete multiple relations from the knowledge graph.", "relations: Relations to delete"},
		{"read_graph", "Read the entire knowledge graph."},
		{"search_nodes", "Search for nodes in the knowledge graph based on a query matched against entity names, types and observation content.", "query: The search query"},
		{"open_nodes", "Open specific nodes in the knowledge graph by their names.", "names: Names of the entities to retrieve"},
	}},
	{"time", [][]string{
		{"get_current_time", "Get the current time in a specific timezone.", "timezone: IANA timezone name, such as America/New_York"},
		{"convert_time", "Convert a time between timezones.", "source_timezone: Source IANA timezone name", "time: Time to convert, in 24-hour format HH:MM", "target_timezone: Target IANA timezone name"},
	}},
	{"everything", [][]string{
		{"echo", "Echoes back the input.", "message: Message to echo"},
		{"add", "Adds two numbers.", "a: First number", "b: Second number"},
		{"long_running_operation", "Demonstrates a long running operation with progress updates.", "duration: Duration of the operation in seconds", "steps: Number of steps"},
		{"print_env", "Prints all environment variables, helpful for debugging MCP server configuration."},
		{"sample_llm", "Samples from an LLM using the MCP sampling feature.", "prompt: The prompt to send to the LLM", "maxTokens: Maximum number of tokens to generate"},
		{"get_tiny_image", "Returns the MCP tiny image."},
		{"annotated_message", "Demonstrates how annotations can be used to provide metadata about content.", "messageType: error, success or debug", "includeImage: Whether to include an example image"},
		{"get_resource_reference", "Returns a resource reference that can be used by MCP clients.", "resourceId: ID of the resource to reference"},
	}},
	{"puppeteer", [][]string{
		{"navigate", "Navigate the browser to a URL.", "url: URL to navigate to"},
		{"screenshot", "Take a screenshot of the current page or a specific element.", "name: Name for the screenshot", "selector: CSS selector of the element", "width: Width in pixels", "height: Height in pixels"},
		{"click", "Click an element on the page.", "selector: CSS selector of the element to click"},
		{"fill", "Fill out an input field.", "selector: CSS selector of the input field", "value: Value to fill"},
		{"select", "Select an element on the page with a select tag.", "selector: CSS selector of the element", "value: Value to select"},
		{"hover", "Hover over an element on the page.", "selector: CSS selector of the element to hover"},
		{"evaluate", "Execute JavaScript in the browser console.", "script: JavaScript code to execute"},
	}},
	{"brave", [][]string{
		{"web_search", "Performs a web search using the Brave Search API, ideal for general queries, news, articles and online content.", "query: Search query", "count: Number of results", "offset: Pagination offset"},
		{"local_search", "Searches for local businesses and places using Brave's Local Search API, with addresses, ratings and opening hours.", "query: Local search query, such as pizza near Central Park", "count: Number of results"},
	}},
	{"maps", [][]string{
		{"geocode", "Convert an address into geographic coordinates.", "address: The address to geocode"},
		{"reverse_geocode", "Convert coordinates into an address.", "latitude: Latitude coordinate", "longitude: Longitude coordinate"},
		{"search_places", "Search for places using the Google Places API.", "query: Search query", "location: Optional center point", "radius: Search radius in meters"},
		{"place_details", "Get detailed information about a specific place.", "place_id: The place ID"},
		{"distance_matrix", "Calculate travel distance and time for multiple origins and destinations.", "origins: Origin addresses or coordinates", "destinations: Destination addresses or coordinates", "mode: Travel mode: driving, walking, bicycling or transit"},
		{"elevation", "Get elevation data for locations on the earth.", "locations: Locations to get elevation for"},
		{"directions", "Get directions between two points.", "origin: Starting point", "destination: Ending point", "mode: Travel mode"},
	}},
	{"sqlite", [][]string{
		{"read_query", "Execute a SELECT query on the SQLite database.", "query: SELECT SQL query to execute"},
		{"write_query", "Execute an INSERT, UPDATE, or DELETE query on the SQLite database.", "query: SQL query to execute"},
		{"create_table", "Create a new table in the SQLite database.", "query: CREATE TABLE SQL statement"},
		{"list_tables", "List all tables in the SQLite database."},
		{"describe_table", "Get the schema information for a specific table in the SQLite database.", "table_name: Name of the table to describe"},
		{"append_insight", "Add a business insight to the memo.", "insight: Business insight discovered from data analysis"},
	}},
	{"sequential_thinking", [][]string{
		{"sequentialthinking", "A detailed tool for dynamic and reflective problem-solving through thoughts. Each thought can build on, question, or revise previous insights as understanding deepens.", "thought: Your current thinking step", "nextThoughtNeeded: Whether another thought step is needed", "thoughtNumber: Current thought number", "totalThoughts: Estimated total thoughts needed"},
	}},
	{"sentry", [][]string{
		{"get_sentry_issue", "Retrieve and analyze a Sentry issue by ID or URL, with its stack trace.", "issue_id_or_url: Sentry issue ID or URL to analyze"},
	}},
	{"gdrive", [][]string{
		{"search", "Search for files in Google Drive.", "query: Search query"},
	}},
	{"redis", [][]string{
		{"set", "Set a Redis key-value pair with an optional expiration.", "key: Redis key", "value: Value to store", "expireSeconds: Optional expiration time in seconds"},
		{"get", "Get the value of a key from Redis.", "key: Redis key to retrieve"},
		{"delete", "Delete one or more keys from Redis.", "key: Key or list of keys to delete"},
		{"list", "List Redis keys matching a pattern.", "pattern: Pattern to match keys"},
	}},
	{"aws_kb", [][]string{
		{"retrieve_from_aws_kb", "Performs retrieval from the AWS Knowledge Base using the provided query and knowledge base ID.", "query: The query to perform retrieval on", "knowledgeBaseId: The ID of the AWS Knowledge Base", "n: Number of results"},
	}},
	{"everart", [][]string{
		{"generate_image", "Generate images using EverArt models and return a link to view them.", "prompt: Text description of the desired image", "model: Model ID", "image_count: Number of images to generate"},
	}},
}

// lookalike families: services of one kind share operations, so their
// names and descriptions differ only in the service's name.
var lookalikes = []struct {
	services []string // name prefix and display name, "jira:Jira"
	ops      [][]string
}{
	{[]string{"jira:Jira", "linear:Linear", "gitlab:GitLab", "bitbucket:Bitbucket", "asana:Asana", "youtrack:YouTrack", "clickup:ClickUp", "azure_devops:Azure DevOps", "shortcut:Shortcut", "redmine:Redmine"}, [][]string{
		{"create_issue", "Create a new issue in {S} with a title, a description and optional labels.", "project: The {S} project key", "title: Issue title", "description: Issue description", "labels: Labels to set"},
		{"get_issue", "Get one {S} issue with its fields, status and comments.", "issue_id: The {S} issue ID"},
		{"list_issues", "List the issues of a {S} project, filtered by status or assignee.", "project: The {S} project key", "status: Status to filter by", "assignee: Assignee to filter by"},
		{"update_issue", "Update the fields of a {S} issue: title, description, priority or status.", "issue_id: The {S} issue ID", "fields: Fields to change"},
		{"close_issue", "Close or resolve a {S} issue.", "issue_id: The {S} issue ID", "resolution: Why it is closed"},
		{"add_comment", "Add a comment to a {S} issue.", "issue_id: The {S} issue ID", "body: Comment text"},
		{"search_issues", "Search {S} issues with a text query.", "query: Text to search for", "limit: Maximum number of issues"},
		{"assign_issue", "Assign a {S} issue to a user.", "issue_id: The {S} issue ID", "assignee: User to assign"},
	}},
	{[]string{"discord:Discord", "teams:Microsoft Teams", "mattermost:Mattermost", "telegram:Telegram", "zulip:Zulip", "rocketchat:Rocket.Chat", "google_chat:Google Chat"}, [][]string{
		{"send_message", "Send a message to a {S} channel.", "channel: The {S} channel ID", "text: Message text"},
		{"list_channels", "List the channels of the {S} workspace.", "limit: Maximum number of channels"},
		{"get_channel_messages", "Get the recent messages of a {S} channel.", "channel: The {S} channel ID", "limit: Number of messages"},
		{"reply_in_thread", "Reply to a message thread in {S}.", "channel: The {S} channel ID", "thread_id: ID of the thread", "text: Reply text"},
		{"add_reaction", "React to a {S} message with an emoji.", "channel: The {S} channel ID", "message_id: ID of the message", "emoji: Emoji name"},
		{"get_user", "Get the profile of a {S} user.", "user_id: The {S} user ID"},
	}},
	{[]string{"s3:Amazon S3", "gcs:Google Cloud Storage", "azure_blob:Azure Blob Storage", "dropbox:Dropbox", "box:Box", "onedrive:OneDrive", "gdrive:Google Drive"}, [][]string{
		{"upload_file", "Upload a local file to {S}.", "local_path: Path of the local file", "remote_path: Destination in {S}"},
		{"download_file", "Download a file from {S} to a local path.", "remote_path: Path in {S}", "local_path: Where to save it"},
		{"list_files", "List the files and folders under a path in {S}.", "prefix: Folder or prefix to list"},
		{"delete_file", "Delete a file from {S}.", "remote_path: Path in {S}"},
		{"get_file_metadata", "Get the size, type and modification time of a file in {S}.", "remote_path: Path in {S}"},
		{"create_folder", "Create a folder in {S}.", "remote_path: Path of the new folder"},
		{"share_file", "Create a share link for a file in {S}.", "remote_path: Path in {S}", "expires_in: Link lifetime in seconds"},
	}},
	{[]string{"mysql:MySQL", "mariadb:MariaDB", "mongodb:MongoDB", "bigquery:BigQuery", "snowflake:Snowflake", "clickhouse:ClickHouse", "dynamodb:DynamoDB", "cassandra:Cassandra", "elasticsearch:Elasticsearch", "duckdb:DuckDB"}, [][]string{
		{"run_query", "Run a query against the {S} database and return the rows.", "query: The query to run", "limit: Maximum number of rows"},
		{"list_tables", "List the tables (or collections) of the {S} database.", "database: Database name"},
		{"describe_table", "Describe the columns and types of a {S} table.", "table: Table name"},
		{"insert_rows", "Insert rows into a {S} table.", "table: Table name", "rows: Rows to insert"},
		{"export_table", "Export a {S} table to a CSV file.", "table: Table name", "path: Where to write the CSV"},
	}},
	{[]string{"gmail:Gmail", "outlook:Outlook", "fastmail:Fastmail"}, [][]string{
		{"send_email", "Send an email from your {S} account.", "to: Recipients", "subject: Subject line", "body: Email body"},
		{"search_emails", "Search the emails of your {S} mailbox.", "query: Search query", "limit: Maximum number of emails"},
		{"read_email", "Read one email of your {S} mailbox with its attachments list.", "message_id: The {S} message ID"},
		{"create_draft", "Create a draft email in {S} without sending it.", "to: Recipients", "subject: Subject line", "body: Email body"},
	}},
	{[]string{"google_calendar:Google Calendar", "outlook_calendar:Outlook Calendar", "caldav:CalDAV"}, [][]string{
		{"create_event", "Create an event in {S} with a title, start and end time and attendees.", "title: Event title", "start: Start time", "end: End time", "attendees: Emails of the attendees"},
		{"list_events", "List the events of a {S} calendar between two dates.", "from: Start date", "to: End date"},
		{"delete_event", "Delete an event from {S}.", "event_id: The {S} event ID"},
		{"find_free_slots", "Find free time slots shared by several people in {S}.", "attendees: Emails of the people", "duration_minutes: Length of the meeting"},
	}},
	{[]string{"datadog:Datadog", "pagerduty:PagerDuty", "grafana:Grafana", "newrelic:New Relic", "prometheus:Prometheus", "opsgenie:Opsgenie", "honeycomb:Honeycomb"}, [][]string{
		{"list_alerts", "List the active alerts in {S}.", "status: Alert status to filter by"},
		{"get_incident", "Get the details and timeline of a {S} incident.", "incident_id: The {S} incident ID"},
		{"acknowledge_incident", "Acknowledge a {S} incident so that escalation stops.", "incident_id: The {S} incident ID"},
		{"resolve_incident", "Resolve a {S} incident.", "incident_id: The {S} incident ID", "note: Resolution note"},
		{"query_metrics", "Query a {S} metric time series over a time range.", "query: Metric query", "from: Start time", "to: End time"},
		{"search_logs", "Search the logs collected by {S}.", "query: Log query", "from: Start time", "to: End time"},
		{"create_incident", "Open a new incident in {S}.", "title: Incident title", "severity: Incident severity"},
	}},
	{[]string{"salesforce:Salesforce", "hubspot:HubSpot", "zendesk:Zendesk", "intercom:Intercom", "stripe:Stripe", "shopify:Shopify"}, [][]string{
		{"create_contact", "Create a contact (customer record) in {S}.", "email: Contact email", "name: Contact name"},
		{"search_contacts", "Search the contacts stored in {S}.", "query: Name, email or company"},
		{"update_deal", "Update a deal or opportunity in {S}: stage, amount, close date.", "deal_id: The {S} deal ID", "fields: Fields to change"},
		{"create_ticket", "Create a support ticket in {S}.", "subject: Ticket subject", "description: Ticket description", "requester: Requester email"},
		{"list_invoices", "List the invoices of a customer in {S}.", "customer_id: The {S} customer ID"},
		{"refund_payment", "Refund a payment made through {S}.", "payment_id: The {S} payment ID", "amount: Amount to refund"},
		{"create_customer", "Create a customer account in {S}.", "email: Customer email", "name: Customer name"},
	}},
	{[]string{"kubernetes:Kubernetes", "docker:Docker", "aws_ec2:AWS EC2", "gcp_compute:GCP Compute Engine", "azure_vm:Azure Virtual Machines", "nomad:Nomad", "fly:Fly.io", "heroku:Heroku"}, [][]string{
		{"list_instances", "List the running workloads (instances, containers, pods) in {S}.", "filter: Filter expression"},
		{"get_logs", "Get the logs of a workload running in {S}.", "id: Workload ID", "tail: Number of lines from the end"},
		{"restart", "Restart a workload in {S}.", "id: Workload ID"},
		{"scale", "Scale a {S} deployment to a number of replicas.", "id: Deployment ID", "replicas: Number of replicas"},
		{"start_instance", "Start a stopped workload in {S}.", "id: Workload ID"},
		{"stop_instance", "Stop a running workload in {S}.", "id: Workload ID"},
		{"deploy", "Deploy a new version of an application to {S}.", "image: Image or artifact to deploy", "id: Application ID"},
		{"exec", "Run a command inside a workload in {S}.", "id: Workload ID", "command: Command to run"},
	}},
	{[]string{"notion:Notion", "confluence:Confluence", "coda:Coda", "google_docs:Google Docs", "obsidian:Obsidian"}, [][]string{
		{"create_page", "Create a page in {S} with a title and content.", "parent: Parent page or space", "title: Page title", "content: Page content in Markdown"},
		{"search_pages", "Search the pages of {S} by text.", "query: Text to search for"},
		{"update_page", "Replace the content of a {S} page.", "page_id: The {S} page ID", "content: New content in Markdown"},
		{"get_page", "Read a {S} page as Markdown.", "page_id: The {S} page ID"},
		{"append_block", "Append a paragraph or a list to a {S} page.", "page_id: The {S} page ID", "content: Content to append"},
	}},
}

// schemaFrom builds an object schema of "name: description" entries.
func schemaFrom(args []string, service string) map[string]any {
	props := map[string]any{}
	var required []any
	for _, a := range args {
		name, desc, _ := strings.Cut(a, ": ")
		desc = strings.ReplaceAll(desc, "{S}", service)
		typ := "string"
		switch name {
		case "limit", "count", "page", "max_count", "head", "tail", "replicas", "n", "image_count", "max_length", "start_index",
			"issue_number", "pull_number", "context_lines", "duration", "steps", "width", "height", "radius", "expires_in",
			"duration_minutes", "a", "b", "offset", "expireSeconds", "maxTokens", "thoughtNumber", "totalThoughts", "latitude", "longitude", "amount":
			typ = "number"
		case "labels", "files", "paths", "edits", "entities", "relations", "observations", "entityNames", "deletions", "names",
			"excludePatterns", "attendees", "rows", "origins", "destinations", "locations", "to":
			typ = "array"
		case "private", "raw", "dryRun", "includeImage", "nextThoughtNeeded":
			typ = "boolean"
		case "fields":
			typ = "object"
		}
		p := map[string]any{"type": typ, "description": desc}
		if typ == "array" {
			p["items"] = map[string]any{"type": "string"}
		}
		props[name] = p
		if len(required) == 0 {
			required = append(required, name)
		}
	}
	s := map[string]any{"type": "object", "properties": props}
	if len(required) > 0 {
		s["required"] = required
	}
	return s
}

// buildCatalog assembles the fixture catalog.
func buildCatalog(t *testing.T) []catalogTool {
	t.Helper()
	ct, err := codetools.New(t.TempDir())
	require.NoError(t, err)
	var out []catalogTool
	for _, tool := range ct.Tools() {
		out = append(out, catalogTool{tool.Name, tool.Description, tool.Parameters, "codetools"})
	}
	for _, s := range mcpServers {
		for _, tl := range s.tools {
			name := s.server + "_" + tl[0]
			if strings.HasPrefix(tl[0], s.server) {
				name = tl[0]
			}
			out = append(out, catalogTool{name, tl[1], schemaFrom(tl[2:], ""), "mcp:" + s.server})
		}
	}
	for _, fam := range lookalikes {
		for _, svc := range fam.services {
			prefix, display, _ := strings.Cut(svc, ":")
			for _, op := range fam.ops {
				out = append(out, catalogTool{prefix + "_" + op[0], strings.ReplaceAll(op[1], "{S}", display), schemaFrom(op[2:], display), "lookalike:" + prefix})
			}
		}
	}
	return out
}

// TestCatalogIsGenerated: testdata/catalog.json is what buildCatalog
// makes (run with -update-catalog to write it again), it has at least 400
// tools, each a valid definition with a unique name.
func TestCatalogIsGenerated(t *testing.T) {
	built := buildCatalog(t)
	if *updateCatalog {
		data, err := json.MarshalIndent(built, "", " ")
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(filepath.Join("testdata", "catalog.json"), append(data, '\n'), 0o644))
	}
	stored := loadCatalog(t)
	// codetools' descriptions depend on the machine (bash names its
	// sandbox): compare their names only.
	require.Len(t, stored, len(built), "testdata/catalog.json is stale: run with -update-catalog")
	for i := range built {
		if built[i].Source == "codetools" {
			require.Equal(t, built[i].Name, stored[i].Name)
			continue
		}
		require.Equal(t, built[i], stored[i], "testdata/catalog.json is stale: run with -update-catalog")
	}

	require.GreaterOrEqual(t, len(built), 400)
	seen := map[string]bool{}
	for _, c := range built {
		require.False(t, seen[c.Name], "duplicate name %s", c.Name)
		seen[c.Name] = true
		_, err := llmtoolkit.NewTool(c.Name, c.Description, c.Parameters)
		require.NoError(t, err, c.Name)
	}
	t.Logf("catalog: %d tools", len(built))
}
