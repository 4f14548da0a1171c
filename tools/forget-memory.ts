import { Type } from '@sinclair/typebox'
import { defineOperation } from '../core/operations.ts'
import { appError } from '../core/errors.ts'
import { MemoryId } from '../schemas/memories.ts'
import { writableMemory } from './memory-access.ts'

export default defineOperation({
  name: 'forget_memory',
  title: 'Forget a memory',
  description:
    'Memory deletion: forget a memory by its id, for good, when it is wrong or no longer true.',
  scope: 'workspace',
  role: 'reviewer',
  input: Type.Object({ id: MemoryId }, { additionalProperties: false }),
  output: Type.Object({ id: Type.String(), deleted: Type.Literal(true) }),
  annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false },
  examples: {
    valid: [{ title: 'Forget a memory that is no longer true', args: { id: 'mem_8Gt2Kp6Vz1Hs4Wn9Bd3r' } }],
    invalid: [
      { title: 'No memory', args: {}, field: 'id' },
      { title: 'Not a memory id', args: { id: 'memory-12' }, field: 'id' },
      { title: 'A reason: it is not kept', args: { id: 'mem_8Gt2Kp6Vz1Hs4Wn9Bd3r', reason: 'outdated' }, field: 'reason' },
    ],
  },
  async handler(args, ctx) {
    await writableMemory(ctx, args.id)
    if (!(await ctx.repos.memories.remove(args.id, ctx.now()))) throw appError('NotFound', `Memory '${args.id}' was not found.`)
    return { id: args.id, deleted: true as const }
  },
})
