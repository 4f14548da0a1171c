// The public agent documents, generated from the registry and PUBLIC_URL so that a new
// tool or another deployment address shows up without editing any text.
import type { Registry, ToolContract } from '../core/operations.ts'
import { keyKindNames, keyKinds } from '../db/keys.ts'
import { Errors } from '../core/errors.ts'

/** What each error of the catalogue means to a caller; typed so that a new error needs its line here. */
const errorMeanings: Record<keyof typeof Errors, string> = {
  InvalidArguments: 'an argument is missing, unknown or of the wrong type or value; `details` names each (`path`, `message`)',
  InvalidJson: 'the body is not JSON',
  Unauthorized: 'no key, a malformed or mistyped key, an unknown, revoked or expired key, or a key of a kind this endpoint does not take (the message says which kinds it takes)',
  Forbidden: 'the key may not do this: a read-only key asked to write, a key narrowed to another project, or your role is too low',
  ReviewAccessRequired: 'reading or changing the review pipeline needs the reviewer or owner role in the project (a read-only key counts as viewer)',
  NotFound: 'no such project, opportunity, memory or tool — or not one you can reach',
  MethodNotAllowed: 'the path exists but not with this method (the `Allow` header lists the right one)',
  Conflict: 'the change clashes with existing data (e.g. a project slug that is taken), or the opportunity moved past the `if_version` you sent (the message and `details` name its current version: read it again, then retry)',
  PreconditionFailed: 'REST only: the `If-Match` you sent is no longer the opportunity\'s ETag (someone changed it); nothing was changed, the `ETag` header and the message name the current version',
  PayloadTooLarge: 'the body is over the size limit; send less (events in smaller batches)',
  UnsupportedMediaType: 'the body is not sent as `Content-Type: application/json`',
  RateLimited: 'too many requests: wait the `Retry-After` seconds, then retry',
  Internal: 'a fault on our side; nothing was changed half-way — retry later',
  Unavailable: 'the database is unreachable for a moment (a lost connection) or cannot write (a full disk): wait the `Retry-After` seconds (REST), then retry; a read was already tried twice, a write may or may not have been made',
}

/** The error catalogue as table rows: status, code, meaning. */
function errorRows(): string[] {
  return Object.entries(Errors).map(([kind, Ctor]) => {
    const err = new Ctor('') as Error & { statusCode: number; code: string }
    return `| ${err.statusCode} | \`${err.code.replace(/^GD_/, '').toLowerCase()}\` | ${errorMeanings[kind as keyof typeof Errors]} |`
  })
}

/** A tool's argument names from its input schema: required plain, optional with `?`. */
export function argumentNames(tool: ToolContract): string {
  const properties = Object.keys(tool.input_schema.properties ?? {})
  const required = new Set<string>(tool.input_schema.required ?? [])
  return properties.length ? properties.map((p) => `\`${p}${required.has(p) ? '' : '?'}\``).join(', ') : 'none'
}

/** The first sentence of a description (the one-line summaries of tool lists). */
export const firstSentence = (text: string): string => (/^.*?[.!?](\s|$)/.exec(text)?.[0] ?? text).trim()

