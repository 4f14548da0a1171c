import { Type } from '@sinclair/typebox'
import { defineOperation } from '../core/operations.ts'
import { words } from '../core/tool-search.ts'

export default defineOperation({
  name: 'discover_tools',
  title: 'Discover tools',
  description:
    'Tools catalogue: every growthdesk tool and its toolset, also those tools/list shows only with ?toolsets=admin or ' +
    'all (any can be called by name). `query` keeps tools matching every word; `include_schemas` adds input schemas.',
  scope: 'workspace',
  role: 'viewer',
  input: Type.Object(
    {
      query: Type.Optional(Type.String({ minLength: 1, maxLength: 200, description: 'Words to match in names and descriptions.' })),
      include_schemas: Type.Optional(Type.Boolean({ default: false })),
    },
    { additionalProperties: false }
  ),
  output: Type.Object({
    tools: Type.Array(
      Type.Object({
        name: Type.String(),
        title: Type.String(),
        description: Type.String(),
        toolset: Type.String(),
        read_only: Type.Boolean(),
        input_schema: Type.Optional(Type.Unsafe<Record<string, unknown>>({ type: 'object', additionalProperties: true, description: "The tool's input JSON Schema (with include_schemas)." })),
      })
    ),
    total: Type.Integer(),
  }),
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true },
  examples: {
    valid: [
      { title: 'Every tool enabled in the workspace', args: {} },
      { title: 'The tools about memories, with their input schemas', args: { query: 'memory', include_schemas: true } },
    ],
    invalid: [
      { title: 'An empty query', args: { query: '' }, field: 'query' },
      { title: 'include_schemas as text', args: { include_schemas: 'yes' }, field: 'include_schemas' },
      { title: 'An argument it does not take', args: { verbose: true }, field: 'verbose' },
    ],
  },
  async handler(args, ctx) {
    const wanted = words(args.query ?? '')
    const tools = (await ctx.registry.toolsFor(ctx.principal))
      .filter((c) => {
        const text = ` ${words(`${c.name} ${c.title} ${c.description}`).join(' ')} `
        return wanted.every((w) => text.includes(w))
      })
      .map((c) => ({
        name: c.name,
        title: c.title,
        description: c.description,
        toolset: c.toolset,
        read_only: c.annotations.readOnlyHint,
        ...(args.include_schemas ? { input_schema: c.input_schema } : {}),
      }))
    return { tools, total: tools.length }
  },
})
