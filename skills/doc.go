// Package skills gives a model Agent Skills: folders holding a SKILL.md
// (YAML frontmatter, then Markdown instructions) and optional scripts/,
// references/ and assets/, in the open format of agentskills.io. The
// model first sees each skill's name and description, and loads the rest
// when a task calls for it (progressive disclosure).
//
// # Loading
//
// A [Loader] finds skills in the [Source]s a host names, in precedence
// order: folders on disk ([Dir]: a project's ".claude/skills" or
// ".skills", a user's folder) and fs.FS trees ([FS]: an embed.FS). Each
// skill is a folder directly inside a source, holding a SKILL.md; a
// folder without one is not a skill. Every SKILL.md is validated against
// the specification, every rule:
//
//   - name: required, 1 to 64 characters of a-z, 0-9 and hyphens, no
//     hyphen first or last, never two in a row, equal to its folder's name;
//   - description: required, 1 to 1024 characters, not blank;
//   - license: optional text, not blank when given;
//   - compatibility: optional, 1 to 500 characters;
//   - metadata: optional mapping of text keys to text values (a number or
//     a boolean is kept as written: version: 1.0 is "1.0");
//   - allowed-tools: optional, space-separated text (experimental);
//   - no other field (put extra properties under metadata), no field twice.
//
// Each violation is a [*ValidationError] naming the file and the field
// ("…/pdf/SKILL.md: field "name": "PDF" holds 'P': only lowercase letters
// a-z, digits and hyphens are allowed"); all of one file's violations are
// reported together. A refused skill is one of the set's [Set.Problems]
// and never hides the others. Of two skills with one name, the earlier
// source's is kept; a name the host reserves ([WithReservedNames]: its
// tools' names) is refused; both wrap [ErrNameTaken].
//
// [Loader.Load] scans now; [Loader.Current] scans when its last scan is
// older than the reload interval ([WithReloadInterval]). A scan reads a
// SKILL.md again only when its size, time or identity (device, inode,
// change time) changed, so a scan of unchanged skills is one directory
// read and one stat per skill.
//
// # Bounds
//
// A SKILL.md is refused whole, before the YAML parser sees it, when it is
// larger than [DefaultMaxSkillBytes] ([WithMaxSkillBytes]), holds a NUL
// byte or is not UTF-8, or has a frontmatter larger than
// [MaxFrontmatterBytes]. The frontmatter (parsed with go.yaml.in/yaml/v3
// into nodes, never into values, so no alias is ever expanded) is then
// refused if it holds an anchor or an alias (the billion-laughs bomb
// needs them; a skill's fields have no use for them), a merge key, a tag
// outside YAML's core schema, nesting deeper than the fields need (four
// levels), or more than 4096 nodes. Folders are opened through os.Root:
// a skill folder or a SKILL.md that is a link out of its source is
// refused. A loader loads at most [DefaultMaxSkills] ([WithMaxSkills]).
//
// # Disclosure
//
// [Set.Index] is the text for a system prompt: the names and descriptions
// in an <available_skills> block, one line per skill, sorted by name,
// bounded in bytes. A description is the skill author's data, never the
// host's instructions: [Escape] puts it on one line with markup escaped,
// so it cannot close the block or pass for the host's prompt.
//
// [NewTools] gives a conversation two ordinary tools, a
// [llmtoolkit.Resolver] to compose with the host's: activate_skill answers
// with a skill's instructions (in a <skill_content> block), its folder and
// the list of its files (not read), and read_skill_resource with one file,
// confined to the skill's folder (internal/confine: "..", absolute paths
// and links out refused, only regular files, at most
// [DefaultMaxResourceBytes], text only). [WithDeferred] marks them
// deferred, for package toolsearch. Wrapped by trace.Record or
// otelkit.Instrument like any tool, every activation and read leaves its
// row or span. A sub-agent gets [Set.Subset] of the skills in a Toolset
// of its own.
//
// # Skills over MCP
//
// [FromRemote] is a source of the skills a peer serves: package mcp's
// Client.Skills, MCP's skills extension (SEP-2640). Each listed skill is
// checked as a SKILL.md on disk is (its listed frontmatter, every rule)
// and on its listing (a SKILL.md URI, every file inside the skill's
// folder and listed once, sha256 digests, at most [MaxManifestFiles]
// files and [MaxManifestBytes] bytes); nothing is fetched before the
// skill is activated. activate_skill then fetches its SKILL.md and
// refuses it, unused, when its size, digest or frontmatter (field by
// field) is not the listed one ([ErrIntegrity]); read_skill_resource
// fetches one listed file of an active skill, verified the same way.
// The other way, [Skill.Manifest] and [Skill.Frontmatter] are what
// package mcp's WithSkills serves of a loaded skill.
//
// # Scripts and allowed tools
//
// A skill's scripts run through the host's bash tool: give codetools'
// sandbox [Set.Folders] as SandboxPolicy.Readable, and the sandbox reads
// the skills' folders and nothing else added; the model runs
// "bash FOLDER/scripts/NAME.sh", as the activation's answer says. A skill
// of an fs.FS has no folder on disk, so no script of it runs.
//
// With [WithAllowedTools], a skill's allowed-tools narrow the tools while
// it is active: [Toolset.Narrow] wraps the host's resolver in a
// [llmtoolkit.Filter] of the tools the active skills allow (by tool name,
// or by Claude Code's names: Read is read_file, Bash is bash; see
// [WithToolAliases]), read again each turn. An entry's argument pattern
// bounds the tool's commands, decided on what the call runs: a tool that
// declares its commands ([llmtoolkit.Tool.Commands]: codetools' bash, shell,
// exec_command, write_stdin's typed lines, as package agent checks them)
// runs only when each command is one command the active skills' patterns
// name ("git:*": git alone or with arguments; "npm run *": a glob; "git
// status": exactly that), with no shell separator, pipe, substitution,
// redirection or expansion (; & | $ ` < > ( ) { } or a line break);
// anything else is refused ([llmtoolkit.ErrDenied]) naming the command and
// the patterns. An entry without a pattern leaves its tool whole. A tool
// given a pattern that declares no commands ("Read(src/**)") is refused
// while the pattern is in force: its arguments cannot be checked. The
// check is on command text, advisory as package agent's rules on bash
// are (git itself runs hooks, aliases and pagers): pair it with the
// sandbox and the host's permission rules.
package skills
