import { Type } from '@sinclair/typebox'
import { defineOperation } from '../core/operations.ts'

export default defineOperation({
  name: 'discover_tools',
  title: 'Discover tools',
  description:
    'The catalogue of tools enabled in this workspace: name, title, description and whether each only reads. Pass ' +
    '`query` to keep the tools whose name or description contains every word of it. Set `include_schemas` to also get ' +
    'each input schema. Use it when you are unsure which tool fits a task.',
  scope: 'workspace',
  role: 'viewer',
  input: Type.Object(
    {
      query: Type.Optional(Type.String({ minLength: 1, maxLength: 200, description: 'Words to look for in names and descriptions.' })),
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
        read_only: Type.Boolean(),
        input_schema: Type.Optional(Type.Unknown()),
      })
    ),
    total: Type.Integer(),
  }),
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true },
  async handler(args, ctx) {
    const disabled = await ctx.repos.workspaces.disabledTools(ctx.principal.workspaceId)
    const words = (args.query ?? '').toLowerCase().split(/\s+/).filter(Boolean)
    const tools = ctx.registry
      .contracts(disabled)
      .filter((c) => {
        const text = `${c.name} ${c.name.replace(/_/g, ' ')} ${c.title} ${c.description}`.toLowerCase()
        return words.every((w) => text.includes(w))
      })
      .map((c) => ({
        name: c.name,
        title: c.title,
        description: c.description,
        read_only: c.annotations.readOnlyHint,
        ...(args.include_schemas ? { input_schema: c.input_schema } : {}),
      }))
    return { tools, total: tools.length }
  },
})
