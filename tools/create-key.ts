// Issuing a key: the one policy for the console and the CLI (an operation, not a tool: a
// credential never mints credentials). The key acts as the caller, never above them.
import { Type } from '@sinclair/typebox'
import { defineOperation } from '../core/operations.ts'
import { appError, invalidArguments } from '../core/errors.ts'
import { roleAtLeast } from '../core/access.ts'
import { NullableTimestamp, ProjectRef, StringEnum } from '../schemas/atoms.ts'
import { issuableKinds } from '../db/keys.ts'

export default defineOperation({
  name: 'create_key',
  title: 'Create a key',
  description:
    'A new key that acts as the caller: `kind` mcp (project-side API and MCP), service (tools REST API and MCP) or ingest ' +
    '(events of one project). Optionally narrowed to one `project`, to `read_only`, or to an `expires_at`. The key is ' +
    'returned once; only its hash is stored.',
  scope: 'workspace',
  toolset: 'admin',
  role: 'viewer',
  tool: false,
  input: Type.Object({
    kind: StringEnum(issuableKinds),
    name: Type.Optional(Type.String({ maxLength: 100 })),
    project: Type.Optional(ProjectRef),
    read_only: Type.Optional(Type.Boolean()),
    expires_at: Type.Optional(Type.String({ format: 'date-time' })),
  }, { additionalProperties: false }),
  output: Type.Object({
    id: Type.String(),
    kind: StringEnum(issuableKinds),
    name: Type.String(),
    key: Type.String({ description: 'The key itself: shown this once.' }),
    display: Type.String(),
    project: Type.Union([Type.String(), Type.Null()]),
    read_only: Type.Boolean(),
    expires_at: NullableTimestamp(),
  }),
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false },
  examples: {
    valid: [
      { title: 'A read-only MCP key for an agent', args: { kind: 'mcp', name: 'Claude Desktop', read_only: true } },
      { title: 'An ingest key for one project’s website, until the end of June', args: { kind: 'ingest', name: 'Website tracking', project: 'acme-web', expires_at: '2027-06-30T00:00:00Z' } },
    ],
    invalid: [
      { title: 'A kind of key that cannot be issued', args: { kind: 'admin' }, field: 'kind' },
      { title: 'An expiry that is not a date-time', args: { kind: 'service', expires_at: 'next year' }, field: 'expires_at' },
      { title: 'An ingest key for no project', args: { kind: 'ingest', name: 'Website tracking' }, field: 'project' },
    ],
  },
  async handler(args, ctx) {
    if (ctx.principal.kind !== 'session' && ctx.principal.kind !== 'operator') {
      throw appError('Forbidden', 'Keys are made in the console or with the CLI, not with another key.')
    }
    let projectId: string | null = null
    if (args.project) {
      const project = await ctx.repos.projects.access(ctx.principal, args.project)
      if (!project) throw appError('NotFound', `No project '${args.project}'.`)
      if (args.kind === 'ingest' && !roleAtLeast(project.role, 'reviewer')) {
        throw appError('Forbidden', `An ingest key records events: it needs a project where you are reviewer or owner, and your access to '${project.slug}' is ${project.role}.`)
      }
      projectId = project.id
    } else if (args.kind === 'ingest') {
      throw invalidArguments([{ path: 'project', message: 'is required for an ingest key' }], 'An ingest key belongs to one project: choose the project.')
    }
    const { key, row } = await ctx.repos.apiKeys.create({
      workspaceId: ctx.principal.workspaceId,
      userId: ctx.principal.userId,
      kind: args.kind,
      name: (args.name ?? '').trim(),
      projectId,
      readOnly: args.read_only ?? false,
      expiresAt: args.expires_at ? new Date(args.expires_at) : null,
    })
    return {
      id: row.id,
      kind: args.kind,
      name: row.name,
      key,
      display: row.display,
      project: projectId,
      read_only: row.readOnly,
      expires_at: row.expiresAt?.toISOString() ?? null,
    }
  },
})