/** `exampleOf`: a tool's example arguments (the registry's `exampleArgs`), shown beside it. */
export function skillMarkdown(url: string, tools: ToolContract[], exampleOf: (name: string) => Record<string, unknown> | undefined = () => undefined): string {
  const toolLines = tools.map((t) => {
    const example = exampleOf(t.name)
    return `- \`${t.name}\` — ${firstSentence(t.description)}${t.annotations.readOnlyHint ? '' : ' *(writes)*'}${t.toolset === 'default' ? '' : ` *(${t.toolset} toolset)*`} Arguments: ${argumentNames(t)}.` +
      (example ? ` Example: \`${JSON.stringify(example)}\`` : '')
  })
  return `---
name: growthdesk
description: Review a project's growth opportunities, read its daily metrics, and keep its project card and memories, through growthdesk's tools over REST or MCP.
---

# growthdesk

growthdesk collects growth opportunities for a project, lets the team review them through a
follow-up pipeline, reports daily metrics computed from recorded user events, and keeps a
project card and memories. Everything is a named tool with a JSON Schema, callable over REST
or MCP with the same arguments, results and errors.

## Where

| surface | address |
| --- | --- |
| MCP endpoint (Streamable HTTP, stateless, JSON responses) | \`${url}/mcp\` |
| Tools REST API | \`${url}/v1\` |
| Project-side API | \`${url}/api/v1/mcp\` |
| OpenAPI description | \`${url}/openapi.json\` |
| Growth skill (optional ideas) | \`${url}/skills/growth/SKILL.md\` |

## Authentication

Send \`Authorization: Bearer <key>\` on every request. Keys are created in the console
(\`${url}/console\`: MCP API keys under Profile › MCP Access, service and ingest keys under Keys),
shown once, and stored only as hashes: keep them out of chats, pages and repositories. A key can
be narrowed to one project, to reading only, and to an expiry date.

${keyKinds.map((k) => `- ${keyKindNames[k]}`).join('\n')}

## Which key works where

| key | project-side API \`/api/v1/mcp\` | tools REST API \`/v1/tools\` | MCP \`/mcp\` | events \`POST /v1/events\` |
| --- | --- | --- | --- | --- |
| MCP API key \`gdm_\` | yes | no (401) | yes | yes, with a project |
| service key \`gds_\` | no (401) | yes | yes | yes, with a project |
| ingest key \`gdi_\` | no (401) | no (401) | no (401) | yes: its own project only |
| OAuth access token \`gdo_\` | yes | yes | yes | yes, with a project |

A key acts as the user who created it, never above that user's role (viewer < reviewer <
owner); a read-only key acts as a viewer.

**\`401 This endpoint takes a service key (gds_) …\`** means the key is fine but of the wrong
kind for that address: you sent an MCP API key (\`gdm_\`) to the tools REST API \`/v1/tools\`.
With a \`gdm_\` key use the project-side API or MCP (below); for \`/v1/tools\` create a service
key. Likewise \`This endpoint takes a project-side MCP API key (gdm_) …\` on \`/api/v1/mcp\`
means a service key was sent there.

## First calls, one per key kind

Replace \`my-project\` with your project's slug or id (\`prj_…\`); \`list_projects\` (or the
console) shows them, and a new installation's first project is \`demo-project\`. Put your key
in the variable each example reads first, e.g. \`export GROWTHDESK_MCP_KEY=gdm_…\` (likewise
\`SERVICE_API_KEY\` for \`gds_\`, as the CLI reads it, and \`GROWTHDESK_INGEST_KEY\` for \`gdi_\`).

### MCP API key (\`gdm_\`): the project-side API

\`\`\`sh
curl -s ${url}/api/v1/mcp/projects/my-project/overview \\
  -H "Authorization: Bearer $GROWTHDESK_MCP_KEY"
# → {"project": {...}, "signups": ..., ...}   (the get_overview result)
\`\`\`

Project-side routes (each is the tool of the same name; arguments go in the query for GET and
in a JSON body otherwise):

| method and path | tool |
| --- | --- |
| \`GET /api/v1/mcp/projects/{project}/opportunities\` | \`list_opportunities\` |
| \`POST /api/v1/mcp/projects/{project}/opportunities\` | \`submit_opportunity\` (201 when created) |
| \`PATCH /api/v1/mcp/projects/{project}/opportunities/{event_id}/review\` | \`review_opportunity\` |
| \`GET /api/v1/mcp/projects/{project}/opportunities/{event_id}/history\` | \`get_review_history\` |
| \`GET /api/v1/mcp/projects/{project}/overview\` | \`get_overview\` |
| \`GET /api/v1/mcp/projects/{project}/daily-ops\` | \`get_daily_ops\` |
| \`GET /api/v1/mcp/projects/{project}/daily-event-summary\` | \`get_daily_event_summary\` |
| \`GET /api/v1/mcp/projects/{project}/event-stream\` | \`get_event_stream\` |

### Service key (\`gds_\`): the tools REST API

\`\`\`sh
curl -s -X POST ${url}/v1/tools/get_daily_ops \\
  -H "Authorization: Bearer $SERVICE_API_KEY" -H 'Content-Type: application/json' \\
  -d '{"project": "my-project", "window": "7d"}'
# → {"result": {...}}
\`\`\`

\`curl -s ${url}/v1/tools -H "Authorization: Bearer $SERVICE_API_KEY"\` lists every tool with its
schemas; \`POST /v1/tools/<name>\` calls one with its arguments as the JSON body.

### Ingest key (\`gdi_\`): record events

\`\`\`sh
curl -s -X POST ${url}/v1/events \\
  -H "Authorization: Bearer $GROWTHDESK_INGEST_KEY" -H 'Content-Type: application/json' \\
  -d '{"events": [{"event": "signup", "distinct_id": "user-42"}]}'
# → {"accepted": 1, "duplicates": 0}
\`\`\`

An ingest key records for its own project only. Other keys may record too, naming the project
(\`"project"\` in the body or \`X-Service-Project\`). Events may carry \`uuid\` (a resend is
counted once), \`timestamp\` and \`properties\`.

### MCP (\`gdm_\` or \`gds_\`): JSON-RPC over HTTP

\`\`\`sh
curl -s -X POST ${url}/mcp \\
  -H "Authorization: Bearer $GROWTHDESK_MCP_KEY" \\
  -H 'Content-Type: application/json' \\
  -H 'Accept: application/json, text/event-stream' \\
  -H 'MCP-Protocol-Version: 2025-11-25' \\
  -d '{"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "get_overview", "arguments": {"project": "my-project"}}}'
# → {"jsonrpc": "2.0", "id": 1, "result": {"structuredContent": {...}, "content": [...]}}
\`\`\`

The endpoint is stateless and answers in JSON: no session, so \`tools/list\` and \`tools/call\`
work as first requests (an MCP client may \`initialize\` first as usual). \`Content-Type:
application/json\` is required (else 415); \`Accept\` lists both types as the MCP specification
asks of clients, and the answer is always one JSON response. \`MCP-Protocol-Version\` names the
revision: 2025-03-26, 2025-06-18 and 2025-11-25 work exactly as shown, an unknown one gets 400;
2026-07-28 clients start with \`server/discover\` and send \`_meta\` and the \`Mcp-Method\` /
\`Mcp-Name\` headers with each request. MCP clients that cannot send a key may use
OAuth: the endpoint's 401 points to its metadata.

## Choosing the project

Project tools take \`project\` (the id \`prj_…\` or the slug) in the arguments, or the header
\`X-Service-Project\`. \`list_projects\` tells you which projects you can reach.

## Calling a tool

Over REST, \`POST ${url}/v1/tools/<name>\` with the arguments as the JSON body returns
\`{"result": ...}\`. Over MCP, \`tools/list\` gives the same names and schemas and
\`tools/call\` returns the same result as \`structuredContent\` (and as JSON text).

## Tools

${toolLines.join('\n')}

Full contracts: \`GET ${url}/v1/tools\` (or MCP \`tools/list\`), or call \`discover_tools\`.

Over MCP, \`tools/list\` lists the default toolset, which keeps it small in your context. The
tools marked with another toolset (the owners' administration: webhooks, creating projects,
changing the card) are listed when the MCP URL asks for them: \`${url}/mcp?toolsets=admin\`, or
\`?toolsets=all\`. Every tool can be called by name whatever is listed, and \`discover_tools\`
finds them all.

## Errors

Every failure has the same shape on every surface:

\`\`\`json
{"error": {"code": "invalid_arguments", "message": "Invalid arguments — status: must be one of …", "details": [{"path": "status", "message": "…"}]}}
\`\`\`

| status | code | meaning |
| --- | --- | --- |
${errorRows().join('\n')}

Over MCP a failed call is a result with \`isError: true\` whose text is this object.
`
}

