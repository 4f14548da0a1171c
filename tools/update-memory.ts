import { Type } from '@sinclair/typebox'
import { defineOperation } from '../core/operations.ts'
import { appError } from '../core/errors.ts'
import { Memory, MemoryFields, MemoryId } from '../schemas/memories.ts'
import { writableMemory } from './memory-access.ts'

export const MemoryPatch = Type.Partial(Type.Object(MemoryFields), { additionalProperties: false })

export default defineOperation({
  name: 'update_memory',
  title: 'Update a memory',
  description:
    'Change a memory by its id: `content`, `tags` (replaces the list) and/or `source`; only sent fields change. ' +
    'Returns the updated memory.',
  scope: 'workspace',
  role: 'reviewer',
  input: Type.Object({ id: MemoryId, ...MemoryPatch.properties }, { additionalProperties: false }),
  output: Memory,
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true },
  async handler(args, ctx) {
    const { id, ...change } = args
    if (Object.keys(change).length === 0) {
      throw appError('InvalidArguments', 'Send at least one of content, tags or source.', [{ path: '', message: 'must have at least one of content, tags, source' }])
    }
    await writableMemory(ctx, id)
    const memory = await ctx.repos.memories.update(id, change, ctx.now())
    if (!memory) throw appError('NotFound', `Memory '${id}' was not found.`)
    return memory
  },
})
