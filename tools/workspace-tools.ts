// Workspace tool settings: which tools are enabled. Operations for the console and REST, not tools.
import { Type } from '@sinclair/typebox'
import { defineOperation, type WorkspaceContext } from '../core/operations.ts'
import { appError } from '../core/errors.ts'
import { switchTool } from '../core/tool-settings.ts'

const Settings = Type.Object({
  tools: Type.Array(Type.Object({ name: Type.String(), title: Type.String(), enabled: Type.Boolean() })),
})

async function settings(ctx: WorkspaceContext) {
  const disabled = await ctx.repos.workspaces.disabledTools(ctx.principal.workspaceId)
  const tools = ctx.registry.contracts().map((c) => ({ name: c.name, title: c.title, enabled: !disabled.includes(c.name) }))
  return { tools }
}

export const listWorkspaceTools = defineOperation({
  name: 'list_workspace_tools',
  title: 'Workspace tool settings',
  description: 'Every tool with whether it is enabled in this workspace.',
  scope: 'workspace',
  role: 'viewer',
  tool: false,
  input: Type.Object({}, { additionalProperties: false }),
  output: Settings,
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true },
  examples: {
    valid: [{ title: 'Every tool, and whether it is enabled', args: {} }],
    invalid: [{ title: 'A filter it does not take', args: { enabled: false }, field: 'enabled' }],
  },
  handler: (_args, ctx) => settings(ctx),
})

export const setToolEnabled = defineOperation({
  name: 'set_tool_enabled',
  title: 'Enable or disable a tool',
  description: 'Enable or disable one tool for the whole workspace. Workspace owners only.',
  scope: 'workspace',
  role: 'owner',
  tool: false,
  input: Type.Object({ name: Type.String({ minLength: 1, maxLength: 100 }), enabled: Type.Boolean() }, { additionalProperties: false }),
  output: Settings,
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true },
  examples: {
    valid: [
      { title: 'Disable a tool for the whole workspace', args: { name: 'create_project', enabled: false } },
      { title: 'Enable it again', args: { name: 'create_project', enabled: true } },
    ],
    invalid: [
      { title: 'No decision', args: { name: 'create_project' }, field: 'enabled' },
      { title: 'enabled as text', args: { name: 'create_project', enabled: 'off' }, field: 'enabled' },
      { title: 'An empty name', args: { name: '', enabled: false }, field: 'name' },
    ],
  },
  async handler(args, ctx) {
    const user = await ctx.repos.users.find(ctx.principal.userId)
    if (user?.workspaceRole !== 'owner' || ctx.principal.readOnly) throw appError('Forbidden', 'Only a workspace owner can enable or disable tools.')
    const result = await switchTool(ctx, { workspace: ctx.principal.workspaceId, tool: args.name, enabled: args.enabled })
    if (!result.ok && result.reason === 'unknown_tool') throw appError('NotFound', `There is no tool named '${args.name}'.`)
    if (!result.ok) throw appError('NotFound', 'Your workspace was not found.')
    return settings(ctx)
  },
})
