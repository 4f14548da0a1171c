// update_memory and forget_memory name a memory, not a project: the memory's project decides access.
import type { WorkspaceContext } from '../core/operations.ts'
import { appError } from '../core/errors.ts'
import { roleAtLeast } from '../core/access.ts'

export async function writableMemory(ctx: WorkspaceContext, id: string) {
  const memory = await ctx.repos.memories.find(id)
  const project = memory && (await ctx.repos.projects.access(ctx.principal, memory.project))
  if (!memory || !project) throw appError('NotFound', `Memory '${id}' was not found.`)
  if (!roleAtLeast(project.role, 'reviewer')) {
    // The same error as add_memory's (the registry's check for reviewer operations).
    throw appError('ReviewAccessRequired', `Changing memories of project '${project.slug}' needs review access; your access is ${project.role}.`)
  }
  return memory
}
