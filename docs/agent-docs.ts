// The public agent documents, generated from the registry and PUBLIC_URL so that a new
// tool or another deployment address shows up without editing any text.
import type { ToolContract } from '../core/operations.ts'
import { keyKindNames, keyKinds } from '../db/keys.ts'

/** The first sentence of a description (the one-line summaries of tool lists). */
export const firstSentence = (text: string): string => (/^.*?[.!?](\s|$)/.exec(text)?.[0] ?? text).trim()

export function skillMarkdown(url: string, tools: ToolContract[]): string {
  const toolLines = tools.map((t) => `- \`${t.name}\` — ${firstSentence(t.description)}${t.annotations.readOnlyHint ? '' : ' *(writes)*'}`)
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
(\`${url}/console\`), shown once, and stored only as hashes: keep them out of chats, pages and
repositories.

${keyKinds.map((k) => `- ${keyKindNames[k]}`).join('\n')}

The tools REST API takes service keys (\`gds_\`); the project-side API takes MCP API keys
(\`gdm_\`); the MCP endpoint takes either; OAuth access tokens (\`gdo_\`) obtained by MCP clients
work everywhere. A key acts as the user who created it, never above that user's role
(viewer < reviewer < owner).

## Choosing the project

Project tools take \`project\` (the id \`prj_…\` or the slug) in the arguments, or the header
\`X-Service-Project\`. \`list_projects\` tells you which projects you can reach.

## Calling a tool

\`\`\`sh
curl -s ${url}/v1/tools -H "Authorization: Bearer $SERVICE_API_KEY"
curl -s -X POST ${url}/v1/tools/get_daily_ops \\
  -H "Authorization: Bearer $SERVICE_API_KEY" -H 'Content-Type: application/json' \\
  -d '{"project": "my-project", "window": "7d"}'
# → {"result": {...}}
\`\`\`

Over MCP, \`tools/list\` gives the same names and schemas and \`tools/call\` returns the same
result as \`structuredContent\` (and as JSON text).

## Tools

${toolLines.join('\n')}

Full contracts: \`GET ${url}/v1/tools\` (or MCP \`tools/list\`), or call \`discover_tools\`.

## Errors

Every failure has the same shape on every surface:

\`\`\`json
{"error": {"code": "invalid_arguments", "message": "Invalid arguments — status: must be one of …", "details": [{"path": "status", "message": "…"}]}}
\`\`\`

Codes: \`invalid_arguments\` 400, \`invalid_json\` 400, \`unauthorized\` 401, \`forbidden\` and
\`review_access_required\` 403, \`not_found\` 404, \`method_not_allowed\` 405, \`conflict\` 409,
\`payload_too_large\` 413, \`rate_limited\` 429, \`internal\` 500. Over MCP a failed call is a
result with \`isError: true\` whose text is this object.
`
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
