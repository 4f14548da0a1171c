// Enabling and disabling a tool for a whole workspace: the one implementation behind the
// set_tool_enabled operation (console, REST) and the CLI's `admin tools enable|disable` (bin/admin.ts).
import type { Repositories } from '../db/repositories/index.ts'

export type ToolSwitch =
  | { ok: true; disabled: string[] }
  | { ok: false; reason: 'unknown_tool' | 'unknown_workspace' }

/** Sets whether `tool` is enabled in the workspace; resolves to the workspace's disabled tools, or why not. */
export async function switchTool(
  deps: { repos: Repositories; registry: { names(): string[] } },
  input: { workspace: string; tool: string; enabled: boolean }
): Promise<ToolSwitch> {
  if (!deps.registry.names().includes(input.tool)) return { ok: false, reason: 'unknown_tool' }
  const disabled = await deps.repos.workspaces.setToolEnabled(input.workspace, input.tool, input.enabled)
  return disabled ? { ok: true, disabled } : { ok: false, reason: 'unknown_workspace' }
}