/** The public documents, rendered once per registry and address: the HTTP routes (routes/agent-docs.ts) and MCP (resources, skills, the prompt) serve these very texts. */
export interface AgentDocuments {
  skill: string
  growthSkill: string
  llms: string
}

const rendered = new WeakMap<Registry, Map<string, AgentDocuments>>()

/** The agent documents of a (sealed) registry at `url`: made on first use, then the same strings. */
export function agentDocuments(url: string, registry: Registry): AgentDocuments {
  let byUrl = rendered.get(registry)
  if (!byUrl) rendered.set(registry, (byUrl = new Map()))
  let docs = byUrl.get(url)
  if (!docs) {
    const tools = registry.contracts()
    docs = { skill: skillMarkdown(url, tools, (name) => registry.exampleArgs(name)[0]), growthSkill: growthSkillMarkdown(url), llms: llmsTxt(url, tools) }
    byUrl.set(url, docs)
  }
  return docs
}

export function growthSkillMarkdown(url: string): string {
  return `---
name: growthdesk-growth
description: Optional exploration ideas for growth work with growthdesk's tools. Ideas only; it never changes tool inputs and imposes no workflow.
---

# Growth skill (optional)

Ideas for exploring a project's growth with growthdesk (\`${url}\`). Use any, none, or your
own; the tools' arguments and behaviour stay exactly as documented in \`${url}/SKILL.md\`.

## Ideas

- **Get the picture first.** \`get_project\` for what the product is and who it is for, then
  \`get_overview\` for signups, daily users, stickiness and the review backlog.
- **Look for change, not level.** Compare \`get_daily_ops\` with \`window: "30d"\` against the
  7-day view: a rising signup line with flat daily use can mean activation trouble.
  \`compare: true\` puts the period before beside any window or \`from\`/\`to\` range; today is
  not over yet, so its counts are partial.
- **Read the quiet events.** \`get_daily_event_summary\` shows every event name; one that
  stopped firing is often a tracking break rather than a behaviour change.
- **Triage the pipeline.** \`list_opportunities\` with \`status: "pending"\` and
  \`date: "today"\`; evaluate with \`review_opportunity\` and leave a \`note\` saying why.
- **Connect the dots.** \`search_signals\` finds earlier opportunities and memories about the
  same topic before you raise a new one.
- **Keep what you learn.** \`add_memory\` for decisions and findings, tagged so that
  \`list_memories\` with \`tag\` finds them again.
`
}

export function llmsTxt(url: string, tools: ToolContract[]): string {
  return `# growthdesk

> Growth opportunities, a review pipeline, daily product metrics, a project card and memories for a project, as named tools over REST (${url}/v1) and MCP (${url}/mcp).

Authenticate with \`Authorization: Bearer <key>\`. Errors are \`{"error": {"code", "message", "details"}}\` everywhere.

## Docs

- [SKILL.md](${url}/SKILL.md): how an agent connects: addresses, keys, project selection, every tool, errors
- [Growth skill](${url}/skills/growth/SKILL.md): optional exploration ideas; never changes tool inputs
- [OpenAPI](${url}/openapi.json): every REST route with its schemas

## Tools

${tools.map((t) => `- ${t.name}: ${firstSentence(t.description)}`).join('\n')}

## Optional

- [API reference](${url}/docs): the OpenAPI description as a browsable page
`
}
